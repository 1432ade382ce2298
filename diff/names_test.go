package diff

import "testing"

func TestNormalizeKernelName(t *testing.T) {
	cases := map[string]string{
		// Template arguments, parameters and return type go.
		"void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >)": "at::native::elementwise_kernel",
		"void fused_linear_relu_naive_kernel<float>(float const*, float const*, float const*, float*, long, long, long)": "fused_linear_relu_naive_kernel",
		"void relu_inplace_kernel<float>(float*, long)":                                                                  "relu_inplace_kernel",
		"std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, float, false, true, true, false, 5, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>)": "internal::gemvx::kernel",
		"void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4>(long, at::PhiloxCudaState)": "at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel",
		// Tile shapes and stage counts go; the algorithm stays.
		"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas":   "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize_stage_warpsize_ffma_aligna4_alignc4_execute_kernel_5x_cublas",
		"sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas": "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize_stage_warpsize_ffma_aligna4_alignc4_execute_kernel_5x_cublas",
		"nvjet_sm90_hsh_320x128_64x3_1x2_h_bz_coopB_NNT":       "nvjet_sm90_hsh_h_bz_coopB_NNT",
		"cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4": "cutlass_80_tensorop_s1688gemm_nn_align4",
		"cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4":  "cutlass_80_tensorop_s1688gemm_nn_align4",
		// Inductor/Triton numbering and hashes, XLA numbering.
		"triton_poi_fused_add_mul_0":                      "triton_poi_fused_add_mul",
		"triton_red_fused__softmax_12":                    "triton_red_fused_softmax",
		"triton_per_fused_native_layer_norm_3a9f0c1d2b_0": "triton_per_fused_native_layer_norm",
		"loop_add_fusion_3":                               "loop_add_fusion",
		"loop_add_fusion":                                 "loop_add_fusion",
		"gemm_fusion_dot_general_4":                       "gemm_fusion_dot_general",
		"matmul_leaky_kernel":                             "matmul_leaky_kernel",
		"":                                                "",
	}
	for in, want := range cases {
		if got := NormalizeKernelName(in); got != want {
			t.Errorf("NormalizeKernelName(%.60q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormalizeKeepsDifferentAlgorithmsApart(t *testing.T) {
	pairs := [][2]string{
		{"triton_poi_fused_add_0", "triton_poi_fused_mul_0"},
		{"void relu_inplace_kernel<float>(float*, long)", "void fused_linear_relu_naive_kernel<float>(float const*, long)"},
		{"sm80_xmma_gemm_f32f32_tilesize32x32x8", "sm90_xmma_gemm_f32f32_tilesize32x32x8"},
	}
	for _, p := range pairs {
		if NormalizeKernelName(p[0]) == NormalizeKernelName(p[1]) {
			t.Errorf("%q and %q normalize to the same %q", p[0], p[1], NormalizeKernelName(p[0]))
		}
	}
}
