//go:build !cuda

package capture

// CUDAEnabled reports whether this build can run workloads on a GPU.
const CUDAEnabled = false

// Open would open the CUDA driver on the given device; without the build tag
// "cuda" it returns ErrNoCUDA.
func Open(device int) (Driver, error) { return nil, ErrNoCUDA }
