package capture

import (
	"errors"
	"fmt"
	"time"
)

// Clock reads the host's monotonic clock in nanoseconds. Values from one
// Clock are comparable with each other only.
type Clock interface {
	Now() int64
}

// hostClock is the monotonic clock offset to Unix time at its creation, so
// trace timestamps look like wall-clock microseconds but never jump.
type hostClock struct{ base time.Time }

// NewHostClock returns a monotonic Clock whose zero is the Unix epoch.
func NewHostClock() Clock { return hostClock{base: time.Now()} }

func (c hostClock) Now() int64 { return c.base.UnixNano() + int64(time.Since(c.base)) }

// Calibration maps the GPU's event clock to the host clock at one moment: a
// reference event completed at host time Anchor, known to within ±Error.
type Calibration struct {
	Ref    EventID
	Anchor int64
	Error  int64
}

// calibrateTries is how many host-bracketed event records a calibration
// takes; the one with the tightest bracket wins (as NTP picks the sample with
// the shortest round trip).
const calibrateTries = 3

// calibrate records reference events on an idle stream, each bracketed by
// host clock reads, and returns the tightest one. The event's GPU timestamp
// lies between the two host reads; the midpoint is the estimate and half the
// bracket the error bound. Unused reference events go back to the pool.
func calibrate(d Driver, clk Clock, pool *eventPool) (Calibration, error) {
	if err := d.Synchronize(); err != nil {
		return Calibration{}, fmt.Errorf("calibrate event clock: %w", err)
	}
	best := Calibration{Error: -1}
	for i := 0; i < calibrateTries; i++ {
		ev, err := pool.get()
		if err != nil {
			return Calibration{}, fmt.Errorf("calibrate event clock: %w", err)
		}
		h0 := clk.Now()
		if err := d.Record(ev); err != nil {
			pool.put(ev)
			return Calibration{}, fmt.Errorf("calibrate event clock: %w", err)
		}
		if err := d.SyncEvent(ev); err != nil {
			pool.put(ev)
			return Calibration{}, fmt.Errorf("calibrate event clock: %w", err)
		}
		h1 := clk.Now()
		c := Calibration{Ref: ev, Anchor: h0 + (h1-h0)/2, Error: (h1 - h0 + 1) / 2}
		if best.Error < 0 || c.Error < best.Error {
			if best.Error >= 0 {
				pool.put(best.Ref)
			}
			best = c
		} else {
			pool.put(ev)
		}
	}
	return best, nil
}

// hostTime converts an event to host time through the calibration.
func (c Calibration) hostTime(d Driver, ev EventID) (int64, error) {
	off, err := d.ElapsedNs(c.Ref, ev)
	if err != nil {
		return 0, fmt.Errorf("event time: %w", err)
	}
	return c.Anchor + off, nil
}

// eventPool hands out CUDA events, creating them on demand, and keeps them
// for reuse until release destroys them all.
type eventPool struct {
	d    Driver
	free []EventID
	all  []EventID
}

func (p *eventPool) get() (EventID, error) {
	if n := len(p.free); n > 0 {
		e := p.free[n-1]
		p.free = p.free[:n-1]
		return e, nil
	}
	e, err := p.d.NewEvent()
	if err != nil {
		return 0, err
	}
	p.all = append(p.all, e)
	return e, nil
}

func (p *eventPool) put(e EventID) { p.free = append(p.free, e) }

// release destroys every event the pool created.
func (p *eventPool) release() error {
	var errs []error
	for _, e := range p.all {
		if err := p.d.DestroyEvent(e); err != nil {
			errs = append(errs, err)
		}
	}
	p.all, p.free = nil, nil
	return errors.Join(errs...)
}
