package capture

import (
	"slices"
	"strconv"
	"testing"
)

func TestWantedAPI(t *testing.T) {
	// Names as CUDA 13.0's cuptiGetCallbackName spells them.
	for name, want := range map[string]bool{
		"cuLaunchKernel": true, "cuLaunchKernelEx": true, "cuLaunchCooperativeKernel": true,
		"cudaLaunchKernel_v7000": true, "cudaLaunchKernelExC_v11060": true, "cuGraphLaunch": true,
		"cuMemcpyHtoD_v2": true, "cuMemcpyAsync_ptsz": true, "cudaMemcpyAsync_v3020": true,
		"cuMemsetD32Async": true, "cudaMemset_v3020": true,
		"cuCtxSynchronize": true, "cuStreamSynchronize_ptsz": true, "cuEventSynchronize": true,
		"cudaDeviceSynchronize_v3020": true, "cudaStreamSynchronize_v3020": true,
		"cudaGetDevice_v3020": false, "cudaGetLastError_v3020": false, "cuCtxGetCurrent": false,
		"cuEventRecord": false, "cuModuleGetFunction": false, "cuMemAlloc_v2": false,
		"cuKernelGetAttribute": false, "cuStreamGetCaptureInfo_v2": false, "cuDevicePrimaryCtxGetState": false,
		"": false,
	} {
		if got := wantedAPI(name); got != want {
			t.Errorf("wantedAPI(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestAPIFilterKeepsLinks drops, from the buffers recorded with every API
// call (testdata/cupti), the API records that CUPTIConfig{AllAPI: false}
// has CUPTI leave out, converts what is left, and checks that every step
// still has exactly the GPU records expect.py found, with their durations:
// no kernel, copy or set loses the call it is linked to. It also checks
// that the filter removes something where the recording has noise
// (cuBLAS's cudaGetDevice and cudaGetLastError in gemm-library).
func TestAPIFilterKeepsLinks(t *testing.T) {
	for w, exp := range loadExpected(t) {
		d, acts := loadDump(t, w)
		var kept []Activity
		dropped := map[string]bool{}
		for _, a := range acts {
			if !a.GPU() && !wantedAPI(a.Name) {
				dropped[a.Name] = true
				continue
			}
			kept = append(kept, a)
		}
		if w == "gemm-library" && (!dropped["cudaGetDevice"] || !dropped["cudaGetLastError"]) {
			t.Errorf("%s: filter dropped %v, want cudaGetDevice and cudaGetLastError among them", w, dropped)
		}
		for si, st := range d.Steps {
			s := newSession(newFakeDriver(&fakeClock{}), nil, &fakeClock{}, DefaultOptions(w), 1)
			s.convertActivities(kept, cuptiCalibration{}, st.From, st.To, 1)
			got := map[string][]int64{}
			for _, e := range s.events {
				if e.Ph == "X" && (e.Cat == "kernel" || e.Cat == "gpu_memcpy" || e.Cat == "gpu_memset") {
					c := strconv.FormatInt(argInt(t, e.Args, "correlation"), 10)
					got[c] = append(got[c], e.DurNs)
				}
			}
			want := exp.Steps[si]
			if len(got) != len(want) {
				t.Fatalf("%s step %d: after filtering, GPU events for %d calls, want %d", w, si, len(got), len(want))
			}
			for c, d := range want {
				if !slices.Equal(got[c], d) {
					t.Errorf("%s step %d: correlation %s durations %v, want %v", w, si, c, got[c], d)
				}
			}
		}
	}
}
