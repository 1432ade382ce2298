package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Layout bits of FuzzRunDir's shape byte: how the rank files of a run
// directory are laid out and what is wrong with them.
const (
	runNested    = 1 << iota // each rank in its own subdirectory (rank0/trace.json)
	runGzip                  // rank files gzipped
	runMixed                 // the last rank from another job (another world size)
	runCorrupt               // one member replaced by the fuzzer's bytes
	runSymlink               // one rank file a symlink to the real one
	runNoInfo                // no distributedInfo (ranks from file names)
	runTruncate              // one member cut short
	runStdinLike             // a non-trace file beside the ranks
)

// fuzzRank writes one rank's Kineto trace: steps, an all-reduce per step
// (with Seq), a GEMM, pipeline sends and recvs, timings nudged by jitter's bytes so the fuzzer
// moves the cross-rank matching (clock offsets, stragglers, waits).
func fuzzRank(rank, world int, info bool, jitter []byte) []byte {
	var b strings.Builder
	b.WriteString(`{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3","computeMajor":9}],`)
	if info {
		fmt.Fprintf(&b, `"distributedInfo":{"backend":"nccl","rank":%d,"world_size":%d,"pg_config":[{"pg_name":"0","pg_desc":"default_pg","pg_size":%d,"ranks":[0,1]}]},`, rank, world, world)
	}
	b.WriteString(`"traceEvents":[`)
	at := func(i int) float64 {
		if len(jitter) == 0 {
			return 0
		}
		return float64(int8(jitter[(i+rank*7)%len(jitter)])) * 3
	}
	for s := range 4 {
		base := float64(s) * 1000
		fmt.Fprintf(&b, `{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":1,"tid":1,"ts":%.1f,"dur":1000},`, s, base)
		fmt.Fprintf(&b, `{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%.1f,"dur":5,"args":{"correlation":%d}},`, base+5, 10*s+1)
		fmt.Fprintf(&b, `{"ph":"X","cat":"kernel","name":"sm90_xmma_gemm_f32","pid":0,"tid":7,"ts":%.1f,"dur":%.1f,"args":{"correlation":%d,"device":0,"stream":7}},`, base+10, 400+at(s), 10*s+1)
		fmt.Fprintf(&b, `{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":7,"ts":%.1f,"dur":%.1f,"args":{"correlation":%d,"device":0,"stream":7,"Collective name":"allreduce","In msg nelems":1048576,"Out msg nelems":1048576,"Group size":%d,"dtype":"Float","Process Group Name":"0","Process Group Ranks":"[0, 1]","Seq":%d}},`,
			base+500+at(s+1), 200+at(s+2), 10*s+2, world, s)
		fuzzPipeline(&b, rank, world, s, base+750, at)
		if s < 3 {
			b.WriteByte(',')
		}
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// fuzzPipeline writes step s's pipeline traffic of rank: a send to the
// next rank and a recv from the previous one (record_param_comms with
// Dst/Src Rank, the fuzzer's jitter moving the peer, sometimes out of the
// group or onto the rank itself), batched into one send/recv kernel
// launched inside nccl:coalesced, as torch.distributed.pipelining's 1F1B
// does.
func fuzzPipeline(b *strings.Builder, rank, world, s int, at0 float64, at func(int) float64) {
	peer := func(p int) int { return p + int(at(s+3))/150 }
	ext := 1000 + 10*s
	if rank+1 < world {
		fmt.Fprintf(b, `{"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":%.1f,"dur":2,"args":{"External id":%d,"Collective name":"send","Dst Rank":%d,"In msg nelems":4096,"Out msg nelems":4096,"dtype":"Float","Process Group Name":"0","Process Group Ranks":"[0, 1, 2, 3]","Global rank start":0,"Global rank stride":1}},`,
			at0, ext, peer(rank+1))
	}
	if rank > 0 {
		fmt.Fprintf(b, `{"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":1,"tid":1,"ts":%.1f,"dur":2,"args":{"External id":%d,"Collective name":"recv","Src Rank":%d,"In msg nelems":4096,"Out msg nelems":4096,"dtype":"Float","Process Group Name":"0","Process Group Ranks":"[0, 1, 2, 3]"}},`,
			at0+3, ext+1, peer(rank-1))
	}
	fmt.Fprintf(b, `{"ph":"X","cat":"user_annotation","name":"nccl:coalesced","pid":1,"tid":1,"ts":%.1f,"dur":20},`, at0+6)
	fmt.Fprintf(b, `{"ph":"X","cat":"cuda_driver","name":"cuLaunchKernelEx","pid":1,"tid":1,"ts":%.1f,"dur":5,"args":{"correlation":%d}},`, at0+8, 10*s+3)
	fmt.Fprintf(b, `{"ph":"X","cat":"kernel","name":"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)","pid":0,"tid":9,"ts":%.1f,"dur":%.1f,"args":{"correlation":%d,"device":0,"stream":9}}`,
		at0+20+at(s+4), 100+at(s+5), 10*s+3)
}

// writeRunDir lays a run out in dir (made here; its parent holds what a
// symlink points to) as shape says, with member as the corrupt member's
// bytes.
func writeRunDir(t *testing.T, dir string, ranks int, shape byte, member, jitter []byte) {
	t.Helper()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if shape&runNested != 0 {
			p = filepath.Join(dir, strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ".json"), "trace.json")
			if strings.HasSuffix(name, ".gz") {
				p += ".gz"
			}
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if shape&runGzip != 0 && strings.HasSuffix(name, ".gz") {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(data)
			zw.Close()
			data = z.Bytes()
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ext := ".json"
	if shape&runGzip != 0 {
		ext = ".json.gz"
	}
	var last string
	for r := range ranks {
		world := ranks
		if shape&runMixed != 0 && r == ranks-1 && ranks > 1 {
			world = ranks + 2
		}
		data := fuzzRank(r, world, shape&runNoInfo == 0, jitter)
		switch {
		case shape&runCorrupt != 0 && r == 0:
			data = member
		case shape&runTruncate != 0 && r == ranks-1:
			data = data[:len(data)*int(1+jitter0(jitter))/257]
		}
		last = write(fmt.Sprintf("rank%d%s", r, ext), data)
	}
	if shape&runSymlink != 0 {
		// The last rank a symlink to its file kept outside the run (as
		// a launcher's shared store does), and a link loop beside it.
		store := filepath.Join(filepath.Dir(dir), "store"+ext)
		if err := os.Rename(last, store); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(store, last); err != nil {
			t.Fatal(err)
		}
		loop := filepath.Join(filepath.Dir(last), "loop.json")
		if err := os.Symlink(loop, loop); err != nil {
			t.Fatal(err)
		}
	}
	if shape&runStdinLike != 0 {
		write("notes.json", member)
	}
}

// jitter0 is the first jitter byte (0 when none).
func jitter0(j []byte) byte {
	if len(j) == 0 {
		return 0
	}
	return j[0]
}

// FuzzRunDir runs tracelens on run directories the fuzzer shapes:
// 1-4 ranks, flat or nested, plain or gzipped, one rank from another
// job, a corrupt, truncated or symlinked member, a stray non-trace file,
// timings moved by the fuzzer's bytes. Whatever the directory holds,
// info, findings and report exit 0 or 2 (2 with a message, never an
// internal error), and a run of well-formed ranks of one job exits 0.
func FuzzRunDir(f *testing.F) {
	for _, s := range []struct {
		ranks, shape byte
		member       string
	}{
		{2, 0, ""},
		{4, runNested | runGzip, ""},
		{2, runMixed, ""},
		{3, runCorrupt, `{"traceEvents":[{"ph":"X","cat":"kernel","name":"\q"}]}`},
		{3, runCorrupt | runGzip, "\x1f\x8b"},
		{2, runSymlink | runNested, ""},
		{2, runNoInfo | runTruncate, ""},
		{4, runStdinLike, `{"not":"a trace"}`},
		{2, runCorrupt, "\xff\xfe{\x00\"\x00"},
	} {
		f.Add(s.ranks, s.shape, []byte(s.member), []byte{3, 250, 17, 128})
	}
	f.Fuzz(func(t *testing.T, ranks, shape byte, member, jitter []byte) {
		n := 1 + int(ranks%4)
		dir := filepath.Join(t.TempDir(), "run")
		writeRunDir(t, dir, n, shape, member, jitter)
		clean := shape&(runMixed|runCorrupt|runTruncate|runStdinLike) == 0 && n > 1
		for _, args := range [][]string{{"info", dir}, {"findings", dir}, {"report", "-o", filepath.Join(t.TempDir(), "r.md"), dir}} {
			var stdout, stderr bytes.Buffer
			code := runMain(&env{stdout: &stdout, stderr: &stderr}, args)
			msg := stderr.String()
			if strings.Contains(msg, "internal error") || code != exitOK && code != exitUsageOrBad || code == exitUsageOrBad && msg == "" {
				t.Fatalf("%v (ranks %d, shape %08b): exit %d, stderr %q", args[0], n, shape, code, msg)
			}
			if clean && code != exitOK {
				t.Fatalf("%v on %d well-formed ranks of one job (shape %08b): exit %d, stderr %q", args[0], n, shape, code, msg)
			}
		}
	})
}
