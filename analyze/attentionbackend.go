package analyze

import (
	"fmt"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of attention-backend.
const (
	// SDPAMathMinShare is the share of the steady step's GPU time that
	// scaled_dot_product_attention's math backend must take.
	SDPAMathMinShare = 0.05
	// SDPAFusedEfficiency is the share of the device's dense 16-bit
	// tensor peak a fused attention kernel (flash, memory-efficient,
	// cuDNN) is assumed to reach: the saving model's fused time.
	SDPAFusedEfficiency = 0.4
)

// sdpaMathOp is the op PyTorch records when scaled_dot_product_attention
// runs its math (unfused, materialised softmax) backend.
const sdpaMathOp = "aten::_scaled_dot_product_attention_math"

// AttentionBackend finds scaled_dot_product_attention running its slow
// math backend.
var AttentionBackend = &Analyzer{
	Name: "attention-backend",
	Doc: fmt.Sprintf("Finds scaled_dot_product_attention calls that ran the math backend (%s: Q·Kᵀ, softmax and ·V as separate "+
		"kernels over the materialised score matrix, in fp32 for 16-bit inputs) and takes at least %.0f%% of the steady step's GPU time. "+
		"From the call's recorded inputs it says which fused backends accept them (flash: fp16/bf16, head dim ≤ 256 and a multiple of 8, "+
		"no explicit mask; memory-efficient: also masks and fp32; cuDNN: fp16/bf16) and whether the code pins the backend "+
		"(sdpa_kernel calls in the Python stack). Saving model: the math path's GPU time per step less the same attention FLOPs at "+
		"%.0f%% of the device's 16-bit tensor peak.", sdpaMathOp, SDPAMathMinShare*100, SDPAFusedEfficiency*100),
	Requires: []*Analyzer{Steps, Attribution, HostTable},
	Run:      runAttentionBackend,
}

// sdpaCall is what the math backend's calls recorded about their inputs.
type sdpaCall struct {
	b, h, tq, tk, d int64
	dtype           string
	mask            bool
}

func runAttentionBackend(p *Pass) ([]Finding, error) {
	t, ix, r := p.Trace, p.ix, p.Result
	first := FirstSteady(len(t.Steps))
	steps := float64(len(t.Steps) - first)
	if len(t.Steps) == 0 || steps <= 0 {
		return nil, nil
	}
	var mathUs, allUs float64
	calls := map[trace.Index]bool{}
	// The walks up each kernel's ops read the parent and name columns.
	ops, isMath := &ix.host.ops, byName(&ix.host.ops, oneOf(sdpaMathOp))
	for g := range t.GPU {
		if st := ix.gpuStep[g]; st < int32(first) {
			continue
		}
		d := us(t.GPU[g].Dur())
		allUs += d
		if op := ops.firstIn(ix.opOf(g), isMath); op != trace.None {
			mathUs += d
			calls[op] = true
		}
	}
	if allUs == 0 || mathUs < SDPAMathMinShare*allUs {
		return nil, nil
	}
	var call sdpaCall
	var flops float64
	for op := range calls {
		c := sdpaInputs(t, op)
		call = c
		flops += 4 * float64(c.b*c.h*c.tq*c.tk*c.d)
	}
	fused := 0.0
	if pk := PeakFor(r.Device); pk != nil && pk.TFLOPS["bf16"] > 0 {
		fused = flops / steps / (SDPAFusedEfficiency * pk.TFLOPS["bf16"] * 1e12) * 1e6
	}
	return []Finding{sdpaFinding(t, call, mathUs/steps, fused, allUs/steps, float64(len(calls))/steps, r.StepStats.SteadyWallUs)}, nil
}

// sdpaInputs reads a math-backend call's query, key and mask shapes and
// dtype from its recorded inputs (query [B, H, Tq, D], key [B, H, Tk, D],
// attn_mask fourth).
func sdpaInputs(t *trace.Trace, op trace.Index) sdpaCall {
	dims, types := parseDims(t.Ops[op].InputDims), parseTypes(t.Ops[op].InputTypes)
	var c sdpaCall
	if len(dims) >= 2 && len(dims[0]) == 4 && len(dims[1]) == 4 {
		c.b, c.h, c.tq, c.d, c.tk = dims[0][0], dims[0][1], dims[0][2], dims[0][3], dims[1][2]
	}
	c.mask = len(dims) >= 4 && len(dims[3]) > 0
	if len(types) > 0 {
		c.dtype = types[0]
	}
	return c
}

// sdpaBackends lists the fused backends that accept a call's inputs.
func sdpaBackends(c sdpaCall) []string {
	half := strings.Contains(c.dtype, "Half") || strings.Contains(c.dtype, "BFloat16")
	var ok []string
	if half && c.d > 0 && c.d <= 256 && c.d%8 == 0 && !c.mask {
		ok = append(ok, "FLASH_ATTENTION")
	}
	if c.d%8 == 0 && (half || strings.Contains(c.dtype, "float")) {
		ok = append(ok, "EFFICIENT_ATTENTION")
	}
	if half && c.d > 0 && c.d <= 128 {
		ok = append(ok, "CUDNN_ATTENTION")
	}
	return ok
}

// pinsBackend reports whether the Python stack shows the code choosing
// SDPA backends itself (torch.nn.attention.sdpa_kernel, the
// torch.backends.cuda.enable_*_sdp switches).
func pinsBackend(t *trace.Trace) string {
	for i := range t.Frames {
		n := t.Frames[i].Name
		for _, s := range []string{": sdpa_kernel", "enable_flash_sdp", "enable_math_sdp", "enable_mem_efficient_sdp", "enable_cudnn_sdp"} {
			if strings.Contains(n, s) {
				return strings.TrimPrefix(s, ": ")
			}
		}
	}
	return ""
}

// sdpaFinding builds attention-backend's finding.
func sdpaFinding(t *trace.Trace, c sdpaCall, math, fused, all, perStep, step float64) Finding {
	ok := sdpaBackends(c)
	accepted := "none of the fused backends accepts these inputs as recorded"
	if len(ok) > 0 {
		accepted = strings.Join(ok, ", ") + " accept" + map[bool]string{true: "s", false: ""}[len(ok) == 1] + " these inputs"
	}
	pinned := pinsBackend(t)
	fix := "let scaled_dot_product_attention choose a fused backend: "
	if pinned != "" {
		fix = fmt.Sprintf("the code pins the backend (%s in the Python stack): ", pinned)
	}
	want := "SDPBackend.EFFICIENT_ATTENTION"
	if len(ok) > 0 {
		want = "SDPBackend." + ok[0]
	}
	fix += fmt.Sprintf("run it under sdpa_kernel([%s]) (or drop the sdpa_kernel(SDPBackend.MATH) context and any "+
		"torch.backends.cuda.enable_flash_sdp(False)/enable_mem_efficient_sdp(False)), which never materialises the score matrix", want)
	saving := max(math-fused, 0)
	shape := fmt.Sprintf("query [%d, %d, %d, %d], key length %d, %s", c.b, c.h, c.tq, c.d, c.tk, strings.TrimPrefix(c.dtype, "c10::"))
	if c.mask {
		shape += ", explicit attn_mask"
	}
	title := fmt.Sprintf("SDPA runs the math backend: %.0f%% of GPU time (%s per step)", math/all*100, fmtUs(math))
	if len(ok) > 0 {
		title += "; " + strings.ToLower(strings.TrimSuffix(ok[0], "_ATTENTION")) + " would accept its inputs"
	}
	return Finding{
		Title:      title,
		Subject:    "scaled_dot_product_attention backend",
		Severity:   severityByShare(saving / max(step, all)),
		SavingUs:   saving,
		SavingFrom: FromKernelTime,
		Measures: []Measure{
			{"math backend GPU time per step", DurUs(math)},
			{"calls per step", Count(perStep)},
			{"fused estimate per step", DurUs(fused)},
		},
		Evidence: []Evidence{
			{Text: fmt.Sprintf("%s ran %s times per step taking %s of GPU time (%.0f%% of the step's kernel time): %s",
				sdpaMathOp, FormatCount(perStep), fmtUs(math), math/all*100, shape)},
			{Text: "fused backends that accept these inputs: " + accepted},
			{Text: fmt.Sprintf("saving model: the math path's %s per step less the same attention FLOPs at %.0f%% of the 16-bit tensor peak (%s)",
				fmtUs(math), SDPAFusedEfficiency*100, fmtUs(fused))},
		},
		Fix:        fix,
		Confidence: High,
	}
}
