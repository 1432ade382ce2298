//go:build !cuda

package capture

// OpenCUPTI would load CUPTI; without the build tag "cuda" it returns
// ErrNoCUPTI.
func OpenCUPTI(cuptiPath string, cfg CUPTIConfig) (ActivitySource, error) { return nil, ErrNoCUPTI }
