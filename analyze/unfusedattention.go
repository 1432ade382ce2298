package analyze

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracelens/tracelens/trace"
)

// Thresholds of unfused-attention.
const (
	// AttentionWindow is how many kernels before and after a softmax the
	// two attention matmuls may be (scale, mask, dtype casts sit between).
	AttentionWindow = 10
	// AttentionMinShare is the smallest saving, as a share of the median
	// step, worth a finding: low, because the pattern itself is the
	// evidence and its cost grows with sequence length (quadratically),
	// which a short profiling run often understates.
	AttentionMinShare = 0.001
)

// UnfusedAttention finds attention written as matmul → softmax → matmul.
var UnfusedAttention = &Analyzer{
	Name: "unfused-attention",
	Doc: fmt.Sprintf("Finds forward softmax kernels (aten::softmax/_softmax, not log_softmax) with a batched matmul (aten::matmul/bmm) "+
		"among the %d kernels before and after on the same stream: attention computed as Q·Kᵀ → scale/mask → softmax → ·V, which "+
		"writes the full score matrix to memory and reads it back several times. Reported when the saving is at least %.0f%% of "+
		"the median step. Saving model: the GPU time and launches (at the median launch API time) of the kernels between the two "+
		"matmuls (scale, mask, casts, softmax) per step, which a fused attention kernel (FlashAttention via "+
		"scaled_dot_product_attention) does not run. Softmax inside scaled_dot_product_attention's math backend is attention-backend's.",
		AttentionWindow, AttentionMinShare*100),
	Requires: []*Analyzer{KernelCategories, Attribution, HostTable},
	Run:      runUnfusedAttention,
}

// opPathHas reports whether op i or one of its parents has a name whose
// number marks names (byName of oneOf the names).
func (ix *index) opPathHas(i trace.Index, names []bool) bool {
	return ix.host.ops.firstIn(i, names) != trace.None
}

func runUnfusedAttention(p *Pass) ([]Finding, error) {
	t, ix := p.Trace, p.ix
	var occurrences, launches int
	var between trace.Duration
	var names, lines []string
	var softmaxKernel string
	ops := &ix.host.ops
	softmax, notAttention := byName(ops, oneOf("aten::softmax", "aten::_softmax")), byName(ops, oneOf("aten::log_softmax", "aten::_log_softmax", sdpaMathOp))
	matmul := byName(ops, oneOf("aten::matmul", "aten::bmm", "aten::baddbmm", "aten::einsum"))
	for g := range t.GPU {
		if t.GPU[g].Kind != trace.Kernel || !ix.opPathHas(ix.opOf(g), softmax) || ix.opPathHas(ix.opOf(g), notAttention) {
			// scaled_dot_product_attention's math backend is already SDPA:
			// attention-backend says which backend to run instead.
			continue
		}
		before, after := ix.matmulsAround(g, matmul)
		if before < 0 || after < 0 {
			continue
		}
		occurrences++
		for j := before + 1; j < after; j++ {
			between += t.GPU[j].Dur()
			launches++
			if t.GPU[j].Name != "" && !slices.Contains(names, t.GPU[j].Name) {
				names = append(names, t.GPU[j].Name)
			}
		}
		softmaxKernel = t.GPU[g].Name
		if l := ix.userFuncs([]int{g}); len(l) > 0 && !slices.Contains(lines, l[0]) {
			lines = append(lines, l[0])
		}
	}
	if occurrences == 0 {
		return nil, nil
	}
	steps := float64(max(p.Result.StepStats.Count, 1))
	launchUs := float64(launches) * p.Result.Launches.MedianAPIUs / steps
	saving := us(between)/steps + launchUs
	if saving < AttentionMinShare*p.Result.StepStats.MedianWallUsNoFirst {
		return nil, nil
	}
	where := strings.Join(lines, ", ")
	if where == "" {
		where = "the attention code"
	}
	short := make([]string, 0, len(names))
	for _, n := range names {
		short = append(short, ShortKernelName(n))
	}
	return []Finding{{
		Title: fmt.Sprintf("attention unfused: matmul → softmax → matmul %d times (%.0f per step), %s per step in between",
			occurrences, float64(occurrences)/steps, fmtUs(saving)),
		Subject:    "attention " + ShortKernelName(softmaxKernel),
		Severity:   severityByShare(p.shareOfStep(saving)),
		SavingUs:   saving,
		SavingFrom: FromKernelTime,
		Measures: []Measure{
			{"occurrences", Count(float64(occurrences))},
			{"GPU time between the matmuls", Dur(between)},
			{"launches between the matmuls", Count(float64(launches))},
		},
		Evidence: []Evidence{
			{Text: fmt.Sprintf("softmax kernel %s runs between two batched matmuls on the same stream, in %s", ShortKernelName(softmaxKernel), where),
				Kernels: append([]string{softmaxKernel}, names...)},
			{Text: "kernels between the two matmuls (they materialise the score matrix): " + strings.Join(short, ", ")},
			{Text: fmt.Sprintf("saving model: GPU time (%s) plus launches (%d × %s median launch API time) of the kernels between the two matmuls, per step; a fused attention kernel runs none of them (its matmuls also get faster, and the backward pass too: not counted)",
				between, launches, fmtUs(p.Result.Launches.MedianAPIUs))},
		},
		Fix: fmt.Sprintf("replace the hand-written attention in %s with torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=..., is_causal=...), "+
			"which dispatches to FlashAttention / memory-efficient kernels and never materialises the score matrix", where),
		Confidence: High,
		launchUs:   launchUs,
	}}, nil
}

// matmulsAround returns the nearest batched matmul kernels before and
// after GPU activity g on its stream, within AttentionWindow kernels (-1
// where there is none): the Q·Kᵀ and ·V of an attention around a softmax
// (matmul marks the batched matmul ops by name number).
func (ix *index) matmulsAround(g int, matmul []bool) (before, after int) {
	t := ix.t
	isMatmul := func(g int) bool {
		return t.GPU[g].Kind == trace.Kernel && (ix.category(g) == CategoryGEMM || ix.category(g) == CategoryGEMV) &&
			ix.opPathHas(ix.opOf(g), matmul)
	}
	sameStream := func(a, b int) bool {
		return t.GPU[a].Device == t.GPU[b].Device && t.GPU[a].Stream == t.GPU[b].Stream
	}
	before, after = -1, -1
	for j := g - 1; j >= 0 && j >= g-AttentionWindow && sameStream(g, j); j-- {
		if isMatmul(j) {
			before = j
			break
		}
	}
	for j := g + 1; j < len(t.GPU) && j <= g+AttentionWindow && sameStream(g, j); j++ {
		if isMatmul(j) {
			after = j
			break
		}
	}
	return before, after
}
