package analyze

// nameMemo remembers an answer per name: the last name in each of a few
// slots, picked from the name's length and three of its bytes, is
// compared before a map is asked. A trace's millions of API calls, ops
// and Python frames repeat a few dozen names, so most lookups end at a
// slot, without hashing the name; a test over the name (substring
// searches, lowering a launch's capitals) runs once per distinct name.
// The zero value is ready to use; one memo serves one goroutine.
type nameMemo[V any] struct {
	slot [64]struct {
		name string
		v    V
		ok   bool
	}
	known map[string]V
}

// of returns the answer for name, computing it with answer the first
// time name is asked.
func (m *nameMemo[V]) of(name string, answer func(string) V) V {
	h := uint(len(name))
	if len(name) > 0 {
		h = h*31 + uint(name[0])
		h = h*31 + uint(name[len(name)/2])
		h = h*31 + uint(name[len(name)-1])
	}
	s := &m.slot[h%uint(len(m.slot))]
	if s.ok && s.name == name {
		return s.v
	}
	v, seen := m.known[name]
	if !seen {
		if m.known == nil {
			m.known = map[string]V{}
		}
		v = answer(name)
		m.known[name] = v
	}
	s.name, s.v, s.ok = name, v, true
	return v
}
