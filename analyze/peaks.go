package analyze

import (
	"fmt"
	"strings"
)

// Peak is a GPU's dense peak throughput per dtype in TFLOP/s (tensor
// cores where the GPU has them for that dtype, without structured
// sparsity; "fp32" is the non-tensor FP32 rate, "tf32" the tensor-core
// rate on fp32 data) and its DRAM bandwidth in GB/s, from the vendor's
// datasheet named in Source.
type Peak struct {
	Device string
	TFLOPS map[string]float64
	GBps   float64
	Source string
}

// peaks is matched in order against the device name the trace records
// (case-insensitive), so more specific names (H100 PCIe, A100 40GB) come
// before general ones (H100, A100). Datasheets quote tensor figures with
// sparsity; the dense figure is half of it.
var peaks = []Peak{
	{"H200", map[string]float64{"fp64": 67, "fp32": 67, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "fp8": 1978.9}, 4800,
		"NVIDIA H200 Tensor Core GPU datasheet (SXM; dense, as the Hopper whitepaper lists them)"},
	{"H100 PCIe", map[string]float64{"fp64": 51, "fp32": 51, "tf32": 378, "fp16": 756, "bf16": 756, "fp8": 1513}, 2000,
		"NVIDIA H100 Tensor Core GPU datasheet (PCIe; dense)"},
	{"H100 NVL", map[string]float64{"fp64": 60, "fp32": 60, "tf32": 417.5, "fp16": 835.5, "bf16": 835.5, "fp8": 1670.5}, 3900,
		"NVIDIA H100 Tensor Core GPU datasheet (NVL; dense)"},
	{"H100", map[string]float64{"fp64": 67, "fp32": 67, "tf32": 494.7, "fp16": 989.4, "bf16": 989.4, "fp8": 1978.9}, 3350,
		"NVIDIA H100 Tensor Core GPU datasheet (SXM; dense, as the Hopper whitepaper lists them)"},
	{"B200", map[string]float64{"fp64": 37, "fp32": 75, "tf32": 1100, "fp16": 2250, "bf16": 2250, "fp8": 4500}, 7700,
		"NVIDIA HGX B200 datasheet (per GPU; dense)"},
	{"A100-PCIE-40GB", map[string]float64{"fp64": 19.5, "fp32": 19.5, "tf32": 156, "fp16": 312, "bf16": 312}, 1555,
		"NVIDIA A100 Tensor Core GPU datasheet (PCIe 40GB; dense)"},
	{"A100-SXM4-40GB", map[string]float64{"fp64": 19.5, "fp32": 19.5, "tf32": 156, "fp16": 312, "bf16": 312}, 1555,
		"NVIDIA A100 Tensor Core GPU datasheet (SXM 40GB; dense)"},
	{"A100 80GB PCIe", map[string]float64{"fp64": 19.5, "fp32": 19.5, "tf32": 156, "fp16": 312, "bf16": 312}, 1935,
		"NVIDIA A100 Tensor Core GPU datasheet (PCIe 80GB; dense)"},
	{"A100", map[string]float64{"fp64": 19.5, "fp32": 19.5, "tf32": 156, "fp16": 312, "bf16": 312}, 2039,
		"NVIDIA A100 Tensor Core GPU datasheet (SXM 80GB; dense)"},
	{"L40S", map[string]float64{"fp64": 1.4, "fp32": 91.6, "tf32": 183, "fp16": 362, "bf16": 362, "fp8": 733}, 864,
		"NVIDIA L40S datasheet (dense)"},
	{"L4", map[string]float64{"fp64": 0.49, "fp32": 30.3, "tf32": 60, "fp16": 121, "bf16": 121, "fp8": 242.5}, 300,
		"NVIDIA L4 Tensor Core GPU datasheet (dense)"},
	{"MI300X", map[string]float64{"fp64": 163.4, "fp32": 163.4, "tf32": 653.7, "fp16": 1307.4, "bf16": 1307.4, "fp8": 2614.9}, 5300,
		"AMD Instinct MI300X data sheet (matrix cores; dense)"},
	{"RTX 4090", map[string]float64{"fp64": 1.3, "fp32": 82.6, "tf32": 82.6, "fp16": 165, "bf16": 165, "fp8": 330}, 1008,
		"NVIDIA Ada GPU architecture whitepaper (RTX 4090; dense)"},
	{"RTX 3090", map[string]float64{"fp64": 0.56, "fp32": 35.6, "tf32": 35.6, "fp16": 71, "bf16": 71}, 936,
		"NVIDIA Ampere GA102 GPU architecture whitepaper (RTX 3090; dense)"},
}

// PeakFor returns the peaks of the named device, or nil when the table does
// not know it (then no figure is held to a roof, and faces say so).
func PeakFor(device string) *Peak {
	d := strings.ToLower(device)
	for i := range peaks {
		if strings.Contains(d, strings.ToLower(peaks[i].Device)) {
			return &peaks[i]
		}
	}
	return nil
}

// Peaks returns the peak table, for faces that list it.
func Peaks() []Peak { return append([]Peak(nil), peaks...) }

// rooflineKernel reports whether kernels of category c do an op's FLOPs
// (rather than moving or casting its operands).
func rooflineKernel(c string) bool {
	switch c {
	case CategoryGEMM, CategoryGEMV, CategoryAttention, CategoryTriton:
		return true
	}
	return false
}

// kernelDType returns the dtype a GEMM or attention kernel computes in,
// from its name ("fp8", "bf16", "fp16", "tf32", "fp32", "fp64"), or ""
// when the name does not say. cuBLAS/cuBLASLt (sm80_xmma_gemm_bf16bf16_…,
// nvjet_sm90_tst_… with t = bf16, h = fp16, s = fp32, d = fp64,
// e4m3/e5m2 = fp8), CUTLASS and ATen's templates name it.
func kernelDType(name string) string {
	n := strings.ToLower(name)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(n, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("e4m3", "e5m2", "fp8", "float8"):
		return "fp8"
	case has("tf32"):
		return "tf32"
	case has("bf16", "bfloat16"):
		return "bf16"
	case has("f16f16", "fp16", "_h16", "c10::half", "__half", "hgemm", "_hsh_", "_hss_", "_hhs_", "_hhh_"):
		return "fp16"
	case has("_tst_", "_tss_", "_ttt_", "_tts_"):
		return "bf16"
	case has("f64", "dgemm", "double", "_ddd_", "_dgemm"):
		return "fp64"
	case has("f32f32", "sgemm", "_sss_", "_ffma_", "<float"):
		return "fp32"
	}
	return ""
}

// dtypeBytes is the element size of a short dtype name.
func dtypeBytes(dt string) int64 {
	switch dt {
	case "fp8":
		return 1
	case "bf16", "fp16":
		return 2
	case "fp32", "tf32":
		return 4
	case "fp64":
		return 8
	}
	return 0
}

// attentionOps are scaled-dot-product attention ops whose FLOPs come from
// their query/key shapes.
var attentionOps = []string{"aten::_scaled_dot_product_flash_attention", "aten::_scaled_dot_product_efficient_attention",
	"aten::_scaled_dot_product_cudnn_attention", "aten::_flash_attention_forward", "aten::_efficient_attention_forward"}

// flopOp reports whether the roofline knows an op's FLOPs.
func flopOp(name string) bool {
	for _, o := range gemmOps {
		if o == name {
			return true
		}
	}
	for _, o := range attentionOps {
		if o == name {
			return true
		}
	}
	return false
}

// attentionFLOPs returns the FLOPs and bytes of one forward attention call
// from q [B, H, L, D] and k [B, H, S, D] (v like k). Q·Kᵀ and P·V are
// 2·B·H·L·S·D each without a mask; whether the call was causal (half of
// that) is not in the shapes, so it counts the causal half: a lower bound
// on the work, so the achieved rate is never overstated.
func attentionFLOPs(dims string, elem int64) (flops, bytes float64, shape string) {
	d := parseDims(dims)
	if len(d) < 3 || len(d[0]) != 4 || len(d[1]) != 4 || len(d[2]) != 4 {
		return 0, 0, ""
	}
	b, h, l, dd := d[0][0], d[0][1], d[0][2], d[0][3]
	s := d[1][2]
	flops = 2 * float64(b) * float64(h) * float64(l) * float64(s) * float64(dd)
	bytes = float64(elem) * float64(b*h) * float64(2*l*dd+2*s*dd)
	return flops, bytes, fmt.Sprintf("%d×%d heads [%d×%d]·[%d×%d]ᵀ", b, h, l, dd, s, dd)
}
