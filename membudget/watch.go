package membudget

import (
	"context"
	"time"
)

// Interval is how often Watch samples the resident size. Reading /proc
// costs a few microseconds; at the 2 GB/s an analysis can allocate, 5 ms
// is 10 MB of growth between two samples.
const Interval = 5 * time.Millisecond

// Watch samples the resident size until ctx ends; when it passes Hard
// it calls stop with the Error naming the file, offset and stage, and
// returns. It does not collect first to confirm: the soft limit
// (SoftLimit) already has the collector keep garbage under the budget,
// and the other goroutines go on allocating while a collection runs
// (measured: 1.27× the budget with a confirming collection). stop is expected to end the process
// (main prints the error and exits 2): no other goroutine can be made to
// give its memory back.
func (b *Budget) Watch(ctx context.Context, stop func(*Error)) {
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if n, hard := b.rss(), b.Hard(); n > hard {
			stop(b.exceeded(n, hard))
			return
		}
	}
}
