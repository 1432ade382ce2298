package analyze

// TF32Efficiency is the share of the device's dense TF32 tensor-core peak
// a cuBLAS TF32 GEMM of a known shape is assumed to reach. Measured on an
// H100 (fixtures/recorded/pairs): 68 % for the [2048×4096]·[4096×4096]
// GEMMs of tf32_mlp, 83 % for the 4096³ ones of tf32_chain.
const TF32Efficiency = 0.7

// tf32Speedup is the speed-up TF32 gives the FFMA GEMM kernel name: its
// measured time over the time its GEMM shapes (the Roofline rows that name
// it) take at TF32Efficiency × the device's TF32 peak, or their bytes at
// the peak bandwidth when that is longer; at least 1 and at most the
// ratio of the device's TF32 and FP32 peaks (a GEMM too small to run near
// either gains no more than the cores' ratio). ok is false when no
// row gives the kernel's shape or the device's peaks are unknown: the
// caller falls back to TF32Speedup.
func tf32Speedup(r *Result, name string) (speedup float64, ok bool) {
	peak := PeakFor(r.Device)
	if peak == nil || peak.TFLOPS["tf32"] <= 0 || peak.GBps <= 0 {
		return 0, false
	}
	var measured, tf32 float64 // µs over the rows' calls
	for _, row := range r.Roofline {
		if row.Kernel != name || row.FLOPs <= 0 || row.MeanUs <= 0 {
			continue
		}
		compute := row.FLOPs / (TF32Efficiency * peak.TFLOPS["tf32"] * 1e6) // µs: FLOPs / (TFLOP/s × 1e6)
		memory := row.Bytes / (peak.GBps * 1e3)                             // µs: bytes / (GB/s × 1e3)
		measured += row.MeanUs * float64(row.Calls)
		tf32 += max(compute, memory) * float64(row.Calls)
	}
	if measured == 0 || tf32 == 0 {
		return 0, false
	}
	most := 1.0
	if fp32 := peak.TFLOPS["fp32"]; fp32 > 0 {
		most = max(peak.TFLOPS["tf32"]/fp32, 1)
	}
	return min(max(measured/tf32, 1), most), true
}
