package capture

import (
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// ActivityBuffer is one buffer of CUPTI activity records exactly as CUPTI
// filled it, with what is needed to read it away from the process that
// recorded it: the offsets CUPTI's own record walker
// (cuptiActivityGetNextRecord) visited, and the strings the records point
// to. Buffers recorded on a GPU machine are kept as test data, so the
// decoding below is tested on real records without a GPU.
type ActivityBuffer struct {
	// Data is the buffer's valid bytes.
	Data []byte
	// Records are the byte offsets of the records in Data, in CUPTI's
	// order; a record extends to the next offset (the last one to the end).
	Records []int
	// KernelNames maps a kernel record's name pointer to the name.
	KernelNames map[uint64]string
	// APINames maps "driver/CBID" and "runtime/CBID" to the function name
	// (cuptiGetCallbackName).
	APINames map[string]string
}

// ActivityDump is what --dump-activity writes: every buffer of a capture
// and the recorded steps' windows.
type ActivityDump struct {
	// Library is the file CUPTI was loaded from and its API version.
	Library string
	Buffers []ActivityBuffer
	Steps   []ActivityStep
}

// ActivityStep is a recorded step's host window in CUPTI's clock, and the
// offset that maps CUPTI's clock to the host's for that step.
type ActivityStep struct{ From, To, Offset int64 }

// ActivityKind is the kind of a decoded activity record.
type ActivityKind int

// The activity kinds capture records. The numbers are CUPTI's
// CUpti_ActivityKind values, the same in every CUPTI release.
const (
	ActMemcpy           ActivityKind = 1
	ActMemset           ActivityKind = 2
	ActKernel           ActivityKind = 3
	ActDriver           ActivityKind = 4
	ActRuntime          ActivityKind = 5
	ActConcurrentKernel ActivityKind = 10
)

// Activity is the part of a CUPTI activity record capture uses. Times are
// CUPTI timestamps in nanoseconds (its CPU clock; GPU times are already
// converted to it by CUPTI).
type Activity struct {
	Kind       ActivityKind
	Start, End int64
	// Correlation links a GPU record to the API call that issued it.
	Correlation uint32
	// Device, Context and Stream are set on GPU records.
	Device, Context, Stream uint32
	// Name is the kernel's name, or the API function's.
	Name string
	// Kernel launch configuration.
	Grid, Block                 [3]int32
	Registers                   int
	StaticShared, DynamicShared int32
	// Memcpy and memset.
	Bytes                      int64
	CopyKind, SrcKind, DstKind uint8
	MemoryKind                 uint16
	Value                      uint32
	// API records.
	CBID, ThreadID, Return uint32
}

// GPU reports whether the record is work on the GPU (kernel, copy, set).
func (a *Activity) GPU() bool {
	switch a.Kind {
	case ActKernel, ActConcurrentKernel, ActMemcpy, ActMemset:
		return true
	}
	return false
}

// Record layouts: the leading fields of each record kind, which every
// CUPTI release since CUDA 11 writes at the same offsets (CUDA 11.8's
// CUpti_ActivityKernel8/Memcpy5/Memset4/API; CUDA 12 and 13 append fields
// to Kernel9-11 and Memcpy6-7 but keep this prefix). The offsets are
// checked against the 11.8 headers at build time (static asserts in
// cupti_cuda.go) and against real CUDA 13 records by the buffers recorded
// on an H100 (testdata/cupti).
const (
	kernelNameOff  = 104 // const char* name
	kernelMinSize  = 112
	memcpyMinSize  = 52
	memsetMinSize  = 52
	apiMinSize     = 40
	cuptiDriverDom = 1
	cuptiRuntimDom = 2
)

// ActivityError is a record that cannot be decoded; it names the buffer and
// the byte offset of the record.
type ActivityError struct {
	Buffer, Offset int
	Msg            string
}

func (e *ActivityError) Error() string {
	return fmt.Sprintf("CUPTI activity buffer %d, record at byte %d: %s", e.Buffer, e.Offset, e.Msg)
}

// versionSuffix matches the runtime API's version suffixes
// ("cudaLaunchKernel_v7000"), which Kineto's names leave out.
var versionSuffix = regexp.MustCompile(`_v[0-9]{4,5}$`)

// APIName is the name a trace shows for an API function of CUPTI's callback
// name table: runtime version suffixes dropped, an unknown callback id
// named by its number.
func APIName(names map[string]string, kind ActivityKind, cbid uint32) string {
	dom := "driver"
	if kind == ActRuntime {
		dom = "runtime"
	}
	if n, ok := names[dom+"/"+strconv.FormatUint(uint64(cbid), 10)]; ok && n != "" {
		return versionSuffix.ReplaceAllString(n, "")
	}
	return fmt.Sprintf("%s API cbid %d", dom, cbid)
}

// DecodeActivities decodes the records of a buffer capture uses (kernels,
// copies, sets, driver and runtime API calls) and skips the other kinds.
// index names the buffer in errors. A record too short for its kind, a
// kernel without a name, or an end before its start is an error.
func DecodeActivities(b *ActivityBuffer, index int) ([]Activity, error) {
	le := binary.LittleEndian
	out := make([]Activity, 0, len(b.Records))
	for i, off := range b.Records {
		end := len(b.Data)
		if i+1 < len(b.Records) {
			end = b.Records[i+1]
		}
		if off < 0 || off+4 > end || end > len(b.Data) {
			return nil, &ActivityError{index, off, fmt.Sprintf("record offsets out of order or past the buffer's %d bytes", len(b.Data))}
		}
		r := b.Data[off:end]
		short := func(min int, what string) error {
			if len(r) < min {
				return &ActivityError{index, off, fmt.Sprintf("%s record of %d bytes, want at least %d", what, len(r), min)}
			}
			return nil
		}
		a := Activity{Kind: ActivityKind(le.Uint32(r))}
		switch a.Kind {
		case ActKernel, ActConcurrentKernel:
			if err := short(kernelMinSize, "kernel"); err != nil {
				return nil, err
			}
			a.Registers = int(le.Uint16(r[6:]))
			a.Start, a.End = int64(le.Uint64(r[16:])), int64(le.Uint64(r[24:]))
			a.Device, a.Context, a.Stream = le.Uint32(r[40:]), le.Uint32(r[44:]), le.Uint32(r[48:])
			for j := 0; j < 3; j++ {
				a.Grid[j] = int32(le.Uint32(r[52+4*j:]))
				a.Block[j] = int32(le.Uint32(r[64+4*j:]))
			}
			a.StaticShared, a.DynamicShared = int32(le.Uint32(r[76:])), int32(le.Uint32(r[80:]))
			a.Correlation = le.Uint32(r[92:])
			ptr := le.Uint64(r[kernelNameOff:])
			name, ok := b.KernelNames[ptr]
			if !ok || name == "" {
				return nil, &ActivityError{index, off, fmt.Sprintf("kernel name pointer %#x has no name in the buffer's table", ptr)}
			}
			a.Name = name
		case ActMemcpy:
			if err := short(memcpyMinSize, "memcpy"); err != nil {
				return nil, err
			}
			a.CopyKind, a.SrcKind, a.DstKind = r[4], r[5], r[6]
			a.Bytes = int64(le.Uint64(r[8:]))
			a.Start, a.End = int64(le.Uint64(r[16:])), int64(le.Uint64(r[24:]))
			a.Device, a.Context, a.Stream, a.Correlation = le.Uint32(r[32:]), le.Uint32(r[36:]), le.Uint32(r[40:]), le.Uint32(r[44:])
		case ActMemset:
			if err := short(memsetMinSize, "memset"); err != nil {
				return nil, err
			}
			a.Value = le.Uint32(r[4:])
			a.Bytes = int64(le.Uint64(r[8:]))
			a.Start, a.End = int64(le.Uint64(r[16:])), int64(le.Uint64(r[24:]))
			a.Device, a.Context, a.Stream, a.Correlation = le.Uint32(r[32:]), le.Uint32(r[36:]), le.Uint32(r[40:]), le.Uint32(r[44:])
			a.MemoryKind = le.Uint16(r[50:])
		case ActDriver, ActRuntime:
			if err := short(apiMinSize, "API"); err != nil {
				return nil, err
			}
			a.CBID = le.Uint32(r[4:])
			a.Start, a.End = int64(le.Uint64(r[8:])), int64(le.Uint64(r[16:]))
			a.ThreadID, a.Correlation, a.Return = le.Uint32(r[28:]), le.Uint32(r[32:]), le.Uint32(r[36:])
			a.Name = APIName(b.APINames, a.Kind, a.CBID)
		default:
			continue
		}
		if a.End < a.Start || a.Start <= 0 {
			return nil, &ActivityError{index, off, fmt.Sprintf("kind %d record runs from %d to %d ns", a.Kind, a.Start, a.End)}
		}
		out = append(out, a)
	}
	return out, nil
}

// memoryKindName is how Kineto names a CUpti_ActivityMemoryKind.
func memoryKindName(k uint16) string {
	switch k {
	case 1:
		return "Pageable"
	case 2:
		return "Pinned"
	case 3:
		return "Device"
	case 4:
		return "Array"
	case 5:
		return "Managed"
	case 6:
		return "Device Static"
	case 7:
		return "Managed Static"
	}
	return "Unknown"
}

// copyKindName is how Kineto names a CUpti_ActivityMemcpyKind.
func copyKindName(k uint8) string {
	switch k {
	case 1:
		return "HtoD"
	case 2:
		return "DtoH"
	case 3:
		return "HtoA"
	case 4:
		return "AtoH"
	case 5:
		return "AtoA"
	case 6:
		return "AtoD"
	case 7:
		return "DtoA"
	case 8:
		return "DtoD"
	case 9:
		return "HtoH"
	case 10:
		return "PtoP"
	}
	return "Unknown"
}

// gpuName is the trace name of a GPU record, as Kineto writes it:
// "Memcpy HtoD (Pinned -> Device)", "Memset (Device)", or the kernel's name.
func (a *Activity) gpuName() string {
	switch a.Kind {
	case ActMemcpy:
		return fmt.Sprintf("Memcpy %s (%s -> %s)", copyKindName(a.CopyKind), memoryKindName(uint16(a.SrcKind)), memoryKindName(uint16(a.DstKind)))
	case ActMemset:
		return fmt.Sprintf("Memset (%s)", memoryKindName(a.MemoryKind))
	}
	return a.Name
}

// gpuCat is the trace category of a GPU record.
func (a *Activity) gpuCat() string {
	switch a.Kind {
	case ActMemcpy:
		return "gpu_memcpy"
	case ActMemset:
		return "gpu_memset"
	}
	return "kernel"
}

// ActivityDump returns the recorded steps' CUPTI buffers (Options.KeepActivity),
// or nil when the capture did not use CUPTI.
func (r *Result) ActivityDump() *ActivityDump {
	s := r.Session
	if s == nil || s.src == nil {
		return nil
	}
	return &ActivityDump{Library: s.src.Library(), Buffers: s.Activity, Steps: s.ActivitySteps}
}

// WriteActivityDump writes d as JSON (buffers base64), gzip-compressed when
// path ends in ".gz".
func WriteActivityDump(path string, d *ActivityDump) (err error) {
	if d == nil {
		return fmt.Errorf("write %s: no CUPTI records to dump (the capture did not use CUPTI)", path)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create activity dump: %w", err)
	}
	defer func() {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", path, cerr)
		}
	}()
	var w io.Writer = f
	var zw *gzip.Writer
	if strings.HasSuffix(path, ".gz") {
		zw = gzip.NewWriter(f)
		w = zw
	}
	if err := json.NewEncoder(w).Encode(d); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return fmt.Errorf("compress %s: %w", path, err)
		}
	}
	return nil
}

// ReadActivityDump reads a file WriteActivityDump wrote.
func ReadActivityDump(path string) (*ActivityDump, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open activity dump: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		r = zr
	}
	var d ActivityDump
	if err := json.NewDecoder(r).Decode(&d); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return &d, nil
}
