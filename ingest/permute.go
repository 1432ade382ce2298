package ingest

import "math/bits"

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
// workers goroutines, with a cut every stride positions (a power of two:
// a move tests for a cut with a mask, not a division); perm is left the
// identity. A goroutine moves lanes chains (cut to cut) at once, a move
// of each in turn: their reads are independent, so the core waits for
// several cache misses at a time instead of one (the moves are nearly
// all misses: the records are 128 bytes, read at random).
func permuteParallel[T any](g []T, perm []int32, workers, stride int) {
	cuts := (len(g) + stride - 1) / stride
	saved := make([]T, cuts)
	for c := range saved {
		saved[c] = g[c*stride]
	}
	const lanes, block = 8, 256 // chains at once; cuts a task
	mask, shift := stride-1, bits.TrailingZeros(uint(stride))
	eachParallel((cuts+block-1)/block, workers, func(b int) {
		var at [lanes]int // each lane's position, or -1
		next, end := b*block, min((b+1)*block, cuts)
		busy := 0
		for l := range at {
			at[l] = -1
			if next < end {
				at[l], next, busy = next<<shift, next+1, busy+1
			}
		}
		for busy > 0 {
			for l, j := range at {
				if j < 0 {
					continue
				}
				k := int(perm[j])
				perm[j] = int32(j)
				if k&mask != 0 {
					g[j] = g[k]
					at[l] = k
					continue
				}
				g[j] = saved[k>>shift] // the chain ends: the lane takes the next
				at[l] = -1
				if next < end {
					at[l], next = next<<shift, next+1
				} else {
					busy--
				}
			}
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
