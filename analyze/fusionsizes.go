package analyze

import "unsafe"

// sizeCache remembers the bytes of an op's first input (firstTensorBytes)
// by the op's input dims and types text. The reader interns those texts
// (one copy per reading worker), and a chain's ops repeat a few shapes:
// a slot picked by the texts' addresses answers most ops without hashing
// the texts. The map behind the slots holds the texts by value, so equal
// texts at two addresses share one answer (the answer depends on the
// texts alone).
type sizeCache struct {
	slots  [256]sizeSlot
	byText map[[2]string]int64
}

// sizeSlot is the last dims and types met in one of sizeCache's slots:
// their addresses and lengths, and the bytes. The zero slot holds two
// empty texts and 0 bytes, which is their answer.
type sizeSlot struct {
	dims, types   *byte
	ndims, ntypes int
	bytes         int64
}

// of returns firstTensorBytes(dims, types), computed the first time the
// texts are met.
func (c *sizeCache) of(dims, types string) int64 {
	pd, pt := unsafe.StringData(dims), unsafe.StringData(types)
	a := uintptr(unsafe.Pointer(pd))*31 + uintptr(unsafe.Pointer(pt))
	s := &c.slots[(a^a>>8^a>>16)&255]
	if s.dims == pd && s.types == pt && s.ndims == len(dims) && s.ntypes == len(types) {
		return s.bytes
	}
	k := [2]string{dims, types}
	b, ok := c.byText[k]
	if !ok {
		if c.byText == nil {
			c.byText = map[[2]string]int64{}
		}
		b = firstTensorBytes(dims, types)
		c.byText[k] = b
	}
	*s = sizeSlot{pd, pt, len(dims), len(types), b}
	return b
}
