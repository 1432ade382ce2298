package export

import (
	"path/filepath"
	"testing"

	"github.com/tracelens/tracelens/analyze"
	"github.com/tracelens/tracelens/ingest"
)

// The category memo must give what analyze.CategoryOf gives for every GPU
// activity of every fixture; if CategoryOf starts reading something the
// memo's key lacks, this fails on the trace where it matters.
func TestCategoryMemoAgreesWithAnalyze(t *testing.T) {
	var files []string
	for _, d := range []string{"../fixtures", "../fixtures/recorded", "../fixtures/capture"} {
		m, _ := filepath.Glob(filepath.Join(d, "*.json.gz"))
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("%d fixtures", len(files))
	}
	checked := 0
	for _, f := range files {
		tr, err := ingest.ReadFile(f, ingest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m := newModel("x", tr, &analyze.Result{})
		for i := range tr.GPU {
			if got, want := m.category(i), analyze.CategoryOf(tr, i); got != want {
				t.Errorf("%s: activity %d (%s): memo says %s, CategoryOf %s", f, i, tr.GPU[i].Name, got, want)
			}
			checked++
		}
	}
	t.Logf("%d activities checked", checked)
}

func TestDTypeOf(t *testing.T) {
	for in, want := range map[string]string{
		`["float", "float", ""]`:               "fp32",
		`["Scalar", "c10::BFloat16", "float"]`: "bf16",
		`["long int", "c10::Half"]`:            "int64",
		`[]`:                                   "",
		`["", "Scalar"]`:                       "",
		``:                                     "",
		`not a list`:                           "",
		`["c10::Float8_e4m3fn", "c10::BFloat16"]`: "fp8_e4m3",
	} {
		if got := dtypeOf(in); got != want {
			t.Errorf("dtypeOf(%q) = %q, want %q", in, got, want)
		}
	}
}
