package analyze

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tracelens/tracelens/ingest"
)

// diagExpected is one trace's entry of fixtures/recorded/expect/
// diag_expected.json, written by diag_expect.py (stdlib Python over the
// trace JSON, independent of tracelens).
type diagExpected struct {
	Kernels                 int     `json:"kernels"`
	AttentionUs             float64 `json:"attention_us"`
	AttentionKernels        int     `json:"attention_kernels"`
	NCCLUs                  float64 `json:"nccl_us"`
	NCCLKernels             int     `json:"nccl_kernels"`
	MultiTensorApplyKernels int     `json:"multi_tensor_apply_kernels"`
	AutotuneKernels         int     `json:"autotune_kernels"`
	AutotuneUs              float64 `json:"autotune_us"`
	DerivedSteps            *struct {
		Label        string  `json:"label"`
		Count        int     `json:"count"`
		FirstUs      float64 `json:"first_us"`
		MedianRestUs float64 `json:"median_rest_us"`
	} `json:"derived_steps"`
	AMPCast *struct {
		Casts float64 `json:"median_rest_casts"`
		Us    float64 `json:"median_rest_us"`
	} `json:"amp_cast"`
	GEMMEpilogue *struct {
		GEMMs float64 `json:"median_rest_gemms"`
		Us    float64 `json:"median_rest_us"`
	} `json:"gemm_epilogue"`
	Roofline map[string]struct {
		FLOPs    float64 `json:"flops"`
		KernelUs float64 `json:"kernel_us"`
		Calls    int     `json:"calls"`
	} `json:"roofline"`
	HostSync *struct {
		Syncs     int     `json:"syncs"`
		BlockedUs float64 `json:"blocked_gpu_idle_us_per_step"`
		// SyncCostUs adds the GPU's refill after each sync: host-sync's
		// saving.
		SyncCostUs float64 `json:"sync_cost_us_per_step"`
	} `json:"host_sync"`
	CommunicationBusyUs float64 `json:"communication_busy_us"`
	ComputeBusyUs       float64 `json:"compute_busy_us"`
	MedianLongGapIdleUs float64 `json:"median_long_gap_idle_us"`
	MedianWallRestUs    float64 `json:"median_wall_rest_us"`
	Phases              []struct {
		Step        int     `json:"step"`
		ForwardUs   float64 `json:"forward_us"`
		BackwardUs  float64 `json:"backward_us"`
		OptimizerUs float64 `json:"optimizer_us"`
	} `json:"phases"`
}

var (
	diagOnce sync.Once
	diagExp  map[string]diagExpected
	diagErr  error
)

// expected returns the independently computed figures for fixture name
// ("recorded/transformer_sdpa.json.gz").
func expected(t *testing.T, name string) diagExpected {
	t.Helper()
	diagOnce.Do(func() {
		b, err := os.ReadFile(filepath.Join("..", "fixtures", "recorded", "expect", "diag_expected.json"))
		if err != nil {
			diagErr = err
			return
		}
		diagErr = json.Unmarshal(b, &diagExp)
	})
	if diagErr != nil {
		t.Fatalf("diag_expected.json: %v", diagErr)
	}
	e, ok := diagExp[name]
	if !ok {
		t.Fatalf("diag_expected.json has no entry for %s (run fixtures/recorded/expect/diag_expect.py)", name)
	}
	return e
}

// near reports whether got is within 0.1% (or 0.01 µs) of want.
func near(got, want float64) bool {
	return math.Abs(got-want) <= max(1e-3*math.Abs(want), 0.01)
}

// TestCategoriesOnRealTraces: ATen's own kernels are never "custom",
// cuDNN's SDPA helpers are attention, and the categories partition the
// kernels.
func TestCategoriesOnRealTraces(t *testing.T) {
	for _, name := range []string{"recorded/transformer_sdpa.json.gz", "recorded/transformer_naive_attn.json.gz",
		"recorded/train_sync_pageable.json.gz", "nanobragg_compile.json.gz"} {
		t.Run(name, func(t *testing.T) {
			r := run(t, name)
			e := expected(t, name)
			var attn float64
			var attnN, mta, all int
			for _, k := range r.Kernels {
				all += k.Count
				if k.Category == CategoryAttention {
					attn += k.TotalUs
					attnN += k.Count
				}
				if strings.Contains(k.Name, "at::native") && k.Category == CategoryCustom {
					t.Errorf("ATen kernel %s is custom", k.ShortName)
				}
				if strings.Contains(k.Name, "multi_tensor_apply_kernel") {
					mta += k.Count
					if k.Category != CategoryElementwise {
						t.Errorf("%s: category %s, want elementwise", k.ShortName, k.Category)
					}
				}
				if strings.Contains(k.Name, "GammaBetaBackward") && k.Category != CategoryReduction {
					t.Errorf("%s: category %s, want reduction", k.ShortName, k.Category)
				}
			}
			if all != e.Kernels || mta != e.MultiTensorApplyKernels {
				t.Errorf("%d kernels, %d multi_tensor_apply; want %d, %d", all, mta, e.Kernels, e.MultiTensorApplyKernels)
			}
			if attnN != e.AttentionKernels || !near(attn, e.AttentionUs) {
				t.Errorf("attention: %d kernels %.3f µs, want %d %.3f µs", attnN, attn, e.AttentionKernels, e.AttentionUs)
			}
		})
	}
}

// TestCategoryByKernelNameNotArguments: a kernel's parameter types
// (FBGEMM's embedding kernels take an at::PhiloxCudaState) do not make it
// RNG; NCCL and RCCL kernels are communication in any case.
func TestCategoryByKernelNameNotArguments(t *testing.T) {
	for name, want := range map[string]string{
		"void fbgemm_gpu::split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 32, 8>(at::PhiloxCudaState, long const*)":                CategoryCopy,
		"void fbgemm_gpu::batch_index_select_dim0_codegen_forward_kernel<float, float, long, 32>(pta::PackedTensorAccessor64<float, 1ul>, at::PhiloxCudaState)": CategoryCopy,
		"ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)":                                                                                                   CategoryCommunication,
		"NCCLDEVKERNEL_ALLREDUCE_SUM_BF16_RING_LL(ncclDevKernelArgsStorage<4096ul>)":                                                                              CategoryCommunication,
		"void rcclGenericKernel<1, false>(ncclDevComm*, unsigned long, ncclWork*)":                                                                                CategoryCommunication,
		"void cudnn::fusion::compute_dot_do_o_specialized<true, 64>(void const*, void const*, void*)":                                                             CategoryAttention,
		"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float, float, 32u, 32u, 256u, false, true, false>(long, long, float const*)": CategoryReduction,
	} {
		if got := Category(name); got != want {
			t.Errorf("Category(%.70q) = %s, want %s", name, got, want)
		}
	}
}

// TestAutotuneLabelled: the kernels Inductor's autotuner launched while
// compiling are labelled and ranked after the workload's.
func TestAutotuneLabelled(t *testing.T) {
	name := "nanobragg_compile.json.gz"
	tr := load(t, name)
	e := expected(t, name)
	rows, _ := KernelTable(tr)
	var n int
	var total float64
	seenTune := false
	for _, row := range rows {
		if row.Autotune {
			seenTune = true
			n += row.Count
			total += row.Total.Micros()
		} else if seenTune {
			t.Errorf("workload kernel %s ranked after autotune rows", ShortKernelName(row.Name))
		}
	}
	if n != e.AutotuneKernels || !near(total, e.AutotuneUs) {
		t.Errorf("autotune: %d kernels %.3f µs, want %d %.3f µs", n, total, e.AutotuneKernels, e.AutotuneUs)
	}
	if e.AutotuneKernels == 0 {
		t.Fatal("fixture has no autotune kernels: the test would prove nothing")
	}
	b, err := json.Marshal(rows[len(rows)-1].Timing())
	if err != nil || !strings.Contains(string(b), `"autotune":true`) {
		t.Errorf("JSON of an autotune row: %s (%v)", b, err)
	}
	for _, name := range []string{"recorded/transformer_sdpa.json.gz", "recorded/sincos_eager.json.gz"} {
		rows, _ := KernelTable(load(t, name))
		for _, row := range rows {
			if row.Autotune {
				t.Errorf("%s: eager kernel %s labelled autotune", name, ShortKernelName(row.Name))
			}
		}
	}
}

// TestPhasesPerStep: kernel time per step splits into forward, backward
// (launched from autograd's thread) and optimizer as the independent
// script finds it; backward is not invisible.
func TestPhasesPerStep(t *testing.T) {
	for _, name := range []string{"recorded/transformer_sdpa.json.gz", "recorded/transformer_naive_attn.json.gz",
		"recorded/train_sync_pageable.json.gz", "recorded/train_pinned_async.json.gz", "recorded/sincos_eager.json.gz"} {
		t.Run(name, func(t *testing.T) {
			r := run(t, name)
			e := expected(t, name)
			if len(e.Phases) != len(r.Steps) {
				t.Fatalf("%d steps, want %d", len(r.Steps), len(e.Phases))
			}
			for i, want := range e.Phases {
				s := r.Steps[i]
				if s.Number != want.Step || !near(s.ForwardUs, want.ForwardUs) || !near(s.BackwardUs, want.BackwardUs) || !near(s.OptimizerUs, want.OptimizerUs) {
					t.Errorf("step %d: fwd %.3f bwd %.3f opt %.3f; want step %d: %.3f %.3f %.3f", s.Number, s.ForwardUs, s.BackwardUs, s.OptimizerUs,
						want.Step, want.ForwardUs, want.BackwardUs, want.OptimizerUs)
				}
				if sum := s.ForwardUs + s.BackwardUs + s.OptimizerUs; !near(sum, s.KernelUs) {
					t.Errorf("step %d: phases sum to %.3f, kernel time %.3f", s.Number, sum, s.KernelUs)
				}
			}
			training := strings.HasPrefix(name, "recorded/t")
			if ss := r.StepStats; training && (ss.MedianBackwardUs <= ss.MedianForwardUs || ss.MedianOptimizerUs <= 0) {
				t.Errorf("training step: median fwd %.1f bwd %.1f opt %.1f µs; backward must outweigh forward", ss.MedianForwardUs, ss.MedianBackwardUs, ss.MedianOptimizerUs)
			} else if !training && (ss.MedianBackwardUs != 0 || ss.MedianOptimizerUs != 0) {
				t.Errorf("inference: backward %.1f optimizer %.1f µs", ss.MedianBackwardUs, ss.MedianOptimizerUs)
			}
		})
	}
}

// TestAMPCastAndEpilogue: under bf16 autocast with fp32 weights, every
// step re-casts the weights and runs bias/activation as kernels of their
// own after the GEMMs; fp32 training does neither.
func TestAMPCastAndEpilogue(t *testing.T) {
	for _, name := range []string{"recorded/amp_mlp_foreach.json.gz", "recorded/amp_mlp_fused.json.gz", "recorded/amp_gpt_foreach.json.gz",
		"recorded/amp_gpt_fused.json.gz"} {
		t.Run(name, func(t *testing.T) {
			r := run(t, name)
			e := expected(t, name)
			c, ep := findingOf(r, "amp-cast"), findingOf(r, "gemm-epilogue")
			if c == nil || ep == nil || e.AMPCast == nil || e.GEMMEpilogue == nil {
				t.Fatalf("amp-cast %v gemm-epilogue %v (expected values present: %v)", c != nil, ep != nil, e.AMPCast != nil)
			}
			if !near(c.GPUSavingUs, e.AMPCast.Us) || !strings.HasPrefix(c.Title, fmt.Sprintf("%.0f ", e.AMPCast.Casts)) {
				t.Errorf("amp-cast %q saving %.2f µs; want %.0f casts, %.2f µs", c.Title, c.GPUSavingUs, e.AMPCast.Casts, e.AMPCast.Us)
			}
			if !near(ep.GPUSavingUs, e.GEMMEpilogue.Us) || !strings.HasPrefix(ep.Title, fmt.Sprintf("%.0f ", e.GEMMEpilogue.GEMMs)) {
				t.Errorf("gemm-epilogue %q saving %.2f µs; want %.0f GEMMs, %.2f µs", ep.Title, ep.GPUSavingUs, e.GEMMEpilogue.GEMMs, e.GEMMEpilogue.Us)
			}
			if !strings.Contains(c.Fix, "bfloat16") || !strings.Contains(ep.Fix, "addmm") || !strings.Contains(ep.Fix, "torch.compile") {
				t.Errorf("fixes: %q / %q", c.Fix, ep.Fix)
			}
		})
	}
	for _, name := range []string{"recorded/opts_gpt_plain.json.gz", "recorded/train_sync_pageable.json.gz", "recorded/cudagraph_mlp_infer.json.gz",
		"recorded/fp64_simulation.json.gz"} {
		r := run(t, name)
		for _, id := range []string{"amp-cast", "gemm-epilogue"} {
			if f := findingOf(r, id); f != nil {
				t.Errorf("%s: %s fired: %s", name, id, f.Title)
			}
		}
	}
}

// TestRooflineAttribution: FLOPs belong to the GEMM kernel, computed from
// the launching op's shapes; the casts and bias adds an outer op also
// launches do not dilute the rate; the roof is the kernel's dtype on the
// device's datasheet peak.
func TestRooflineAttribution(t *testing.T) {
	for _, name := range []string{"recorded/amp_mlp_foreach.json.gz", "recorded/amp_gpt_foreach.json.gz", "recorded/transformer_sdpa.json.gz",
		"recorded/opts_gpt_plain.json.gz", "fusedlinear_cublas.json.gz"} {
		t.Run(name, func(t *testing.T) {
			r := run(t, name)
			e := expected(t, name)
			type agg struct{ flops, us float64 }
			got := map[string]*agg{}
			lowPrecision := strings.HasPrefix(name, "recorded/amp_") || strings.HasPrefix(name, "recorded/transformer_")
			for _, row := range r.Roofline {
				if c := Category(row.Kernel); c != CategoryGEMM && c != CategoryAttention {
					t.Errorf("row %s %s measured on a %s kernel %s", row.Op, row.Shape, c, ShortKernelName(row.Kernel))
				}
				if row.TFLOPS > row.PeakTFLOPS || row.PeakSource == "" || !strings.Contains(row.PeakSource, "H100") {
					t.Errorf("row %s: %.1f TFLOP/s over a %.1f roof (%s)", row.Op, row.TFLOPS, row.PeakTFLOPS, row.PeakSource)
				}
				if Category(row.Kernel) == CategoryGEMM && lowPrecision != (row.DType == "bf16") {
					t.Errorf("row %s on %s: dtype %s", row.Op, ShortKernelName(row.Kernel), row.DType)
				}
				if Category(row.Kernel) != CategoryGEMM {
					continue
				}
				k := row.Op + "|" + row.Kernel
				if got[k] == nil {
					got[k] = &agg{}
				}
				got[k].flops += row.FLOPs * float64(row.Calls)
				got[k].us += row.MeanUs * float64(row.Calls)
			}
			if len(e.Roofline) == 0 {
				t.Fatal("no expected rows")
			}
			for k, want := range e.Roofline {
				g := got[k]
				if g == nil {
					t.Errorf("no row for %.90s", k)
					continue
				}
				if !near(g.flops, want.FLOPs) || !near(g.us, want.KernelUs) {
					t.Errorf("%.60s: %.4g FLOP in %.2f µs, want %.4g in %.2f µs", k, g.flops, g.us, want.FLOPs, want.KernelUs)
				}
			}
		})
	}
	if p := PeakFor("AMD Instinct MI300X"); p == nil || p.TFLOPS["bf16"] <= 0 || p.Source == "" {
		t.Error("MI300X missing from the peak table")
	}
	for _, d := range []string{"NVIDIA A100-SXM4-80GB", "NVIDIA H100 PCIe", "NVIDIA H200", "NVIDIA B200", "NVIDIA L4"} {
		if p := PeakFor(d); p == nil || p.TFLOPS["fp32"] <= 0 || p.GBps <= 0 {
			t.Errorf("%s missing from the peak table", d)
		}
	}
	if PeakFor("NVIDIA H100 PCIe").Device != "H100 PCIe" || PeakFor("NVIDIA L40S").Device != "L40S" {
		t.Error("a general entry shadows a specific one")
	}
}

// TestCommunicationApart: NCCL kernels are the "communication" category
// and GPU busy is split into compute and communication unions.
func TestCommunicationApart(t *testing.T) {
	for _, name := range []string{"runs/ddp_host_straggler/rank1.pt.trace.json.gz", "runs/multirank_fsdp/rank1.pt.trace.json.gz"} {
		t.Run(name, func(t *testing.T) {
			tr, err := ingest.ReadFile(filepath.Join("..", "fixtures", name), ingest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(tr, Config{})
			if err != nil {
				t.Fatal(err)
			}
			e := expected(t, name)
			n := 0
			for _, k := range r.Kernels {
				if k.Category == CategoryCommunication {
					n += k.Count
				}
			}
			if n != e.NCCLKernels || e.NCCLKernels == 0 {
				t.Errorf("%d communication kernels, want %d", n, e.NCCLKernels)
			}
			s := r.Summary
			if !near(s.CommunicationUs, e.CommunicationBusyUs) || !near(s.ComputeBusyUs, e.ComputeBusyUs) {
				t.Errorf("busy: compute %.1f communication %.1f µs, want %.1f %.1f", s.ComputeBusyUs, s.CommunicationUs, e.ComputeBusyUs, e.CommunicationBusyUs)
			}
		})
	}
}

// TestHostSyncBlame: host-sync counts a sync's blocked time only while the
// GPU idled, plus the GPU's idle refill after it (at most the GPU work the
// sync waited for), and never blames DistributedDataParallel's own syncs (no user
// op or line) or waits on a collective.
func TestHostSyncBlame(t *testing.T) {
	for _, name := range []string{"recorded/train_sync_pageable.json.gz", "recorded/dataloader_mlp.json.gz", "recorded/dataloader_cnn.json.gz"} {
		t.Run(name, func(t *testing.T) {
			r := run(t, name)
			e := expected(t, name)
			f := findingOf(r, "host-sync")
			if f == nil || e.HostSync == nil {
				t.Fatalf("host-sync %v, expected values %v", f != nil, e.HostSync != nil)
			}
			if !near(f.SavingUs, e.HostSync.SyncCostUs) || e.HostSync.SyncCostUs < e.HostSync.BlockedUs {
				t.Errorf("blocked while the GPU idled, plus the refill after: %.2f µs per step, want %.2f (blocked %.2f)", f.SavingUs, e.HostSync.SyncCostUs, e.HostSync.BlockedUs)
			}
			if r.Findings[0].ID == "host-sync" {
				t.Errorf("host-sync ranks first: %v", ids(r))
			}
		})
	}
	for _, name := range []string{"runs/multirank_ddp/rank0.pt.trace.json.gz", "runs/multirank_ddp/rank1.pt.trace.json.gz",
		"runs/ddp_host_straggler/rank0.pt.trace.json.gz", "runs/ddp_host_straggler/rank1.pt.trace.json.gz",
		"runs/ddp_compute_straggler/rank0.pt.trace.json.gz", "runs/ddp_compute_straggler/rank1.pt.trace.json.gz"} {
		tr, err := ingest.ReadFile(filepath.Join("..", "fixtures", name), ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(tr, Config{})
		if err != nil {
			t.Fatal(err)
		}
		if f := findingOf(r, "host-sync"); f != nil {
			t.Errorf("%s: host-sync blames DDP's own syncs: %s", name, f.Title)
		}
	}
}

// TestCustomGEMMNeedsLaunchEvidence: the same real hand-written GEMM is
// reported when the trace records its launch (no shared memory) and not
// when the launch arguments are missing (grid [0 0 0], as ROCm and graph
// replays write): missing is not zero.
func TestCustomGEMMNeedsLaunchEvidence(t *testing.T) {
	for _, name := range []string{"fusedlinear_naive.json.gz", "capture/gemm-naive.json.gz"} {
		t.Run(name, func(t *testing.T) {
			tr := load(t, name)
			r := run(t, name)
			f := findingOf(r, "custom-gemm")
			if f == nil || f.Confidence != High {
				t.Fatalf("custom-gemm with recorded launch arguments: %v", ids(r))
			}
			bare := *tr
			bare.GPU = slices.Clone(tr.GPU)
			for i := range bare.GPU {
				bare.GPU[i].Grid, bare.GPU[i].Block, bare.GPU[i].SharedMem, bare.GPU[i].Registers = [3]int32{}, [3]int32{}, 0, 0
			}
			rb, err := Run(&bare, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if g := findingOf(rb, "custom-gemm"); g != nil {
				t.Errorf("custom-gemm without launch arguments: %s", g.Title)
			}
		})
	}
	for _, k := range []string{"Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_APM1_ABV0", "hipblasltKernel_gemm"} {
		if !LibraryKernel(k) || Category(k) != CategoryGEMM {
			t.Errorf("%s: library %v category %s", k, LibraryKernel(k), Category(k))
		}
	}
}
