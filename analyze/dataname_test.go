package analyze

import "testing"

// TestDataName: data loading is named by whole words, so a model's
// "batched_forward" or "batch_norm" is not data loading (the embedded
// sample's batched_forward range read as 88 % data loading).
func TestDataName(t *testing.T) {
	for name, want := range map[string]bool{
		"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__": true,
		"load_batch":       true,
		"loadBatch":        true,
		"get_data":         true,
		"data":             true,
		"prefetch_next":    true,
		"batched_forward":  false,
		"batch_norm":       false,
		"download_weights": false,
		"forward":          false,
		"reload_config":    false,
	} {
		if got := dataName(name); got != want {
			t.Errorf("dataName(%q) = %v, want %v", name, got, want)
		}
	}
}
