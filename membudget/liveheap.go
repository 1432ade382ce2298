package membudget

// LiveHeap is the heap the last garbage collection found live, in bytes
// (0 where the runtime does not say): what a second trace's read must
// leave room for when the first one's model and analysis stay live (diff).
func LiveHeap() int64 { return liveHeap() }
