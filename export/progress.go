package export

import (
	"os"
	"sync"
)

// tracker adds up the progress of the inputs in flight for
// Options.Progress: bytes of finished inputs plus bytes read so far of the
// ones being read, so a bar moves while one big trace is read.
type tracker struct {
	mu      sync.Mutex
	p       Progress
	paths   []string
	sizes   []int64
	partial []int64
	report  func(Progress)
}

func newTracker(inputs []Input, report func(Progress)) *tracker {
	t := &tracker{p: Progress{Total: len(inputs)}, sizes: make([]int64, len(inputs)), partial: make([]int64, len(inputs)), report: report}
	for i, in := range inputs {
		t.paths = append(t.paths, in.Path)
		if st, err := os.Stat(in.Path); err == nil {
			t.sizes[i] = st.Size()
			t.p.TotalBytes += st.Size()
		}
	}
	return t
}

// start says input i is being exported.
func (t *tracker) start(i int) { t.update(i, func() {}) }

// reading says n bytes of input i have been read.
func (t *tracker) reading(i int, n int64) {
	t.update(i, func() {
		n = min(n, t.sizes[i])
		t.p.DoneBytes += n - t.partial[i]
		t.partial[i] = n
	})
}

// done says input i is finished, whatever the outcome.
func (t *tracker) done(i int) {
	t.update(i, func() {
		t.p.Done++
		t.p.DoneBytes += t.sizes[i] - t.partial[i]
		t.partial[i] = t.sizes[i]
	})
}

func (t *tracker) update(i int, change func()) {
	if t.report == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	change()
	t.p.Current = t.paths[i]
	t.report(t.p)
}
