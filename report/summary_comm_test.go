package report

import (
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/ingest"
)

// TestCommunicationIsNotTheBottleneck: a rank whose NCCL kernels spin
// while it waits for the other rank is not "GPU bound". The summary quotes
// the compute share instead of GPU busy; testdata/compute_share.py computes
// it independently (median over steps after the first of the union of
// non-NCCL kernels the step launched over its window, as analyze defines a
// step): ddp_host_straggler rank 0 0.553 (busy 0.925), ddp_compute_straggler
// rank 0 0.403, multirank_fsdp rank 1 0.588, all waiting ranks;
// multirank_ddp rank 0 (balanced) 0.928.
func TestCommunicationIsNotTheBottleneck(t *testing.T) {
	for _, c := range []struct {
		name       string
		compute    float64
		bottleneck bool
	}{
		{"ddp_host_straggler/rank0", 0.553, false},
		{"ddp_compute_straggler/rank0", 0.403, false},
		{"multirank_fsdp/rank1", 0.588, false},
		{"multirank_ddp/rank0", 0.928, true},
	} {
		tr, err := ingest.ReadFile(filepath.Join("..", "fixtures", "runs", c.name+".pt.trace.json.gz"), ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := analyze.Run(tr, analyze.Config{})
		if err != nil {
			t.Fatal(err)
		}
		md := markdown(t, Input{Trace: tr, Result: r})
		summary := md[strings.Index(md, "## Executive summary"):]
		summary = summary[:strings.Index(summary[3:], "\n## ")+3]
		m := regexp.MustCompile(`GPU computes ([0-9.]+)% of each step`).FindStringSubmatch(summary)
		if m == nil {
			t.Errorf("%s: no compute share in the summary:\n%s", c.name, summary)
			continue
		}
		got, _ := strconv.ParseFloat(m[1], 64)
		if math.Abs(got/100-c.compute) > 0.03 {
			t.Errorf("%s: compute %s%%, want %.1f%% ± 3 (compute_share.py)", c.name, m[1], c.compute*100)
		}
		if says := strings.Contains(summary, "the GPU is the bottleneck"); says != c.bottleneck {
			t.Errorf("%s: says the GPU is the bottleneck: %v, want %v\n%s", c.name, says, c.bottleneck, summary)
		}
		if strings.Contains(summary, ".item()") {
			t.Errorf("%s: a rank waiting on a collective is told to remove .item():\n%s", c.name, summary)
		}
	}
}
