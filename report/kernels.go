package report

import (
	"fmt"
	"strings"

	"github.com/tracelens/tracelens/analyze"
)

func (d *doc) kernels(r *analyze.Result) {
	d.heading(2, "Top kernels")
	if len(r.Kernels) == 0 {
		d.para("No GPU kernels in this trace.")
		return
	}
	top := r.Kernels[:min(len(r.Kernels), d.opt.TopKernels)]
	d.para("%s of %s, %s of GPU kernel time; the top %d take %s.",
		plural(r.Summary.KernelLaunches, "kernel launch"), plural(r.Summary.DistinctKernels, "distinct kernel"), us(r.Summary.GPUKernelUs), len(top), pct(top[len(top)-1].CumulativeShare))
	python := false
	for _, k := range top {
		python = python || len(k.Python) > 0
	}
	cols := []column{right("#"), left("Kernel"), left("Category"), right("Share"), right("Total"), right("Count"), right("Mean"), left("Launched by op"), left("Python line")}
	if !python {
		// Without Python stacks the column would be all dashes.
		cols = cols[:len(cols)-1]
	}
	tb := newTable(cols...)
	var bars []bar
	long := false
	for i, k := range top {
		short := shorten(kernelName(k), 60)
		if short != k.Name {
			long = true
		}
		cells := []string{fmt.Sprint(i + 1), Code(short), categoryTitle(k.Category), pct(k.Share), us(k.TotalUs), count(float64(k.Count)), us(k.MeanUs), codeList(k.Ops), codeList(k.Python)}
		tb.add(cells[:len(cols)]...)
		bars = append(bars, bar{label: fmt.Sprintf("%d. %s", i+1, kernelName(k)), value: k.TotalUs, text: pct(k.Share) + " · " + us(k.TotalUs), class: categoryClass(k.Category)})
	}
	d.table(tb)
	if !python {
		if torch(r) {
			d.para("The trace has no Python stacks, so kernels cannot be traced to a source line: record with `with_stack=True` to get them.")
		} else {
			d.para("The trace links no Python frames to kernel launches, so kernels cannot be traced to a source line.")
		}
	}
	d.chart("", func() string { return barsSVG("Share of GPU kernel time, top kernels", bars) })
	if long {
		open, closing := details("Full kernel names")
		d.b.WriteString(open)
		full := newTable(right("#"), left("Full name"))
		for i, k := range top {
			full.add(fmt.Sprint(i+1), Code(shorten(k.Name, maxFullName)))
		}
		d.table(full)
		d.b.WriteString(closing)
	}
}

// maxFullName bounds the names in the full-name table: a templated
// PyTorch kernel name can run to kilobytes; the JSON report keeps it whole.
const maxFullName = 800

// kernelName is the name to show in tables: the short C++ name, or the
// raw name when shortening found nothing readable in it.
func kernelName(k analyze.Kernel) string {
	if strings.TrimSpace(k.ShortName) != "" {
		return k.ShortName
	}
	return k.Name
}

// categoryTitle is a category as a reader writes it.
func categoryTitle(c string) string {
	switch c {
	case analyze.CategoryGEMM, analyze.CategoryGEMV, analyze.CategoryRNG:
		return strings.ToUpper(c)
	case analyze.CategoryTriton:
		return "Triton"
	}
	return Text(c)
}

// codeList shows the first name and how many others there are.
func codeList(names []string) string {
	if len(names) == 0 {
		return ""
	}
	s := Code(shorten(names[0], 60))
	if len(names) > 1 {
		s += fmt.Sprintf(" (+%d)", len(names)-1)
	}
	return s
}
