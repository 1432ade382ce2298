//go:build !cuda

package capture

// OpenCUPTI would load CUPTI; without the build tag "cuda" it returns
// ErrNoCUPTI.
func OpenCUPTI(cuptiPath string) (ActivitySource, error) { return nil, ErrNoCUPTI }
