package termtext

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clip fits s into width runes by cutting its middle, where long kernel
// names carry the least (the namespace at the front, the variant at the
// end), and makes control characters harmless. width <= 0 keeps s whole.
func Clip(s string, width int) string {
	s = Sanitize(s)
	n := utf8.RuneCountInString(s)
	if width <= 0 || n <= width {
		return s
	}
	r := []rune(s)
	if width == 1 {
		return "…"
	}
	head := (width - 1) / 2
	return string(r[:head]) + "…" + string(r[n-(width-1-head):])
}

// DistinctNames fits the names of a table's rows into width runes each
// (width <= 0: whole) so that rows whose full names differ never print the
// same. labels[i] is the readable form of row i (a kernel's short name) and
// fulls[i] what identifies it (the kernel's full name); rows with equal
// fulls are the same thing and may print alike.
//
// A row is cut in the middle as by Clip. When that makes rows of different
// things collide, each of them shows the start of its label, then "…" and
// the words of its name that the others lack (tile sizes, template
// arguments, a functor: from the full names when the labels themselves are
// equal); in the rare case that still collides, a "#N" suffix tells them
// apart.
func DistinctNames(labels, fulls []string, width int) []string {
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = Clip(l, width)
	}
	for _, g := range collisions(out, fulls) {
		src := labels
		if !pairwiseDistinct(labels, g) {
			src = fulls
		}
		words := make([][]string, len(g))
		parts := make([][]string, len(g))
		for k, i := range g {
			words[k] = tokens(Sanitize(src[i]), false)
			parts[k] = tokens(Sanitize(src[i]), true)
		}
		for k, i := range g {
			var diff []string
			for _, w := range words[k] {
				if !lackedByOne(w, k, g, words, fulls) {
					continue
				}
				if utf8.RuneCountInString(w) > longWord {
					// sm80_xmma_gemm_…_tilesize64x64x8_…: the parts
					// that differ, not the whole word.
					var sub []string
					for _, p := range tokens(w, true) {
						if lackedByOne(p, k, g, parts, fulls) {
							sub = append(sub, p)
						}
					}
					if len(sub) > 0 {
						w = strings.Join(sub, "…")
					}
				}
				if !slices.Contains(diff, w) {
					diff = append(diff, w)
				}
			}
			out[i] = withDifference(Sanitize(labels[i]), strings.Join(diff, "…"), width)
		}
	}
	numberDuplicates(out, fulls, width)
	return out
}

// lackedByOne reports whether one row of the group g other than the k-th,
// of a different thing, lacks the word w.
func lackedByOne(w string, k int, g []int, words [][]string, fulls []string) bool {
	for m, j := range g {
		if m != k && fulls[j] != fulls[g[k]] && !slices.Contains(words[m], w) {
			return true
		}
	}
	return false
}

// longWord is the length above which a word that differs is shown by its
// underscore-separated parts that differ.
const longWord = 16

// tokens splits s into its words, runs of letters, digits and (unless
// parts) underscores.
func tokens(s string, parts bool) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && (parts || r != '_')
	})
}

// withDifference writes the start of label, "…" and diff in width runes,
// giving the label at least a quarter of them and cutting diff's end.
func withDifference(label, diff string, width int) string {
	if width <= 0 {
		return label + " …" + diff
	}
	lr, dr := []rune(label), []rune(diff)
	headW := min(len(lr), max(width-1-len(dr), width/4))
	if len(dr) > width-1-headW {
		dr = append(dr[:max(width-2-headW, 0)], '…')
	}
	return string(lr[:headW]) + "…" + string(dr)
}

// collisions groups the rows that print the same although their full
// names differ, in row order.
func collisions(out, fulls []string) [][]int {
	byText := map[string][]int{}
	var order []string
	for i, s := range out {
		if _, ok := byText[s]; !ok {
			order = append(order, s)
		}
		byText[s] = append(byText[s], i)
	}
	var groups [][]int
	for _, s := range order {
		g := byText[s]
		for _, i := range g[1:] {
			if fulls[i] != fulls[g[0]] {
				groups = append(groups, g)
				break
			}
		}
	}
	return groups
}

// pairwiseDistinct reports whether the rows g have different labels.
func pairwiseDistinct(labels []string, g []int) bool {
	seen := map[string]bool{}
	for _, i := range g {
		if seen[labels[i]] {
			return false
		}
		seen[labels[i]] = true
	}
	return true
}

// numberDuplicates gives the second and later rows of each remaining
// collision a "#N" suffix, keeping them within width.
func numberDuplicates(out, fulls []string, width int) {
	for _, g := range collisions(out, fulls) {
		for n, i := range g[1:] {
			tag := "#" + strconv.Itoa(n+2)
			r := []rune(out[i])
			if width > 0 && len(r)+len(tag) > width {
				r = r[:max(width-len(tag), 0)]
			}
			out[i] = string(r) + tag
		}
	}
}
