package analyze

import "unsafe"

// nameCache memoises a value per name (an op's row, whether a name is
// torch.compile's), for loops over every op. A trace has a few dozen
// distinct op names over hundreds of thousands of ops, and the reader
// interns them (one copy per reading worker): a slot picked by the name's
// address answers most lookups without hashing the name. The map behind
// the slots holds every name by value, so equal names at two addresses
// share one value.
type nameCache[V any] struct {
	slots  [512]nameSlot[V]
	byName map[string]V
}

// nameSlot is the last name met in one of nameCache's slots: its
// address, length and value.
type nameSlot[V any] struct {
	p *byte
	n int
	v V
}

// get returns name's value, made by newValue the first time name is met.
func (c *nameCache[V]) get(name string, newValue func(string) V) V {
	p := unsafe.StringData(name)
	a := uintptr(unsafe.Pointer(p))
	s := &c.slots[(a^a>>9^a>>18)&511]
	if s.p == p && s.n == len(name) && p != nil {
		return s.v
	}
	v, ok := c.byName[name]
	if !ok {
		if c.byName == nil {
			c.byName = map[string]V{}
		}
		v = newValue(name)
		c.byName[name] = v
	}
	*s = nameSlot[V]{p, len(name), v}
	return v
}
