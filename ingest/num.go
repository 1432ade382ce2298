package ingest

import (
	"errors"
	"math"
	"strconv"
)

var errNotNumber = errors.New("not a number")

// maxTime bounds every time the reader accepts, in nanoseconds either side
// of the trace clock's zero (2^62 ns, 146 years: epoch-based timestamps
// are ~1.8e18 ns). Within it, the difference of any two times, and a time
// plus a duration, fit in int64, so no later arithmetic can wrap into a
// negative span or an absurd share.
const maxTime = 1 << 62

// parseMicrosToNanos converts a JSON number in microseconds, as written in
// the trace ("4485344487239.559"), to integer nanoseconds without going
// through float64: 4485344487239.559 µs has 16 significant digits, which a
// float64 can hold only approximately. Digits beyond nanoseconds are
// rounded half away from zero. Exponent forms fall back to float parsing,
// which is exact for the small values that use them. Values beyond maxTime
// are errors.
func parseMicrosToNanos(s string) (int64, error) {
	if s == "" {
		return 0, errNotNumber
	}
	i := 0
	neg := false
	if s[0] == '-' {
		neg = true
		i++
	}
	var whole int64
	digits := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if whole > (math.MaxInt64-9)/10/1000 {
			return 0, errNotNumber
		}
		whole = whole*10 + int64(s[i]-'0')
		digits++
	}
	if digits == 0 {
		return 0, errNotNumber
	}
	var frac int64
	fracDigits := 0
	roundUp := false
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			switch d := i - start; {
			case d < 3:
				frac = frac*10 + int64(s[i]-'0')
				fracDigits++
			case d == 3:
				roundUp = s[i] >= '5'
			}
		}
		if i == start {
			return 0, errNotNumber
		}
	}
	if i < len(s) {
		if s[i] == 'e' || s[i] == 'E' {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil || math.IsNaN(f) || math.Abs(f)*1000 > maxTime {
				return 0, errNotNumber
			}
			return int64(math.Round(f * 1000)), nil
		}
		return 0, errNotNumber
	}
	for ; fracDigits < 3; fracDigits++ {
		frac *= 10
	}
	if whole > maxTime/1000 {
		return 0, errNotNumber
	}
	n := whole*1000 + frac
	if roundUp {
		n++
	}
	if n > maxTime {
		return 0, errNotNumber
	}
	if neg {
		n = -n
	}
	return n, nil
}

// parseInt parses a JSON integer, tolerating a fractional part of zeros
// ("7.0") that some writers emit for integer fields.
func parseInt(s string) (int64, bool) {
	// Plain integers (ids, counts: most of what is parsed) are read here
	// without strconv, whose error for "null" is an allocation.
	if n, ok := plainInt(s); ok {
		return n, true
	}
	if len(s) > 0 && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		// null, true, false and words: ParseFloat reads only "inf",
		// "infinity" and "nan" of them, none of which is an integer.
		return 0, false
	}
	return strconvInt(s)
}

// strconvInt is parseInt by strconv alone: the reading parseInt's fast
// paths must match.
func strconvInt(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// plainInt reads an optional '-' and 1 to 18 decimal digits (which cannot
// overflow int64), as strconv.ParseInt would; false for anything else.
func plainInt(s string) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	d := s
	if neg {
		d = s[1:]
	}
	if len(d) == 0 || len(d) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(d); i++ {
		c := d[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
