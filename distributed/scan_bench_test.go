package distributed

import (
	"os"
	"testing"
)

// BenchmarkScanner measures the comm scanner alone over a generated rank
// (the bytes it adds to every rank's read).
func BenchmarkScanner(b *testing.B) {
	raw, err := os.ReadFile(os.Getenv("TRACELENS_SCAN_FILE"))
	if err != nil {
		b.Skip("set TRACELENS_SCAN_FILE to a trace")
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		s := newCommScanner()
		for i := 0; i < len(raw); i += 256 << 10 {
			s.Write(raw[i:min(i+256<<10, len(raw))])
		}
	}
}
