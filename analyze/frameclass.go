package analyze

import (
	"sync/atomic"
	"unsafe"

	"github.com/tracelens/tracelens/trace"
)

// frameClass is what a frame's name says to the user-frame walk: whether
// it has a source location and, with one, whether that lies in the
// user's code.
type frameClass uint8

// The classes; zero is no class, so an empty cache slot matches none.
const (
	frameUnlocated frameClass = iota + 1 // no source location ("<built-in ...>")
	frameLibrary                         // located in a library (libraryFile)
	frameUser                            // located in the user's code
)

// classOfName parses name into its class.
func classOfName(name string) frameClass {
	file, _, _, ok := trace.ParseFrameName(name)
	switch {
	case !ok:
		return frameUnlocated
	case libraryFile(file):
		return frameLibrary
	}
	return frameUser
}

// frameClasses memoises classOfName by the name's address and length. A
// trace's frames repeat a few dozen names (23 over 674 k frames on the
// copies class) that the reader interns, and parsing a name and testing
// its path against the library directories was two thirds of the walk's
// time. A slot packs the address, the length and the class into one
// word, read and written atomically: the finding analyzers walk side by
// side, and a slot needs no allocation (names that are not interned
// only miss). The names are the trace's, alive as long as the frames
// that hold them, so an address names one string for the cache's life.
type frameClasses struct {
	slots [classSlots]atomic.Uint64
}

// classSlots is the number of slots (a power of two).
const classSlots = 512

// Packing a slot: the address in the low 48 bits, the length in the
// next 14 and the class in the top 2. A name at a higher address or
// longer is not cached, only classified.
const (
	classAddrBits = 48
	classLenBits  = 14
)

// of returns name's class.
func (c *frameClasses) of(name string) frameClass {
	a := uint64(uintptr(unsafe.Pointer(unsafe.StringData(name))))
	n := uint64(len(name))
	if a == 0 || a>>classAddrBits != 0 || n>>classLenBits != 0 {
		return classOfName(name)
	}
	key := a | n<<classAddrBits
	s := &c.slots[(a^a>>9^a>>18)&(classSlots-1)]
	if v := s.Load(); v&^(3<<62) == key {
		return frameClass(v >> 62)
	}
	cl := classOfName(name)
	s.Store(key | uint64(cl)<<62)
	return cl
}
