package capture

import _ "embed"

// kernelsPTX is capture/kernels/kernels.cu compiled by `go tool task ptx`.
//
//go:embed kernels/kernels.ptx
var kernelsPTX string

// KernelsPTX returns the embedded PTX module the workloads' kernels come from.
func KernelsPTX() string { return kernelsPTX }
