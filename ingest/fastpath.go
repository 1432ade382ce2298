package ingest

// The fast path reads the fields of an event the way Kineto writes them:
// plain strings, well-formed numbers, an args object. It walks each byte
// once and converts nothing it does not need, where gjson's generic member
// iteration parses every number to float64 (~20% of a worker's time on a
// torch.compile trace). Anything unusual (an escape in a string the model
// keeps, a malformed literal) makes it give up, and the event is read by
// the gjson path instead, so both paths give the same model; a test holds
// them equal on every fixture and the fuzzer on arbitrary input.

// fastFields fills f from the event object text s (which the scanner has
// checked for balanced brackets and closed strings). It returns false when
// the event needs the gjson path.
func fastFields(s string, f *fields) bool {
	end := objectFields(s, 0, nil, f)
	return end >= 0 && skipWS(s, end) == len(s)
}

// objectFields fills f from the event object at s[i] and returns the index
// just past it, or -1 when the event needs the gjson path.
//
// With buf (the bytes of s) it also checks what the scanner would check,
// so that a speculative batch's events are walked once rather than scanned
// and then read (see cutEvents): outside nested values it accepts only
// whitespace, ':' and ',', whole strings and exact numbers and literals
// (all of which the scanner accepts), and it scans nested values with the
// scanner itself, one level shallower. A -1 then leaves the event to the
// scanner, which finds its end or the miss.
//
// It stays one long function: moving the member switch out (f.set, or an f.member that also walks the value) ran 1.2–1.4% more instructions in fastFields, one call more a member (cachegrind, 4 MB of the default fixture; CPU median +1.3–2.1%).
// Only the object's opening and each member's end moved out, to
// objectOpen and memberEnd, which the compiler inlines (keep them under
// its budget: -gcflags=-m says "can inline"), so they cost no call.
func objectFields(s string, i int, buf []byte, f *fields) int {
	i, done := objectOpen(s, i)
	if done {
		return i
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return -1
		}
		key, j, esc := fastString(s, i)
		if j < 0 || esc {
			return -1 // escaped keys: let gjson unescape them
		}
		i = skipWS(s, j)
		if i >= len(s) || s[i] != ':' {
			return -1
		}
		i = skipWS(s, i+1)
		if key == "args" && i < len(s) && s[i] == '{' {
			// The args object is walked here, once, its members kept for
			// forArgs: walking it to check it, then to check it again and
			// then to read it cost ~20% of a worker's time.
			if end := argMembers(s, i, buf, f); end >= 0 {
				f.args, f.argsWalked = s[i:end], true
				if i, done = memberEnd(s, end); done {
					return i
				}
				continue
			}
		}
		end, kind, escaped := memberValue(s, i, buf)
		if end < 0 {
			return -1
		}
		raw := s[i:end]
		switch key {
		case "ph", "cat", "name", "pid", "tid", "id":
			if escaped {
				return -1
			}
			text := raw
			if kind == '"' {
				text = raw[1 : len(raw)-1]
			}
			// Each field is set as the gjson path sets it, duplicate keys
			// included: the last one wins, "not a string" sticks.
			switch key {
			case "ph":
				f.ph = strOnly(kind, text)
			case "cat":
				f.cat = strOnly(kind, text)
			case "name":
				if kind == '"' {
					f.name = text
				} else {
					f.nameNotString = true
				}
			case "pid":
				f.pid = text
			case "tid":
				f.tid = text
			case "id":
				f.id = text
			}
		case "ts":
			f.hasTs = true
			numberField(kind, raw, &f.ts, &f.tsNotNumber)
		case "dur":
			f.hasDur = true
			numberField(kind, raw, &f.dur, &f.durNotNumber)
		case "args":
			if kind == '{' || kind == '[' {
				f.args, f.argsWalked = raw, false
			}
		}
		if i, done = memberEnd(s, end); done {
			return i
		}
	}
}

// objectOpen starts reading the object at s[i]: it returns the index of
// its first member and false, or, done, the index just past an empty
// object, or -1 when s[i] does not open one. Small enough to be inlined,
// it costs objectFields no call.
func objectOpen(s string, i int) (int, bool) {
	if i >= len(s) || s[i] != '{' {
		return -1, true
	}
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		return i + 1, true
	}
	return i, false
}

// memberEnd reads what follows a member's value ending at s[end]: after a
// ',' it returns the index of the next member and false; done, it returns
// the index just past the object's '}', or -1 when neither follows. Small
// enough to be inlined, it costs objectFields no call.
func memberEnd(s string, end int) (int, bool) {
	if i := skipWS(s, end); i < len(s) {
		switch s[i] {
		case ',':
			return skipWS(s, i+1), false
		case '}':
			return i + 1, true
		}
	}
	return -1, true
}

// memberValue returns the end of an event member's value at s[i], its
// kind (see fastValue) and whether a string value holds an escape. With
// buf, nested values are checked by the scanner, one level below the
// event; -1 when the fast path declines the value.
func memberValue(s string, i int, buf []byte) (end int, kind byte, escaped bool) {
	switch {
	case i < len(s) && s[i] == '"':
		// The string's walk already tells whether it holds an escape.
		_, end, escaped = fastString(s, i)
		return end, '"', escaped
	case buf != nil && i < len(s) && (s[i] == '{' || s[i] == '['):
		e, err := scanValueDepth(buf, i, maxDepth-1)
		if err != nil {
			return -1, 0, false
		}
		return e, s[i], false
	default:
		end, kind = fastValue(s, i)
		return end, kind, false
	}
}

// numberField keeps a number's text, or notes that the value is not one.
func numberField(kind byte, raw string, text *string, notNumber *bool) {
	if kind == '0' {
		*text = raw
	} else {
		*notNumber = true
	}
}

// strOnly is a field gjson reads as .Str: a string's text, "" otherwise.
func strOnly(kind byte, text string) string {
	if kind == '"' {
		return text
	}
	return ""
}

func skipWS(s string, i int) int {
	// One table lookup a byte (the scanner's): Kineto indents every member
	// line, and four comparisons a byte were 12% of a worker's instructions.
	for i < len(s) && classes[s[i]] == clsSpace {
		i++
	}
	return i
}

// fastString returns the text of the string at s[i] == '"', the index
// past it, and whether it holds an escape; -1 if unterminated.
func fastString(s string, i int) (string, int, bool) {
	esc := false
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '"':
			return s[i+1 : j], j + 1, esc
		case '\\':
			esc = true
			j++
		}
	}
	return "", -1, esc
}

// fastValue returns the end of the JSON value at s[i] and its kind: '"'
// string, '0' number, '{' object, '[' array, 'l' literal (true, false,
// null). -1 when the value is not well-formed JSON the fast path accepts.
func fastValue(s string, i int) (int, byte) {
	if i >= len(s) {
		return -1, 0
	}
	switch c := s[i]; {
	case c == '"':
		_, j, _ := fastString(s, i)
		return j, '"'
	case c == '{' || c == '[':
		return skipNested(s, i), c
	case c == '-' || c >= '0' && c <= '9':
		return numberEnd(s, i), '0'
	default:
		for _, lit := range [...]string{"true", "false", "null"} {
			if len(s)-i >= len(lit) && s[i:i+len(lit)] == lit {
				if j := i + len(lit); j == len(s) || !isWordByte(s[j]) {
					return j, 'l'
				}
			}
		}
		return -1, 0
	}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-'
}

// numberEnd returns the end of the JSON number at s[i], or -1 if the text
// there is not exactly one (gjson and strconv read malformed ones their
// own ways, which the slow path keeps).
func numberEnd(s string, i int) int {
	if s[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if !digits() {
		return -1
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return -1
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return -1
		}
	}
	if i < len(s) && isWordByte(s[i]) {
		return -1
	}
	return i
}

// skipNested returns the end of the object or array at s[i]; the scanner
// has already matched its brackets, so only strings need care.
func skipNested(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '"':
			_, j, _ := fastString(s, i)
			if j < 0 {
				return -1
			}
			i = j - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// forMembers calls fn with each member's key and raw value text of the
// object text obj, in order; nothing for an array or "". An object with an
// escaped key or anything malformed (a missing ':' or ',', a value the
// fast reader declines) is read by gjson instead, whole: fn then sees
// exactly the members gjson's lenient reading finds, never a mix.
func forMembers(obj string, fn func(k, raw string)) {
	if len(obj) == 0 || obj[0] != '{' {
		return
	}
	if !walkMembers(obj, nil) {
		slowMembers(obj, fn)
		return
	}
	walkMembers(obj, fn)
}

// walkMembers walks the members of the object text obj, calling fn (when
// not nil) with each; it reports whether the object is well formed as far
// as the fast reader can tell.
func walkMembers(obj string, fn func(k, raw string)) bool {
	i := skipWS(obj, 1)
	if i < len(obj) && obj[i] == '}' {
		return true
	}
	for i < len(obj) && obj[i] == '"' {
		key, j, esc := fastString(obj, i)
		if j < 0 || esc {
			return false
		}
		i = skipWS(obj, j)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		i = skipWS(obj, i+1)
		end, _ := fastValue(obj, i)
		if end < 0 {
			return false
		}
		if fn != nil {
			fn(key, obj[i:end])
		}
		i = skipWS(obj, end)
		switch {
		case i < len(obj) && obj[i] == ',':
			i = skipWS(obj, i+1)
		case i < len(obj) && obj[i] == '}':
			return true
		default:
			return false
		}
	}
	return false
}

// maxArgMembers is how many args members objectFields keeps; an args
// object with more (none that Kineto writes) is read by forMembers.
const maxArgMembers = 16

// argMember is one member of an event's args object, viewed in the batch.
type argMember struct{ key, raw string }

// argMembers walks the args object at s[i] == '{' as walkMembers does,
// keeping its members in f.argv, and returns the index just past it; -1
// when walkMembers would not accept it (an escaped key, anything
// malformed), when it has more than maxArgMembers members, or, with buf,
// when a nested value is not one the scanner accepts. The caller then
// reads the object the general way, so the members seen are always those
// forMembers would call its function with.
func argMembers(s string, i int, buf []byte, f *fields) int {
	f.argc = 0
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		return i + 1
	}
	for i < len(s) && s[i] == '"' {
		key, j, esc := fastString(s, i)
		if j < 0 || esc {
			return -1
		}
		i = skipWS(s, j)
		if i >= len(s) || s[i] != ':' {
			return -1
		}
		i = skipWS(s, i+1)
		var end int
		if buf != nil && i < len(s) && (s[i] == '{' || s[i] == '[') {
			// Nested two levels below the event: the args object is one.
			e, err := scanValueDepth(buf, i, maxDepth-2)
			if err != nil {
				return -1
			}
			end = e
		} else {
			end, _ = fastValue(s, i)
		}
		if end < 0 || f.argc == maxArgMembers {
			return -1
		}
		f.argv[f.argc] = argMember{key, s[i:end]}
		f.argc++
		i = skipWS(s, end)
		switch {
		case i < len(s) && s[i] == ',':
			i = skipWS(s, i+1)
		case i < len(s) && s[i] == '}':
			return i + 1
		default:
			return -1
		}
	}
	return -1
}
