package export

import (
	"github.com/tracelens/tracelens/trace"
)

// The memory table: analyze's device memory timeline (Result.Memory), from
// the allocator's [memory] events (profile_memory=True). A trace without
// them has no rows.

// Kinds of memory rows.
const (
	// MemorySample is one point of a device's timeline.
	MemorySample = "sample"
	// MemoryPeakLive is one site's allocations live at the device's peak.
	MemoryPeakLive = "peak_live"
)

// MemoryRow is one sample of a device's allocated and reserved memory
// (Kind "sample": at most 400 per device, each its time bucket's largest
// allocated total, so the peak is one of them and Peak marks it), or one
// site's allocations live at the peak (Kind "peak_live": At is the peak's
// instant, AllocatedBytes the site's live bytes, largest first).
type MemoryRow struct {
	Run string `parquet:"run,dict"`
	// Rank and WorldSize are the trace's rank in its multi-rank run and
	// the run's world size (see RunRow.Rank), NULL for a trace exported
	// on its own.
	Rank      *int32 `parquet:"rank,optional"`
	WorldSize *int32 `parquet:"world_size,optional"`
	Device    int32  `parquet:"device"`
	Kind      string `parquet:"kind,dict"`
	At        int64  `parquet:"at,timestamp(nanosecond:local)"`
	// Step is the number of the step At falls in, NULL outside steps.
	Step           *int32 `parquet:"step,optional"`
	AllocatedBytes int64  `parquet:"allocated_bytes"`
	// ReservedBytes is the allocator's reserved total (samples of traces
	// that record "Total Reserved"; NULL otherwise).
	ReservedBytes *int64 `parquet:"reserved_bytes,optional"`
	Peak          bool   `parquet:"peak"`
	// Site is where the live allocations were made (op, and Python line
	// when the trace has stacks) and Op the op alone; Blocks counts them
	// (peak_live rows; NULL for samples).
	Site   *string `parquet:"site,optional,dict"`
	Op     *string `parquet:"op,optional,dict"`
	Blocks *int32  `parquet:"blocks,optional"`
}

// memory emits each device's samples, then the sites live at its peak.
func (m *model) memory(emit func(MemoryRow) error) error {
	if m.r.Memory == nil {
		return nil
	}
	origin := m.t.Span().Start
	at := func(us float64) trace.Time { return origin + trace.Time(ns(us)) }
	for _, d := range m.r.Memory.Devices {
		peak := at(d.PeakUs)
		marked := false
		for _, p := range d.Points {
			t := at(p.AtUs)
			r := MemoryRow{Run: m.run, Rank: m.rankCol, WorldSize: m.worldCol, Device: int32(d.Device), Kind: MemorySample,
				At: m.at(t), Step: m.stepNumber(t), AllocatedBytes: p.AllocatedBytes}
			if d.HasReserved {
				v := p.ReservedBytes
				r.ReservedBytes = &v
			}
			if !marked && t == peak && p.AllocatedBytes == d.PeakAllocatedBytes {
				r.Peak, marked = true, true
			}
			if err := emit(r); err != nil {
				return err
			}
		}
		for _, s := range d.PeakLive {
			site, op, blocks := s.Site, s.Op, int32(s.Blocks)
			r := MemoryRow{Run: m.run, Rank: m.rankCol, WorldSize: m.worldCol, Device: int32(d.Device), Kind: MemoryPeakLive,
				At: m.at(peak), Step: m.stepNumber(peak), AllocatedBytes: s.Bytes, Site: &site, Op: &op, Blocks: &blocks}
			if err := emit(r); err != nil {
				return err
			}
		}
	}
	return nil
}
