package ingest

// misshapenMember returns the offset in s, an event object's text (which
// the scanner found balanced, its strings closed), of the first place
// where its members are not "key": value pairs separated by commas (a key
// without a value ("dur": }), a value without a key, a missing colon or
// comma, two commas), and what JSON wants there; -1 for none. gjson, which reads the events
// the fast path declines, read such an event on as if the member were
// absent: a slice with no duration, silently. Values are checked no
// further than the fast path checks them (a string, a nested object or
// array whose brackets the scanner checked, or a bare word: numbers and
// literals, and the NaN or Infinity some writers emit, which the readers
// take as they always did), so an event the fast path reads is never
// refused here.
func misshapenMember(s string) (at int, want string) {
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return i, "'{'"
	}
	if i = skipWS(s, i+1); i < len(s) && s[i] == '}' {
		return -1, ""
	}
	for {
		key := i
		if i >= len(s) || s[i] != '"' {
			return i, "a \"key\""
		}
		_, j, _ := fastString(s, i)
		if j < 0 {
			return i, "a \"key\""
		}
		if i = skipWS(s, j); i >= len(s) || s[i] != ':' {
			return i, "':' after " + s[key:j]
		}
		if i = skipWS(s, i+1); i >= len(s) || valueEnd(s, i) < 0 {
			return i, "a value after " + s[key:j] + ":"
		}
		switch i = skipWS(s, valueEnd(s, i)); {
		case i < len(s) && s[i] == '}':
			return -1, ""
		case i >= len(s) || s[i] != ',':
			return i, "',' or '}' after " + s[key:j] + "'s value"
		}
		i = skipWS(s, i+1)
	}
}

// valueEnd is the end of the member value at s[i] as misshapenMember
// takes it, or -1 when no value starts there.
func valueEnd(s string, i int) int {
	switch c := s[i]; {
	case c == '"':
		_, j, _ := fastString(s, i)
		return j
	case c == '{' || c == '[':
		return skipNested(s, i)
	}
	j := i
	for j < len(s) && isWordByte(s[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
