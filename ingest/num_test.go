package ingest

import "testing"

// FuzzParseInt holds parseInt equal to strconv's reading on any text.
func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-0", "7", "+7", "007", "-12", "7.0", "7.5", "1e3", "0x1p4", "null", "true", "nan", "NaN",
		"inf", "-Inf", "Infinity", "", "-", "999999999999999999", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "1_000", "١"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gn, gok := parseInt(s)
		wn, wok := strconvInt(s)
		if gn != wn || gok != wok {
			t.Errorf("parseInt(%q) = %d, %v; strconv reads %d, %v", s, gn, gok, wn, wok)
		}
	})
}
