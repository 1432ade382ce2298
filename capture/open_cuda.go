//go:build cuda

package capture

/*
#cgo LDFLAGS: -ldl -lcuda
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

static const char* tl_error_name(int code) {
	const char* s = 0;
	if (cuGetErrorName((CUresult)code, &s) != CUDA_SUCCESS || s == 0) return "CUDA_ERROR_UNKNOWN";
	return s;
}

static int tl_alloc_host(void** p, size_t n) { return (int)cuMemAllocHost(p, n); }
static int tl_free_host(void* p) { return (int)cuMemFreeHost(p); }
static int tl_driver_version(int* v) { return (int)cuDriverGetVersion(v); }

// cuBLAS, found at run time by soname: link-time cuBLAS from one CUDA
// release is missing on machines with another, but the v2 API is stable.
typedef int (*tl_cublasCreate)(void**);
typedef int (*tl_cublasDestroy)(void*);
typedef int (*tl_cublasSetStream)(void*, void*);
typedef int (*tl_cublasGetVersion)(void*, int*);
typedef int (*tl_cublasSgemm)(void*, int, int, int, int, int, const float*, const float*, int,
                              const float*, int, const float*, float*, int);
typedef struct {
	void* lib;
	void* handle;
	tl_cublasDestroy destroy;
	tl_cublasSgemm sgemm;
	int version;
} tl_blas;

// tl_blas_open returns 0 on success, -1 when no library could be loaded,
// or the cuBLAS status of a failed call.
static int tl_blas_open(tl_blas* b, const char** soname) {
	static const char* names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so", 0};
	for (int i = 0; names[i]; i++) {
		b->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (b->lib) { *soname = names[i]; break; }
	}
	if (!b->lib) return -1;
	tl_cublasCreate create = (tl_cublasCreate)dlsym(b->lib, "cublasCreate_v2");
	tl_cublasSetStream setStream = (tl_cublasSetStream)dlsym(b->lib, "cublasSetStream_v2");
	tl_cublasGetVersion getVersion = (tl_cublasGetVersion)dlsym(b->lib, "cublasGetVersion_v2");
	b->destroy = (tl_cublasDestroy)dlsym(b->lib, "cublasDestroy_v2");
	b->sgemm = (tl_cublasSgemm)dlsym(b->lib, "cublasSgemm_v2");
	if (!create || !setStream || !b->destroy || !b->sgemm) { dlclose(b->lib); b->lib = 0; return -2; }
	int st = create(&b->handle);
	if (st != 0) { dlclose(b->lib); b->lib = 0; return st; }
	st = setStream(b->handle, 0);
	if (st != 0) { b->destroy(b->handle); dlclose(b->lib); b->lib = 0; return st; }
	if (getVersion) getVersion(b->handle, &b->version);
	return 0;
}

static void tl_blas_close(tl_blas* b) {
	if (!b->lib) return;
	b->destroy(b->handle);
	// The library stays loaded: unloading cuBLAS while its threads
	// may still run is not safe.
	b->lib = 0;
}

static int tl_blas_sgemm(tl_blas* b, int ta, int tb, int m, int n, int k, uint64_t A, int lda,
                         uint64_t B, int ldb, uint64_t C, int ldc) {
	float alpha = 1.0f, beta = 0.0f;
	return b->sgemm(b->handle, ta, tb, m, n, k, &alpha, (const float*)(uintptr_t)A, lda,
	                (const float*)(uintptr_t)B, ldb, &beta, (float*)(uintptr_t)C, ldc);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"unsafe"

	"gorgonia.org/cu"
)

// CUDAEnabled reports whether this build can run workloads on a GPU.
const CUDAEnabled = true

// cudaErr turns a gorgonia.org/cu result into a *CUDAError with CUDA's own
// error name.
func cudaErr(call string, err error) error {
	if err == nil {
		return nil
	}
	v := reflect.ValueOf(err)
	if v.Kind() >= reflect.Int && v.Kind() <= reflect.Int64 {
		code := int(v.Int())
		return &CUDAError{Call: call, Name: C.GoString(C.tl_error_name(C.int(code))), Code: code}
	}
	return fmt.Errorf("%s: %w", call, err)
}

func cresult(call string, r C.int) error {
	if r == 0 {
		return nil
	}
	return &CUDAError{Call: call, Name: C.GoString(C.tl_error_name(r)), Code: int(r)}
}

// maxSharedPerBlockOptin is CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
// which gorgonia.org/cu does not name.
const maxSharedPerBlockOptin cu.DeviceAttribute = 97

type cudaDriver struct {
	dev     cu.Device
	ctx     cu.CUContext
	mod     cu.Module
	info    DeviceInfo
	events  []cu.Event
	blas    *C.tl_blas
	blasErr string
	libName string
	pinned  map[uintptr]unsafe.Pointer
}

// Open creates a CUDA context on the device, loads the embedded PTX and
// finds cuBLAS. The calling goroutine stays locked to its OS thread until
// Close, since the context is current on that thread only.
func Open(device int) (Driver, error) {
	runtime.LockOSThread()
	d := &cudaDriver{pinned: map[uintptr]unsafe.Pointer{}}
	if err := d.open(device); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func (d *cudaDriver) open(device int) error {
	// gorgonia.org/cu calls cuInit when the package initializes.
	n, err := cu.NumDevices()
	if err != nil {
		return cudaErr("cuDeviceGetCount", err)
	}
	if device < 0 || device >= n {
		return fmt.Errorf("device %d: this machine has %d CUDA devices", device, n)
	}
	if d.dev, err = cu.GetDevice(device); err != nil {
		return cudaErr("cuDeviceGet", err)
	}
	// The primary context is the one the CUDA runtime (and so cuBLAS) uses.
	if d.ctx, err = d.dev.RetainPrimaryCtx(); err != nil {
		return cudaErr("cuDevicePrimaryCtxRetain", err)
	}
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		return cudaErr("cuCtxSetCurrent", err)
	}
	if err := d.readInfo(device); err != nil {
		return err
	}
	if d.mod, err = cu.LoadData(kernelsPTX); err != nil {
		return cudaErr("cuModuleLoadData (embedded PTX)", err)
	}
	d.blas = (*C.tl_blas)(C.calloc(1, C.size_t(unsafe.Sizeof(C.tl_blas{}))))
	var soname *C.char
	switch st := C.tl_blas_open(d.blas, &soname); st {
	case 0:
		d.libName = fmt.Sprintf("%s (cuBLAS %d)", C.GoString(soname), int(d.blas.version))
	case -1:
		d.blasErr = "no cuBLAS found (dlopen libcublas.so.13/.12/.11 failed; add its folder to LD_LIBRARY_PATH)"
	case -2:
		d.blasErr = "cuBLAS found but it lacks the v2 API"
	default:
		d.blasErr = fmt.Sprintf("cublasCreate_v2 failed with status %d", int(st))
	}
	return nil
}

func (d *cudaDriver) readInfo(id int) error {
	name, err := d.dev.Name()
	if err != nil {
		return cudaErr("cuDeviceGetName", err)
	}
	mem, err := d.dev.TotalMem()
	if err != nil {
		return cudaErr("cuDeviceTotalMem", err)
	}
	attrs := []cu.DeviceAttribute{cu.ComputeCapabilityMajor, cu.ComputeCapabilityMinor, cu.MaxThreadsPerBlock,
		cu.MaxThreadsPerMultiprocessor, cu.MaxRegistersPerBlock, cu.MaxRegistersPerMultiprocessor, cu.WarpSize,
		cu.MaxSharedMemoryPerBlock, maxSharedPerBlockOptin, cu.MaxSharedMemoryPerMultiprocessor, cu.MultiprocessorCount}
	v := make([]int, len(attrs))
	for i, a := range attrs {
		if v[i], err = d.dev.Attribute(a); err != nil {
			return cudaErr("cuDeviceGetAttribute", err)
		}
	}
	var ver C.int
	if err := cresult("cuDriverGetVersion", C.tl_driver_version(&ver)); err != nil {
		return err
	}
	d.info = DeviceInfo{ID: id, Name: name, TotalGlobalMem: mem, ComputeMajor: v[0], ComputeMinor: v[1],
		MaxThreadsPerBlock: v[2], MaxThreadsPerMultiprocessor: v[3], RegsPerBlock: v[4], RegsPerMultiprocessor: v[5],
		WarpSize: v[6], SharedMemPerBlock: v[7], SharedMemPerBlockOptin: v[8], SharedMemPerMultiprocessor: v[9],
		NumSms: v[10], DriverVersion: int(ver)}
	return nil
}

func (d *cudaDriver) Device() DeviceInfo { return d.info }

func (d *cudaDriver) Kernel(name string) (*Kernel, error) {
	fn, err := d.mod.Function(name)
	if err != nil {
		return nil, cudaErr("cuModuleGetFunction "+name, err)
	}
	regs, err := fn.Attribute(cu.NumRegs)
	if err != nil {
		return nil, cudaErr("cuFuncGetAttribute", err)
	}
	shm, err := fn.Attribute(cu.SharedSizeBytes)
	if err != nil {
		return nil, cudaErr("cuFuncGetAttribute", err)
	}
	return &Kernel{Name: name, Registers: regs, StaticShared: shm, handle: fn}, nil
}

func (d *cudaDriver) Alloc(bytes int64) (DevicePtr, error) {
	p, err := cu.MemAlloc(bytes)
	if err != nil {
		return 0, cudaErr("cuMemAlloc", err)
	}
	return DevicePtr(p), nil
}

func (d *cudaDriver) Free(p DevicePtr) error {
	return cudaErr("cuMemFree", cu.MemFree(cu.DevicePtr(p)))
}

func (d *cudaDriver) AllocHost(bytes int64) ([]byte, error) {
	var p unsafe.Pointer
	if err := cresult("cuMemAllocHost", C.tl_alloc_host(&p, C.size_t(bytes))); err != nil {
		return nil, err
	}
	d.pinned[uintptr(p)] = p
	return unsafe.Slice((*byte)(p), bytes), nil
}

func (d *cudaDriver) FreeHost(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	key := uintptr(unsafe.Pointer(&b[0]))
	p, ok := d.pinned[key]
	if !ok {
		return errors.New("FreeHost: memory did not come from AllocHost")
	}
	delete(d.pinned, key)
	return cresult("cuMemFreeHost", C.tl_free_host(p))
}

func (d *cudaDriver) CopyHtoD(dst DevicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return cudaErr("cuMemcpyHtoD", cu.MemcpyHtoD(cu.DevicePtr(dst), unsafe.Pointer(&src[0]), int64(len(src))))
}

func (d *cudaDriver) CopyDtoH(dst []byte, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	return cudaErr("cuMemcpyDtoH", cu.MemcpyDtoH(unsafe.Pointer(&dst[0]), cu.DevicePtr(src), int64(len(dst))))
}

func (d *cudaDriver) Launch(k *Kernel, grid, block Dim3, sharedBytes int, args ...any) error {
	fn, ok := k.handle.(cu.Function)
	if !ok {
		return fmt.Errorf("launch %s: kernel not loaded by this driver", k.Name)
	}
	slots := make([]uint64, len(args))
	params := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case DevicePtr:
			slots[i] = uint64(v)
		case int32:
			slots[i] = uint64(uint32(v))
		case uint32:
			slots[i] = uint64(v)
		case uint64:
			slots[i] = v
		case float32:
			slots[i] = uint64(math.Float32bits(v))
		default:
			return fmt.Errorf("launch %s: argument %d has unsupported type %T", k.Name, i, a)
		}
		params[i] = unsafe.Pointer(&slots[i])
	}
	return cudaErr("cuLaunchKernel", fn.Launch(grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z, sharedBytes, cu.Stream{}, params))
}

func (d *cudaDriver) LibrarySgemm(transA, transB bool, m, n, k int, a DevicePtr, lda int, b DevicePtr, ldb int, c DevicePtr, ldc int) error {
	if d.blasErr != "" {
		return errors.New(d.blasErr)
	}
	op := func(t bool) C.int {
		if t {
			return 1 // CUBLAS_OP_T
		}
		return 0
	}
	if st := C.tl_blas_sgemm(d.blas, op(transA), op(transB), C.int(m), C.int(n), C.int(k), C.uint64_t(a), C.int(lda),
		C.uint64_t(b), C.int(ldb), C.uint64_t(c), C.int(ldc)); st != 0 {
		return &CUDAError{Call: "cublasSgemm_v2", Name: fmt.Sprintf("CUBLAS_STATUS_%d", int(st)), Code: int(st)}
	}
	return nil
}

func (d *cudaDriver) LibraryName() string { return d.libName }

func (d *cudaDriver) event(e EventID) (cu.Event, error) {
	if int(e) < 0 || int(e) >= len(d.events) {
		return cu.Event{}, fmt.Errorf("no event %d", e)
	}
	return d.events[e], nil
}

func (d *cudaDriver) NewEvent() (EventID, error) {
	ev, err := cu.MakeEvent(cu.DefaultEvent)
	if err != nil {
		return 0, cudaErr("cuEventCreate", err)
	}
	d.events = append(d.events, ev)
	return EventID(len(d.events) - 1), nil
}

func (d *cudaDriver) DestroyEvent(e EventID) error {
	ev, err := d.event(e)
	if err != nil {
		return err
	}
	return cudaErr("cuEventDestroy", cu.DestroyEvent(&ev))
}

func (d *cudaDriver) Record(e EventID) error {
	ev, err := d.event(e)
	if err != nil {
		return err
	}
	return cudaErr("cuEventRecord", ev.Record(cu.Stream{}))
}

func (d *cudaDriver) SyncEvent(e EventID) error {
	ev, err := d.event(e)
	if err != nil {
		return err
	}
	return cudaErr("cuEventSynchronize", ev.Synchronize())
}

func (d *cudaDriver) ElapsedNs(a, b EventID) (int64, error) {
	ea, err := d.event(a)
	if err != nil {
		return 0, err
	}
	eb, err := d.event(b)
	if err != nil {
		return 0, err
	}
	ms, err := ea.Elapsed(eb)
	if err != nil {
		return 0, cudaErr("cuEventElapsedTime", err)
	}
	return int64(math.Round(ms * 1e6)), nil
}

func (d *cudaDriver) Synchronize() error { return cudaErr("cuCtxSynchronize", cu.Synchronize()) }

// Close frees pinned memory left over, cuBLAS's handle and the module,
// releases the primary context (destroying it when this was its only
// user) and unlocks the OS thread.
func (d *cudaDriver) Close() error {
	defer runtime.UnlockOSThread()
	var errs []error
	if d.ctx != (cu.CUContext{}) {
		errs = append(errs, cudaErr("cuCtxSynchronize", cu.Synchronize()))
	}
	for k, p := range d.pinned {
		errs = append(errs, cresult("cuMemFreeHost", C.tl_free_host(p)))
		delete(d.pinned, k)
	}
	if d.blas != nil {
		C.tl_blas_close(d.blas)
		C.free(unsafe.Pointer(d.blas))
		d.blas = nil
	}
	if d.mod != (cu.Module{}) {
		errs = append(errs, cudaErr("cuModuleUnload", d.mod.Unload()))
		d.mod = cu.Module{}
	}
	if d.ctx != (cu.CUContext{}) {
		errs = append(errs, cudaErr("cuDevicePrimaryCtxRelease", d.dev.ReleasePrimaryCtx()))
		d.ctx = cu.CUContext{}
	}
	return errors.Join(errs...)
}
