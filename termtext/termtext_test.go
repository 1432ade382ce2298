package termtext

import (
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"aten::mm", "aten::mm"},
		{"void gemm<float>(float*)", "void gemm<float>(float*)"},
		{"µs ünïcode ✓", "µs ünïcode ✓"},
		{"\x1b[2J\x1b[31mred", "␛[2J␛[31mred"},
		{"\x1b]0;title\x07", "␛]0;title␇"},
		{"a\nb\rc\td", "a␊b␍c␉d"},
		{"del\x7f", "del␡"},
		{"c1\u009b31m", "c1\uFFFD31m"},
		{"bidi\u202Eevil", "bidi\uFFFDevil"},
		{"bad\xffutf8", "bad\uFFFDutf8"},
		{"", ""},
	}
	for _, c := range cases {
		if got := Sanitize(c.in); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzSanitize checks the promise on any input: the result is valid UTF-8
// without a byte or rune a terminal would act on.
func FuzzSanitize(f *testing.F) {
	f.Add("\x1b[31m")
	f.Add("ok")
	f.Add("\xc2\x9b\xe2\x80\xae")
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", s)
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || isBidiControl(r) {
				t.Fatalf("Sanitize(%q) kept %U", s, r)
			}
		}
		if clean(s) && out != s {
			t.Fatalf("clean %q changed to %q", s, out)
		}
	})
}
