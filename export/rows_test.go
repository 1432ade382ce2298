package export

import (
	"testing"

	"github.com/tracelens/tracelens/analyze"
)

// The kernels table's dtype is analyze's name for the launching op's
// first tensor input (the roofline's), not a vocabulary of export's own.
func TestOpDType(t *testing.T) {
	for in, want := range map[string]string{
		`["float", "float", ""]`:               "fp32",
		`["Scalar", "c10::BFloat16", "float"]`: "bf16",
		`["", "c10::Half"]`:                    "fp16",
		`[]`:                                   "",
		`["", "Scalar"]`:                       "",
		``:                                     "",
		`not a list`:                           "",
		`["c10::Float8_e4m3fn", "c10::BFloat16"]`: "fp8",
	} {
		if got := analyze.OpDType(in); got != want {
			t.Errorf("OpDType(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every table has a distinct column hash, and it is what writeTable
// stores, so upToDate compares like with like.
func TestColumnsHash(t *testing.T) {
	seen := map[string]string{}
	for _, tbl := range Tables() {
		h := tableColumns(tbl)
		if h == "" || seen[h] != "" {
			t.Errorf("%s: column hash %q (also %s)", tbl, h, seen[h])
		}
		seen[h] = tbl
	}
	path := t.TempDir() + "/steps.parquet"
	if err := writeTable(path, TableSteps, identity{ContentHash: "sha256:x", JobHash: "sha256:j"}, func(emit func(StepRow) error) error { return emit(StepRow{Run: "r"}) }); err != nil {
		t.Fatal(err)
	}
	meta, err := readMeta(path)
	if err != nil {
		t.Fatal(err)
	}
	if meta[MetaColumns] != tableColumns(TableSteps) || meta[MetaTable] != TableSteps || meta[MetaContentHash] != "sha256:x" || meta[MetaJobHash] != "sha256:j" {
		t.Errorf("metadata %v", meta)
	}
}
