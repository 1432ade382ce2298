package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDistinctNames(t *testing.T) {
	fulls := []string{
		"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
		"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
		"void k<Mul>(int)", "void k<Add>(int)", "short",
	}
	labels := []string{fulls[0], fulls[1], "k<float>", "k<float>", "short"}
	got := DistinctNames(labels, fulls, 39)
	seen := map[string]bool{}
	for i, s := range got {
		if n := utf8.RuneCountInString(s); n > 39 {
			t.Errorf("%q is %d runes, want <= 39", s, n)
		}
		if seen[s] {
			t.Errorf("row %d prints %q like another row: %q", i, s, got)
		}
		seen[s] = true
	}
	if !strings.Contains(got[0], "32x32") || !strings.Contains(got[1], "64x64") {
		t.Errorf("the tile sizes that differ are not shown: %q", got[:2])
	}
	if !strings.Contains(got[2], "Mul") || !strings.Contains(got[3], "Add") {
		t.Errorf("equal labels do not show the full names' difference: %q", got[2:4])
	}
	if got[4] != "short" {
		t.Errorf("a short name changed: %q", got[4])
	}
	if w := DistinctNames(fulls, fulls, 0); w[0] != fulls[0] {
		t.Errorf("width 0 cut the name: %q", w[0])
	}
	if d := DistinctNames([]string{"a", "a"}, []string{"x", "y"}, 1); d[0] == d[1] {
		t.Errorf("width 1 rows print alike: %q", d)
	}
}
