package ingest

// Moving GPU records into their sorted order, in place. The records are
// 128 bytes and a sorted copy would double the slice at its peak, so each
// record is moved along its permutation cycle; on one goroutine that took
// 0.55 s for 3.2 M kernels, a random read per move, while the other cores
// waited. Cycles are disjoint, so they can be moved concurrently, but the
// grouping of interleaved streams makes a few cycles of millions of
// records, and finding the cycles first is itself a serial walk as slow
// as half the moves. So every stride-th position is a cut, its record
// saved first: a task starts at a cut and moves along the cycle until the
// next cut, whose saved record it takes last. Tasks touch disjoint
// positions (each position after a cut is reached from that cut only)
// and need no plan; the cycles that hold no cut, short ones, are moved
// afterwards on one goroutine.

// permuteParallel sets g[i] to the old g[perm[i]] for every i, in up to
// workers goroutines, with a cut every stride positions; perm is left the
// identity.
func permuteParallel[T any](g []T, perm []int32, workers, stride int) {
	cuts := (len(g) + stride - 1) / stride
	saved := make([]T, cuts)
	for c := range saved {
		saved[c] = g[c*stride]
	}
	eachParallel(cuts, workers, func(c int) {
		j := c * stride
		for {
			k := int(perm[j])
			perm[j] = int32(j)
			if k%stride == 0 {
				g[j] = saved[k/stride]
				return
			}
			g[j] = g[k]
			j = k
		}
	})
	for i := range perm {
		moveCycle(g, perm, i)
	}
}

// moveCycle moves the cycle through i: g[i] becomes the old g[perm[i]],
// and so on round; each moved slot's perm is set to itself, which marks
// it done.
func moveCycle[T any](g []T, perm []int32, i int) {
	if perm[i] == int32(i) {
		return
	}
	tmp := g[i]
	j := i
	for {
		k := int(perm[j])
		perm[j] = int32(j)
		if k == i {
			g[j] = tmp
			return
		}
		g[j] = g[k]
		j = k
	}
}
