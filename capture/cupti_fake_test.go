package capture

import (
	"encoding/binary"
	"fmt"
)

// fakeCUPTI writes activity records the way CUPTI lays them out (the
// CUpti_ActivityKernel8/Memcpy5/Memset4/API prefixes of the CUDA 11.8
// headers), on a clock that is the fake host clock minus base. A nil
// *fakeCUPTI records nothing, so the fake driver calls it unconditionally.
type fakeCUPTI struct {
	clk     *fakeClock
	base    int64
	buf     ActivityBuffer
	corr    uint32
	ptrs    map[string]uint64
	dropped int64
	// recordSize pads each record, as newer CUPTI versions append fields.
	recordSize int
	// paused: nothing is recorded and API calls cost no extra time.
	paused bool
	// noCopies: memcpy records are not written, as when CUPTI's MEMCPY
	// kind is not enabled.
	noCopies bool
}

func newFakeCUPTI(clk *fakeClock) *fakeCUPTI {
	return &fakeCUPTI{clk: clk, base: 1_000_000_000_000, ptrs: map[string]uint64{}, recordSize: 0,
		buf: ActivityBuffer{KernelNames: map[uint64]string{}, APINames: map[string]string{
			"driver/307": "cuLaunchKernel", "driver/276": "cuMemcpyHtoD_v2", "driver/17": "cuCtxSynchronize",
			"runtime/211": "cudaLaunchKernel_v7000"}}}
}

func (c *fakeCUPTI) record(r []byte) {
	if n := c.recordSize; n > len(r) {
		r = append(r, make([]byte, n-len(r))...)
	}
	c.buf.Records = append(c.buf.Records, len(c.buf.Data))
	c.buf.Data = append(c.buf.Data, r...)
}

// api records an API call that takes 100 ns of the host clock and returns
// its correlation id.
func (c *fakeCUPTI) api(kind ActivityKind, cbid uint32) uint32 {
	if c == nil || c.paused {
		return 0
	}
	c.corr++
	r := make([]byte, 40)
	le := binary.LittleEndian
	le.PutUint32(r, uint32(kind))
	le.PutUint32(r[4:], cbid)
	le.PutUint64(r[8:], uint64(c.clk.now+10-c.base))
	c.clk.now += 100
	le.PutUint64(r[16:], uint64(c.clk.now-10-c.base))
	le.PutUint32(r[24:], 4242)
	le.PutUint32(r[28:], 4242)
	le.PutUint32(r[32:], c.corr)
	c.record(r)
	return c.corr
}

func (c *fakeCUPTI) kernel(name string, start, end int64, corr uint32, grid, block Dim3) {
	if c == nil || c.paused {
		return
	}
	ptr, ok := c.ptrs[name]
	if !ok {
		ptr = 0x7f0000001000 + uint64(len(c.ptrs))*64
		c.ptrs[name] = ptr
		c.buf.KernelNames[ptr] = name
	}
	r := make([]byte, 200)
	le := binary.LittleEndian
	le.PutUint32(r, uint32(ActConcurrentKernel))
	le.PutUint16(r[6:], 32)
	le.PutUint64(r[16:], uint64(start-c.base))
	le.PutUint64(r[24:], uint64(end-c.base))
	le.PutUint32(r[48:], traceStream)
	le.PutUint32(r[44:], 1)
	for i, v := range []int{grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z} {
		le.PutUint32(r[52+4*i:], uint32(v))
	}
	le.PutUint32(r[76:], 1024)
	le.PutUint32(r[92:], corr)
	le.PutUint64(r[kernelNameOff:], ptr)
	c.record(r)
}

func (c *fakeCUPTI) memcpy(copyKind, src, dst uint8, bytes, start, end int64, corr uint32) {
	if c == nil || c.paused || c.noCopies {
		return
	}
	r := c.transfer(ActMemcpy, bytes, start, end, corr)
	r[4], r[5], r[6] = copyKind, src, dst
	c.record(r)
}

func (c *fakeCUPTI) memset(value uint32, bytes, start, end int64, corr uint32) {
	r := c.transfer(ActMemset, bytes, start, end, corr)
	binary.LittleEndian.PutUint32(r[4:], value)
	binary.LittleEndian.PutUint16(r[50:], 3) // device memory
	c.record(r)
}

// transfer lays out the fields memcpy and memset records share.
func (c *fakeCUPTI) transfer(kind ActivityKind, bytes, start, end int64, corr uint32) []byte {
	r := make([]byte, 88)
	le := binary.LittleEndian
	le.PutUint32(r, uint32(kind))
	le.PutUint64(r[8:], uint64(bytes))
	le.PutUint64(r[16:], uint64(start-c.base))
	le.PutUint64(r[24:], uint64(end-c.base))
	le.PutUint32(r[36:], 1)
	le.PutUint32(r[40:], traceStream)
	le.PutUint32(r[44:], corr)
	return r
}

func (c *fakeCUPTI) Timestamp() (int64, error) {
	c.clk.now += c.clk.tick
	return c.clk.now - c.base, nil
}

func (c *fakeCUPTI) Flush() ([]ActivityBuffer, error) {
	if len(c.buf.Records) == 0 {
		return nil, nil
	}
	b := c.buf
	c.buf = ActivityBuffer{KernelNames: map[uint64]string{}, APINames: b.APINames}
	for k, v := range b.KernelNames {
		c.buf.KernelNames[k] = v
	}
	return []ActivityBuffer{b}, nil
}

func (c *fakeCUPTI) Dropped() (int64, error) { return c.dropped, nil }
func (c *fakeCUPTI) Library() string         { return fmt.Sprintf("fake CUPTI (base %d)", c.base) }
func (c *fakeCUPTI) APIRecords() string      { return apiRecordsAll }
func (c *fakeCUPTI) Close() error            { return nil }
func (c *fakeCUPTI) Kinds() []string {
	return []string{"concurrent kernel", "driver API", "memcpy", "memset", "runtime API"}
}
func (c *fakeCUPTI) Pause() error  { c.paused = true; return nil }
func (c *fakeCUPTI) Resume() error { c.paused = false; return nil }
