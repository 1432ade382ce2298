package capture

import (
	"fmt"
	"math"
	"slices"
	"unsafe"
)

// fakeClock advances by tick on every read, like a real clock that moves
// while the code runs.
type fakeClock struct {
	now  int64
	tick int64
}

func (c *fakeClock) Now() int64 { c.now += c.tick; return c.now }

// fakeDriver simulates one in-order GPU stream on the fake host clock: work
// starts latency after it is issued, or when earlier work ends. It keeps
// memory as byte slices and runs a few kernels on the CPU, so checks and
// traces can be tested without a GPU. failOn makes the n-th call of a method
// fail with a CUDA error.
type fakeDriver struct {
	clk     *fakeClock
	latency int64
	kdur    map[string]int64
	gpu     int64 // when the stream is free
	mem     map[DevicePtr][]byte
	next    DevicePtr
	events  map[EventID]int64
	nextEv  EventID
	pinned  int
	calls   map[string]int
	failOn  string
	failAt  int
	closed  bool
	library string
	// act, when set, records what a real CUPTI would.
	act *fakeCUPTI
	// pinnedAt are the first bytes of AllocHost's buffers.
	pinnedAt []*byte
	// Every stallEvery-th Launch call takes stallNs more host time.
	stallEvery int
	stallNs    int64
}

func newFakeDriver(clk *fakeClock) *fakeDriver {
	return &fakeDriver{clk: clk, latency: 3000, kdur: map[string]int64{}, mem: map[DevicePtr][]byte{}, next: 0x1000,
		events: map[EventID]int64{}, calls: map[string]int{}, library: "fakeblas"}
}

func (f *fakeDriver) call(name string) error {
	f.calls[name]++
	if name == f.failOn && f.calls[name] == f.failAt {
		return &CUDAError{Call: "cu" + name, Name: "CUDA_ERROR_LAUNCH_FAILED", Code: 719}
	}
	return nil
}

// issue runs d nanoseconds of GPU work issued now; it returns start and end.
func (f *fakeDriver) issue(d int64) (int64, int64) {
	start := max(f.gpu, f.clk.now+f.latency)
	f.gpu = start + d
	return start, f.gpu
}

func (f *fakeDriver) Device() DeviceInfo {
	return DeviceInfo{Name: "Fake GPU", TotalGlobalMem: 1 << 30, ComputeMajor: 9, NumSms: 4, WarpSize: 32, DriverVersion: 13000}
}

func (f *fakeDriver) Kernel(name string) (*Kernel, error) {
	if err := f.call("Kernel"); err != nil {
		return nil, err
	}
	return &Kernel{Name: name, Registers: 32, StaticShared: 0, handle: name}, nil
}

func (f *fakeDriver) Alloc(n int64) (DevicePtr, error) {
	if err := f.call("Alloc"); err != nil {
		return 0, err
	}
	p := f.next
	f.next += DevicePtr(n+255) &^ 255
	f.mem[p] = make([]byte, n)
	return p, nil
}

func (f *fakeDriver) Free(p DevicePtr) error {
	if _, ok := f.mem[p]; !ok {
		return fmt.Errorf("free of unknown pointer %#x", p)
	}
	delete(f.mem, p)
	return f.call("Free")
}

func (f *fakeDriver) AllocHost(n int64) ([]byte, error) {
	if err := f.call("AllocHost"); err != nil {
		return nil, err
	}
	f.pinned++
	b := make([]byte, n)
	if n > 0 {
		f.pinnedAt = append(f.pinnedAt, &b[0])
	}
	return b, nil
}

func (f *fakeDriver) FreeHost([]byte) error { f.pinned--; return f.call("FreeHost") }

func (f *fakeDriver) buf(p DevicePtr) []byte {
	for base, b := range f.mem {
		if p >= base && p < base+DevicePtr(len(b)) {
			return b[p-base:]
		}
	}
	return nil
}

func (f *fakeDriver) CopyHtoD(dst DevicePtr, src []byte) error {
	if err := f.call("CopyHtoD"); err != nil {
		return err
	}
	copy(f.buf(dst), src)
	corr := f.act.api(ActDriver, 276)
	start, end := f.issue(int64(len(src)) / 10) // 10 GB/s
	srcKind := uint8(1)                         // pageable
	if len(src) > 0 && slices.Contains(f.pinnedAt, &src[0]) {
		srcKind = 2
	}
	f.act.memcpy(1, srcKind, 3, int64(len(src)), start, end, corr)
	f.clk.now = max(f.clk.now, end)
	return nil
}

func (f *fakeDriver) CopyDtoH(dst []byte, src DevicePtr) error {
	if err := f.call("CopyDtoH"); err != nil {
		return err
	}
	copy(dst, f.buf(src))
	return nil
}

func fl(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func (f *fakeDriver) Launch(k *Kernel, grid, block Dim3, shared int, args ...any) error {
	if err := f.call("Launch"); err != nil {
		return err
	}
	if f.stallEvery > 0 && f.calls["Launch"]%f.stallEvery == 0 {
		f.clk.now += f.stallNs
	}
	d := f.kdur[k.Name]
	if d == 0 {
		d = 1000
	}
	corr := f.act.api(ActDriver, 307)
	start, end := f.issue(d)
	f.act.kernel(k.Name, start, end, corr, grid, block)
	// A few kernels run for real, for the --check tests.
	ptr := func(i int) []float32 { return fl(f.buf(args[i].(DevicePtr))) }
	switch k.Name {
	case "ew_fused", "ew_sin", "ew_cos":
		n := int(args[2].(int32))
		y, x := ptr(0), ptr(1)
		for i := 0; i < n; i++ {
			switch k.Name {
			case "ew_fused":
				y[i] = float32(math.Sin(float64(x[i])) + math.Cos(float64(x[i])))
			case "ew_sin":
				y[i] = float32(math.Sin(float64(x[i])))
			default:
				y[i] = float32(math.Cos(float64(x[i])))
			}
		}
	case "ew_add":
		n := int(args[3].(int32))
		y, a, b := ptr(0), ptr(1), ptr(2)
		for i := 0; i < n; i++ {
			y[i] = a[i] + b[i]
		}
	}
	return nil
}

func (f *fakeDriver) LibrarySgemm(ta, tb bool, m, n, k int, a DevicePtr, lda int, b DevicePtr, ldb int, c DevicePtr, ldc int) error {
	if err := f.call("LibrarySgemm"); err != nil {
		return err
	}
	// Like cuBLAS, launch through the runtime API.
	corr := f.act.api(ActRuntime, 211)
	start, end := f.issue(5000)
	f.act.kernel("sm90_xmma_gemm_f32f32_fake", start, end, corr, Dim3{8, 8, 1}, Dim3{128, 1, 1})
	return nil
}

func (f *fakeDriver) LibraryName() string { return f.library }

func (f *fakeDriver) NewEvent() (EventID, error) {
	if err := f.call("NewEvent"); err != nil {
		return 0, err
	}
	f.nextEv++
	f.events[f.nextEv] = -1
	return f.nextEv, nil
}

func (f *fakeDriver) DestroyEvent(e EventID) error {
	if _, ok := f.events[e]; !ok {
		return fmt.Errorf("destroy of unknown event %d", e)
	}
	delete(f.events, e)
	return f.call("DestroyEvent")
}

func (f *fakeDriver) Record(e EventID) error {
	if err := f.call("Record"); err != nil {
		return err
	}
	if _, ok := f.events[e]; !ok {
		return fmt.Errorf("record of unknown event %d", e)
	}
	t, _ := f.issue(0)
	f.events[e] = t
	return nil
}

func (f *fakeDriver) SyncEvent(e EventID) error {
	if err := f.call("SyncEvent"); err != nil {
		return err
	}
	f.clk.now = max(f.clk.now, f.events[e])
	return nil
}

func (f *fakeDriver) ElapsedNs(a, b EventID) (int64, error) {
	if err := f.call("ElapsedNs"); err != nil {
		return 0, err
	}
	ta, tb := f.events[a], f.events[b]
	if ta < 0 || tb < 0 {
		return 0, &CUDAError{Call: "cuEventElapsedTime", Name: "CUDA_ERROR_INVALID_HANDLE", Code: 400}
	}
	// cuEventElapsedTime has float32 milliseconds: keep its rounding.
	return int64(math.Round(float64(float32(float64(tb-ta)/1e6)) * 1e6)), nil
}

func (f *fakeDriver) Synchronize() error {
	if err := f.call("Synchronize"); err != nil {
		return err
	}
	f.act.api(ActDriver, 17)
	f.clk.now = max(f.clk.now, f.gpu)
	return nil
}

func (f *fakeDriver) Close() error { f.closed = true; return nil }
