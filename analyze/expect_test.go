package analyze

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// readExpected decodes fixtures/recorded/expect/name, the values a script
// computed from the traces' JSON without tracelens, into v.
func readExpected(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "recorded", "expect", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
