package analyze

import (
	"slices"
	"strings"
	"testing"
)

// TestFusionChainsStopAtGEMMOps: a fusion chain never holds a kernel of an
// op that also runs a GEMM (autocast's weight casts under matmul, cuBLAS's
// workspace memset under linear, AddmmBackward0's bias reduction) nor
// AccumulateGrad's. testdata/fusion_expect.py lists, independently, the
// top-level ops each of whose calls launches a GEMM kernel. Before the fix
// amp_mlp_foreach had "add → gelu → matmul → matmul" (the matmuls were
// casts), optim_deep_narrow "layer_norm → relu → linear" (a memset) and
// ddp_host_straggler rank 0 "AddmmBackward0 → … → AccumulateGrad → …",
// multirank_fsdp rank 1 "fsdp::all_gather_copy_in → … → ViewBackward0"
// (foreach copies into the all-gather buffer, 0 B of traffic, 414 µs).
func TestFusionChainsStopAtGEMMOps(t *testing.T) {
	for name, gemmOps := range map[string][]string{
		"recorded/amp_mlp_foreach.json.gz":               {"matmul", "MmBackward0"},
		"recorded/optim_deep_narrow.json.gz":             {"linear", "AddmmBackward0"},
		"runs/ddp_host_straggler/rank0.pt.trace.json.gz": {"linear", "AddmmBackward0"},
		"runs/multirank_fsdp/rank1.pt.trace.json.gz":     {"linear", "AddmmBackward0"},
	} {
		for _, f := range run(t, name).Findings {
			if f.ID != "fusion-candidate" {
				continue
			}
			for i, row := range f.Evidence[0].Table.Rows {
				op := row[3].Text
				if slices.Contains(gemmOps, op) || strings.Contains(op, "AccumulateGrad") || row[2].Text == CategoryMemset ||
					strings.HasPrefix(op, "fsdp::") || strings.Contains(f.Evidence[0].Kernels[i], "multi_tensor_apply") {
					t.Errorf("%s: chain %q holds kernel %s (%s) of op %s, which cannot fuse", name, f.Subject, row[1].Text, row[2].Text, op)
				}
			}
		}
	}
}

// TestFusionSavingWithinTheChain: the saving of a chain is at most its span
// (GPU time plus the gaps between its kernels) minus its longest kernel,
// per occurrence. fusion_expect.py computes that bound for eggroll_hooks'
// lowrank noise chain independently: 732.1 µs per step over 5 steps. The
// launch term is at most the gaps, the traffic term at most GPU time minus
// the longest kernel.
func TestFusionSavingWithinTheChain(t *testing.T) {
	f := finding(t, run(t, "eggroll_hooks.json.gz"), "fusion-candidate")
	if f.SavingUs > 732.1 {
		t.Errorf("noise chain saves %.1f µs per step, above its span minus longest kernel (732.1 µs)", f.SavingUs)
	}
	// A chain whose GPU idles for launches draws on launch gaps, the part
	// launch-bound also claims; one whose saving is mostly kernel time on
	// kernel time. Either way it names a part.
	if f.SavingFrom != FromLaunchGaps && f.SavingFrom != FromKernelTime {
		t.Errorf("saving from %q", f.SavingFrom)
	}
}
