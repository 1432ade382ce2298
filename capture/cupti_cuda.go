//go:build cuda

package capture

/*
#cgo LDFLAGS: -ldl -lpthread
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The record prefixes activity.go decodes, checked against the headers this
// is built with (CUDA 11.8's): newer CUPTI releases append fields only.
_Static_assert(offsetof(CUpti_ActivityKernel8, registersPerThread) == 6, "kernel layout");
_Static_assert(offsetof(CUpti_ActivityKernel8, start) == 16, "kernel layout");
_Static_assert(offsetof(CUpti_ActivityKernel8, streamId) == 48, "kernel layout");
_Static_assert(offsetof(CUpti_ActivityKernel8, gridX) == 52, "kernel layout");
_Static_assert(offsetof(CUpti_ActivityKernel8, blockX) == 64, "kernel layout");
_Static_assert(offsetof(CUpti_ActivityKernel8, staticSharedMemory) == 76, "kernel layout");
_Static_assert(offsetof(CUpti_ActivityKernel8, correlationId) == 92, "kernel layout");
_Static_assert(offsetof(CUpti_ActivityKernel8, name) == 104, "kernel layout");
_Static_assert(offsetof(CUpti_ActivityMemcpy5, bytes) == 8, "memcpy layout");
_Static_assert(offsetof(CUpti_ActivityMemcpy5, deviceId) == 32, "memcpy layout");
_Static_assert(offsetof(CUpti_ActivityMemcpy5, correlationId) == 44, "memcpy layout");
_Static_assert(offsetof(CUpti_ActivityMemset4, correlationId) == 44, "memset layout");
_Static_assert(offsetof(CUpti_ActivityMemset4, memoryKind) == 50, "memset layout");
_Static_assert(offsetof(CUpti_ActivityAPI, start) == 8, "API layout");
_Static_assert(offsetof(CUpti_ActivityAPI, correlationId) == 32, "API layout");
_Static_assert(sizeof(CUpti_ActivityAPI) == 40, "API layout");

typedef CUptiResult (*tl_enable_fn)(CUpti_ActivityKind);
typedef CUptiResult (*tl_register_fn)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
typedef CUptiResult (*tl_flush_fn)(uint32_t);
typedef CUptiResult (*tl_next_fn)(uint8_t*, size_t, CUpti_Activity**);
typedef CUptiResult (*tl_dropped_fn)(CUcontext, uint32_t, size_t*);
typedef CUptiResult (*tl_ts_fn)(uint64_t*);
typedef CUptiResult (*tl_cbname_fn)(CUpti_CallbackDomain, uint32_t, const char**);
typedef CUptiResult (*tl_version_fn)(uint32_t*);
typedef CUptiResult (*tl_errstr_fn)(CUptiResult, const char**);
typedef CUptiResult (*tl_apienable_fn)(CUpti_CallbackId, uint8_t);
typedef CUptiResult (*tl_setattr_fn)(CUpti_ActivityAttribute, size_t*, void*);

typedef struct tl_buf {
	uint8_t* data;
	size_t valid;
	struct tl_buf* next;
} tl_buf;

// One CUPTI per process: its callbacks take no user pointer, so the state
// they fill is the library's own, guarded by a mutex (CUPTI may complete
// buffers on its own thread).
static struct {
	void* lib;
	tl_enable_fn enable, disable;
	tl_register_fn reg;
	tl_flush_fn flush;
	tl_next_fn next;
	tl_dropped_fn dropped;
	tl_ts_fn ts;
	tl_cbname_fn cbname;
	tl_version_fn version;
	tl_errstr_fn errstr;
	// Per-function switches for API records (CUPTI 12.5 and newer; NULL
	// before): see tl_api_enable.
	tl_apienable_fn driverApi, runtimeApi;
	tl_setattr_fn setattr;
	pthread_mutex_t mu;
	tl_buf* head;
	tl_buf* tail;
	uint64_t ndropped;
	int nomem;
	// Buffers handed back, for reuse: their pages are already mapped, so
	// a request in the middle of a step costs no page faults.
	uint8_t* spare[16];
	int nspare;
	// The kinds enabled (a subset of tl_all_kinds).
	CUpti_ActivityKind kinds[8];
	size_t nkinds;
} tl_cupti = {.mu = PTHREAD_MUTEX_INITIALIZER};

// 8 MiB a buffer: a 10 000-launch step fills about 3 MiB of records, so a
// buffer is asked for at most every other step of that size.
#define TL_BUF_SIZE (8u << 20)
// Buffers allocated when CUPTI is opened, before any step: 64 MiB.
#define TL_RESERVE 8

// tl_new_buf allocates a zeroed buffer with every page already touched:
// CUPTI is told (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER) that the
// buffers it gets are zero, so it does not clear them on the launching
// thread, and writing records causes no page faults inside a step.
static uint8_t* tl_new_buf(void) {
	uint8_t* b = (uint8_t*)aligned_alloc(8, TL_BUF_SIZE);
	if (b) memset(b, 0, TL_BUF_SIZE);
	return b;
}

static void CUPTIAPI tl_requested(uint8_t** buffer, size_t* size, size_t* maxRecords) {
	pthread_mutex_lock(&tl_cupti.mu);
	uint8_t* b = tl_cupti.nspare > 0 ? tl_cupti.spare[--tl_cupti.nspare] : 0;
	pthread_mutex_unlock(&tl_cupti.mu);
	if (!b) b = tl_new_buf();
	*buffer = b;
	*size = b ? TL_BUF_SIZE : 0;
	*maxRecords = 0;
	if (!b) {
		pthread_mutex_lock(&tl_cupti.mu);
		tl_cupti.nomem = 1;
		pthread_mutex_unlock(&tl_cupti.mu);
	}
}

static void CUPTIAPI tl_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) {
	size_t dropped = 0;
	tl_cupti.dropped(ctx, stream, &dropped);
	tl_buf* b = (tl_buf*)calloc(1, sizeof(tl_buf));
	pthread_mutex_lock(&tl_cupti.mu);
	tl_cupti.ndropped += dropped;
	if (!b) {
		tl_cupti.nomem = 1;
		free(buffer);
	} else {
		b->data = buffer;
		b->valid = valid;
		if (tl_cupti.tail) tl_cupti.tail->next = b; else tl_cupti.head = b;
		tl_cupti.tail = b;
	}
	pthread_mutex_unlock(&tl_cupti.mu);
}

static const char* tl_err(CUptiResult r) {
	const char* s = 0;
	if (tl_cupti.errstr && tl_cupti.errstr(r, &s) == CUPTI_SUCCESS && s) return s;
	return "CUPTI error";
}

// Record kinds, enabled by tl_cupti_open's mask (tlKind* in Go).
// CONCURRENT_KERNEL, as Kineto: it costs each thread block ~7-12 ns per SM
// of execution (+6 % on 65 536-block streaming kernels), but KERNEL, which
// leaves execution alone, serializes kernels and adds 2.6 us to each
// record and 1.9 us to each gap (fixtures/capture/README.md, measured
// against the kernels' own global-timer stamps). Every enabled kind costs
// host time in every launch, even one it records nothing of (RUNTIME,
// MEMCPY and MEMSET together ~0.15 us per cuLaunchKernel on the H100), so
// only those the workload needs are enabled.
static const CUpti_ActivityKind tl_all_kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
};
#define TL_MAXKINDS (sizeof(tl_all_kinds) / sizeof(tl_all_kinds[0]))
_Static_assert(TL_MAXKINDS <= sizeof(tl_cupti.kinds) / sizeof(tl_cupti.kinds[0]), "kinds");

// tl_cupti_open loads CUPTI from path, resolves what capture calls,
// registers the buffer callbacks and enables the record kinds. On failure
// it returns a message (static or from CUPTI) and leaves nothing enabled.
static const char* tl_cupti_open(const char* path, unsigned mask) {
	if (tl_cupti.lib) return "CUPTI is already open in this process";
	void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) return dlerror();
	tl_cupti.enable = (tl_enable_fn)dlsym(lib, "cuptiActivityEnable");
	tl_cupti.disable = (tl_enable_fn)dlsym(lib, "cuptiActivityDisable");
	tl_cupti.reg = (tl_register_fn)dlsym(lib, "cuptiActivityRegisterCallbacks");
	tl_cupti.flush = (tl_flush_fn)dlsym(lib, "cuptiActivityFlushAll");
	tl_cupti.next = (tl_next_fn)dlsym(lib, "cuptiActivityGetNextRecord");
	tl_cupti.dropped = (tl_dropped_fn)dlsym(lib, "cuptiActivityGetNumDroppedRecords");
	tl_cupti.ts = (tl_ts_fn)dlsym(lib, "cuptiGetTimestamp");
	tl_cupti.cbname = (tl_cbname_fn)dlsym(lib, "cuptiGetCallbackName");
	tl_cupti.version = (tl_version_fn)dlsym(lib, "cuptiGetVersion");
	tl_cupti.errstr = (tl_errstr_fn)dlsym(lib, "cuptiGetResultString");
	tl_cupti.driverApi = (tl_apienable_fn)dlsym(lib, "cuptiActivityEnableDriverApi");
	tl_cupti.runtimeApi = (tl_apienable_fn)dlsym(lib, "cuptiActivityEnableRuntimeApi");
	tl_cupti.setattr = (tl_setattr_fn)dlsym(lib, "cuptiActivitySetAttribute");
	if (!tl_cupti.enable || !tl_cupti.disable || !tl_cupti.reg || !tl_cupti.flush || !tl_cupti.next ||
	    !tl_cupti.dropped || !tl_cupti.ts || !tl_cupti.cbname || !tl_cupti.version) {
		dlclose(lib);
		return "the library lacks a CUPTI Activity API function (cuptiActivityEnable, cuptiGetTimestamp, ...)";
	}
	if (tl_cupti.setattr) {
		// Best effort: if CUPTI refuses, it clears the buffers itself.
		uint8_t zeroed = 1;
		size_t sz = sizeof(zeroed);
		tl_cupti.setattr(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &sz, &zeroed);
	}
	pthread_mutex_lock(&tl_cupti.mu);
	while (tl_cupti.nspare < TL_RESERVE) {
		uint8_t* b = tl_new_buf();
		if (!b) break; // tl_requested allocates later, or reports no memory
		tl_cupti.spare[tl_cupti.nspare++] = b;
	}
	pthread_mutex_unlock(&tl_cupti.mu);
	CUptiResult r = tl_cupti.reg(tl_requested, tl_completed);
	if (r != CUPTI_SUCCESS) {
		const char* m = tl_err(r);
		dlclose(lib);
		return m;
	}
	tl_cupti.nkinds = 0;
	for (size_t i = 0; i < TL_MAXKINDS; i++)
		if (mask & (1u << i)) tl_cupti.kinds[tl_cupti.nkinds++] = tl_all_kinds[i];
	for (size_t i = 0; i < tl_cupti.nkinds; i++) {
		r = tl_cupti.enable(tl_cupti.kinds[i]);
		if (r != CUPTI_SUCCESS) {
			const char* m = tl_err(r);
			for (size_t j = 0; j < i; j++) tl_cupti.disable(tl_cupti.kinds[j]);
			// The library stays loaded: CUPTI cannot be unloaded once
			// its callbacks are registered.
			return m;
		}
	}
	tl_cupti.lib = lib;
	return 0;
}

// tl_cupti_switch enables (on) or disables every record kind capture uses.
// The per-function API switches (tl_api_enable) are kept by CUPTI across
// this.
static const char* tl_cupti_switch(int on) {
	for (size_t i = 0; i < tl_cupti.nkinds; i++) {
		CUptiResult r = on ? tl_cupti.enable(tl_cupti.kinds[i]) : tl_cupti.disable(tl_cupti.kinds[i]);
		if (r != CUPTI_SUCCESS) return tl_err(r);
	}
	return 0;
}

// tl_api_filter reports whether this CUPTI can switch API records on and
// off per function.
static int tl_api_filter(void) { return tl_cupti.driverApi && tl_cupti.runtimeApi; }

// tl_api_enable switches the records of one driver (domain 1) or runtime
// (domain 2) API function on or off.
static const char* tl_api_enable(int domain, uint32_t cbid, int on) {
	tl_apienable_fn f = domain == 1 ? tl_cupti.driverApi : tl_cupti.runtimeApi;
	if (!f) return "no per-function API record switch in this CUPTI";
	CUptiResult r = f((CUpti_CallbackId)cbid, on ? 1 : 0);
	return r == CUPTI_SUCCESS ? 0 : tl_err(r);
}

static const char* tl_cupti_flush(void) {
	CUptiResult r = tl_cupti.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	return r == CUPTI_SUCCESS ? 0 : tl_err(r);
}

// tl_cupti_take detaches the completed buffers.
static tl_buf* tl_cupti_take(uint64_t* dropped, int* nomem) {
	pthread_mutex_lock(&tl_cupti.mu);
	tl_buf* h = tl_cupti.head;
	tl_cupti.head = tl_cupti.tail = 0;
	*dropped = tl_cupti.ndropped;
	*nomem = tl_cupti.nomem;
	pthread_mutex_unlock(&tl_cupti.mu);
	return h;
}

static uint64_t tl_cupti_dropped(void) {
	pthread_mutex_lock(&tl_cupti.mu);
	uint64_t d = tl_cupti.ndropped;
	pthread_mutex_unlock(&tl_cupti.mu);
	return d;
}

// tl_buf_free keeps a handed-back buffer for reuse, cleared again (CUPTI
// expects zeroed buffers), or frees it when enough are kept. It runs when
// capture flushes, after the steps.
static void tl_buf_free(tl_buf* b) {
	if (b->data) memset(b->data, 0, TL_BUF_SIZE);
	pthread_mutex_lock(&tl_cupti.mu);
	if (tl_cupti.nspare < (int)(sizeof(tl_cupti.spare) / sizeof(tl_cupti.spare[0]))) {
		tl_cupti.spare[tl_cupti.nspare++] = b->data;
		b->data = 0;
	}
	pthread_mutex_unlock(&tl_cupti.mu);
	free(b->data);
	free(b);
}

// tl_walk stores the offsets of up to cap records of b in offs and returns
// how many the buffer holds (more than cap: call again with a larger offs).
static size_t tl_walk(tl_buf* b, size_t* offs, size_t cap) {
	CUpti_Activity* rec = 0;
	size_t n = 0;
	while (tl_cupti.next(b->data, b->valid, &rec) == CUPTI_SUCCESS) {
		if (n < cap) offs[n] = (size_t)((uint8_t*)rec - b->data);
		n++;
	}
	return n;
}

// tl_kernel_name reads the name pointer of the kernel record at off.
static const char* tl_kernel_name(tl_buf* b, size_t off, uint64_t* ptr) {
	const char* name = ((CUpti_ActivityKernel8*)(b->data + off))->name;
	*ptr = (uint64_t)(uintptr_t)name;
	return name;
}

static const char* tl_cbname(int domain, uint32_t cbid) {
	const char* s = 0;
	if (tl_cupti.cbname((CUpti_CallbackDomain)domain, cbid, &s) != CUPTI_SUCCESS) return 0;
	return s;
}

static const char* tl_timestamp(uint64_t* t) {
	CUptiResult r = tl_cupti.ts(t);
	return r == CUPTI_SUCCESS ? 0 : tl_err(r);
}

static uint32_t tl_version(void) {
	uint32_t v = 0;
	tl_cupti.version(&v);
	return v;
}

static void tl_cupti_stop(void) {
	for (size_t i = 0; i < tl_cupti.nkinds; i++) tl_cupti.disable(tl_cupti.kinds[i]);
	tl_cupti.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	uint64_t d;
	int nm;
	for (tl_buf* b = tl_cupti_take(&d, &nm); b;) {
		tl_buf* n = b->next;
		tl_buf_free(b);
		b = n;
	}
}
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"
)

// cuptiNames are the sonames tried in order when CUPTI_PATH is not set:
// the unversioned name first (a CUDA toolkit's development link), then the
// releases' own sonames.
var cuptiNames = []string{"libcupti.so", "libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8"}

// cuptiDirs are where CUDA toolkits install CUPTI outside the loader's
// path; tried after the sonames.
var cuptiDirs = []string{"/usr/local/cuda/extras/CUPTI/lib64", "/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"}

type cuptiSource struct {
	path    string
	version int
	names   map[string]string
	api     string
	// paused: the record kinds are switched off (Pause).
	paused bool
	kinds  []string
}

// OpenCUPTI loads CUPTI at run time and starts recording kernel, memcpy,
// memset, driver and runtime API activity (which API calls: cfg).
// cuptiPath (CUPTI_PATH) is a library file or a folder holding one; empty,
// the sonames are tried, then the CUDA toolkit's usual folders. Call it
// before the CUDA context is created. The error says every place tried.
func OpenCUPTI(cuptiPath string, cfg CUPTIConfig) (ActivitySource, error) {
	var tries []string
	if cuptiPath != "" {
		if st, err := os.Stat(cuptiPath); err == nil && st.IsDir() {
			for _, n := range cuptiNames {
				tries = append(tries, filepath.Join(cuptiPath, n))
			}
		} else {
			tries = []string{cuptiPath}
		}
	} else {
		tries = append(tries, cuptiNames...)
		for _, d := range cuptiDirs {
			for _, n := range cuptiNames {
				tries = append(tries, filepath.Join(d, n))
			}
		}
	}
	var errs []error
	for _, p := range tries {
		cp := C.CString(p)
		msg := C.tl_cupti_open(cp, C.uint(cfg.kindMask()))
		C.free(unsafe.Pointer(cp))
		if msg == nil {
			c := &cuptiSource{path: p, version: int(C.tl_version()), names: map[string]string{}, kinds: cfg.kindNames()}
			if err := c.selectAPIRecords(cfg); err != nil {
				C.tl_cupti_stop()
				return nil, fmt.Errorf("load CUPTI: %s: %w", p, err)
			}
			return c, nil
		}
		errs = append(errs, fmt.Errorf("%s: %s", p, C.GoString(msg)))
		if !isMissing(C.GoString(msg)) {
			break // found but unusable: do not go on to other copies
		}
	}
	return nil, fmt.Errorf("load CUPTI: %w", errors.Join(errs...))
}

// isMissing tells a dlopen "no such file" from a library that loaded but
// failed.
func isMissing(msg string) bool {
	return strings.Contains(msg, "No such file") || strings.Contains(msg, "cannot open shared object")
}

func (c *cuptiSource) Timestamp() (int64, error) {
	var t C.uint64_t
	if msg := C.tl_timestamp(&t); msg != nil {
		return 0, fmt.Errorf("cuptiGetTimestamp: %s", C.GoString(msg))
	}
	return int64(t), nil
}

func (c *cuptiSource) Flush() ([]ActivityBuffer, error) {
	if msg := C.tl_cupti_flush(); msg != nil {
		return nil, fmt.Errorf("cuptiActivityFlushAll: %s", C.GoString(msg))
	}
	var dropped C.uint64_t
	var nomem C.int
	var out []ActivityBuffer
	for b := C.tl_cupti_take(&dropped, &nomem); b != nil; {
		out = append(out, c.copyBuffer(b))
		next := b.next
		C.tl_buf_free(b)
		b = next
	}
	if nomem != 0 {
		return nil, errors.New("out of memory for CUPTI activity buffers")
	}
	return out, nil
}

// copyBuffer copies a completed buffer into Go memory with its record
// offsets and the strings its records point to.
func (c *cuptiSource) copyBuffer(b *C.tl_buf) ActivityBuffer {
	n := C.tl_walk(b, nil, 0)
	offs := make([]C.size_t, max(int(n), 1))
	C.tl_walk(b, &offs[0], n)
	ab := ActivityBuffer{Data: C.GoBytes(unsafe.Pointer(b.data), C.int(b.valid)), Records: make([]int, n),
		KernelNames: map[uint64]string{}, APINames: map[string]string{}}
	le := binary.LittleEndian
	for i := 0; i < int(n); i++ {
		off := int(offs[i])
		ab.Records[i] = off
		if off+4 > len(ab.Data) {
			continue // DecodeActivities reports it
		}
		switch ActivityKind(le.Uint32(ab.Data[off:])) {
		case ActKernel, ActConcurrentKernel:
			if off+kernelMinSize <= len(ab.Data) {
				var ptr C.uint64_t
				name := C.tl_kernel_name(b, offs[i], &ptr)
				if name != nil {
					ab.KernelNames[uint64(ptr)] = C.GoString(name)
				}
			}
		case ActDriver, ActRuntime:
			if off+8 <= len(ab.Data) {
				dom, key := apiDomainDriver, "driver/"
				if ActivityKind(le.Uint32(ab.Data[off:])) == ActRuntime {
					dom, key = apiDomainRuntime, "runtime/"
				}
				cbid := le.Uint32(ab.Data[off+4:])
				key += strconv.FormatUint(uint64(cbid), 10)
				if _, ok := c.names[key]; !ok {
					if s := C.tl_cbname(C.int(dom), C.uint32_t(cbid)); s != nil {
						c.names[key] = C.GoString(s)
					} else {
						c.names[key] = ""
					}
				}
				if c.names[key] != "" {
					ab.APINames[key] = c.names[key]
				}
			}
		}
	}
	return ab
}

// CUPTI's callback domains of the driver and runtime API.
const (
	apiDomainDriver  = 1
	apiDomainRuntime = 2
)

// maxCBID bounds the callback ids probed for names: CUDA 13.0 has about
// 850 driver and 500 runtime functions; ids without a name are skipped.
const maxCBID = 4096

// selectAPIRecords switches off the API records of every driver and
// runtime function that wantedAPI does not keep, unless cfg asks for all
// or this CUPTI cannot switch them per function (then all are recorded and
// APIRecords says so).
func (c *cuptiSource) selectAPIRecords(cfg CUPTIConfig) error {
	if cfg.AllAPI {
		c.api = apiRecordsAll
		return nil
	}
	if C.tl_api_filter() == 0 {
		c.api = apiRecordsAll + " (this CUPTI has no per-function switch, cuptiActivityEnableDriverApi)"
		return nil
	}
	var kept, off [3]int
	for _, dom := range []int{apiDomainDriver, apiDomainRuntime} {
		for cbid := 1; cbid < maxCBID; cbid++ {
			s := C.tl_cbname(C.int(dom), C.uint32_t(cbid))
			if s == nil {
				continue
			}
			if wantedAPI(C.GoString(s)) {
				kept[dom]++
				continue
			}
			if msg := C.tl_api_enable(C.int(dom), C.uint32_t(cbid), 0); msg != nil {
				return fmt.Errorf("switch off API records of %s (cbid %d): %s", C.GoString(s), cbid, C.GoString(msg))
			}
			off[dom]++
		}
	}
	c.api = fmt.Sprintf("%s (%d of %d driver and %d of %d runtime functions)", apiRecordsCalls,
		kept[apiDomainDriver], kept[apiDomainDriver]+off[apiDomainDriver], kept[apiDomainRuntime], kept[apiDomainRuntime]+off[apiDomainRuntime])
	return nil
}

func (c *cuptiSource) APIRecords() string { return c.api }

func (c *cuptiSource) Kinds() []string { return c.kinds }

func (c *cuptiSource) Pause() error { return c.switchRecords(false) }

func (c *cuptiSource) Resume() error { return c.switchRecords(true) }

// switchRecords enables or disables the record kinds, once per change:
// CUPTI counts nothing, but a redundant enable is a needless call.
func (c *cuptiSource) switchRecords(on bool) error {
	if c.paused != on {
		return nil
	}
	o := C.int(0)
	if on {
		o = 1
	}
	if msg := C.tl_cupti_switch(o); msg != nil {
		return fmt.Errorf("cuptiActivityEnable/Disable: %s", C.GoString(msg))
	}
	c.paused = !on
	return nil
}

func (c *cuptiSource) Dropped() (int64, error) {
	return int64(C.tl_cupti_dropped()), nil
}

func (c *cuptiSource) Library() string {
	return fmt.Sprintf("%s, CUPTI API version %d", c.path, c.version)
}

func (c *cuptiSource) Close() error {
	C.tl_cupti_stop()
	return nil
}
