package capture

import (
	"errors"
	"fmt"
)

// Dim3 is a CUDA grid or block shape.
type Dim3 struct{ X, Y, Z int }

// count is the number of blocks or threads the shape holds.
func (d Dim3) count() int64 { return int64(d.X) * int64(d.Y) * int64(d.Z) }

// DevicePtr is an address in device memory.
type DevicePtr uint64

// EventID names a CUDA event owned by a Driver.
type EventID int

// DeviceInfo is what the trace's deviceProperties says about the GPU.
type DeviceInfo struct {
	ID                          int
	Name                        string
	TotalGlobalMem              int64
	ComputeMajor, ComputeMinor  int
	MaxThreadsPerBlock          int
	MaxThreadsPerMultiprocessor int
	RegsPerBlock                int
	RegsPerMultiprocessor       int
	WarpSize                    int
	SharedMemPerBlock           int
	SharedMemPerBlockOptin      int
	SharedMemPerMultiprocessor  int
	NumSms                      int
	// DriverVersion is cuDriverGetVersion's number, e.g. 13000.
	DriverVersion int
}

// Kernel is a kernel function loaded from the embedded PTX, with the
// attributes Kineto writes for each launch.
type Kernel struct {
	Name string
	// Registers is the number of registers per thread.
	Registers int
	// StaticShared is the statically allocated shared memory in bytes.
	StaticShared int
	// handle is the driver's own reference to the function.
	handle any
}

// Driver is the part of the CUDA driver API the workloads use. The real one
// needs the build tag "cuda"; tests use a fake. All work goes to one stream,
// and every method returns a *CUDAError (wrapped) when CUDA reports failure.
type Driver interface {
	// Device describes the GPU the driver's context runs on.
	Device() DeviceInfo
	// Kernel looks up a kernel of the embedded PTX module by name.
	Kernel(name string) (*Kernel, error)
	// Alloc allocates device memory.
	Alloc(bytes int64) (DevicePtr, error)
	// Free releases device memory from Alloc.
	Free(p DevicePtr) error
	// AllocHost allocates page-locked (pinned) host memory.
	AllocHost(bytes int64) ([]byte, error)
	// FreeHost releases memory from AllocHost.
	FreeHost(b []byte) error
	// CopyHtoD copies host memory to the device and returns when done.
	CopyHtoD(dst DevicePtr, src []byte) error
	// CopyDtoH copies device memory to the host and returns when done.
	CopyDtoH(dst []byte, src DevicePtr) error
	// Launch enqueues a kernel. Arguments are DevicePtr, int32, uint32,
	// uint64 or float32 values, in the kernel's parameter order.
	Launch(k *Kernel, grid, block Dim3, sharedBytes int, args ...any) error
	// LibrarySgemm enqueues a library (cuBLAS) single-precision GEMM in
	// column-major convention: C = op(A)·op(B), with alpha 1 and beta 0.
	LibrarySgemm(transA, transB bool, m, n, k int, a DevicePtr, lda int, b DevicePtr, ldb int, c DevicePtr, ldc int) error
	// LibraryName names the GEMM library and its version, or "" when none
	// could be loaded.
	LibraryName() string
	// NewEvent creates a timing event.
	NewEvent() (EventID, error)
	// DestroyEvent releases an event.
	DestroyEvent(e EventID) error
	// Record enqueues the event on the stream.
	Record(e EventID) error
	// SyncEvent waits until the event has completed.
	SyncEvent(e EventID) error
	// ElapsedNs is the time from event a to event b in nanoseconds.
	ElapsedNs(a, b EventID) (int64, error)
	// Synchronize waits until all work on the stream has finished.
	Synchronize() error
	// Close releases what the driver holds and destroys its context.
	Close() error
}

// CUDAError is a failed CUDA (or cuBLAS) call.
type CUDAError struct {
	// Call is the API function, e.g. "cuLaunchKernel".
	Call string
	// Name is the error's name, e.g. "CUDA_ERROR_OUT_OF_MEMORY".
	Name string
	// Code is the numeric result.
	Code int
}

// Error says which call failed and CUDA's name for the error.
func (e *CUDAError) Error() string {
	return fmt.Sprintf("%s failed: %s (%d)", e.Call, e.Name, e.Code)
}

// ErrNoCUDA is returned by Open in a build without the "cuda" tag.
var ErrNoCUDA = errors.New("this tracelens was built without CUDA support; rebuild with CGO_ENABLED=1 and -tags cuda " +
	"(cuda.h, the CUPTI headers and libcuda.so needed at build time: go tool task build-cuda, see capture/BUILD.md)")
