package tui

import (
	"regexp"
	"strings"
)

// matcher is a compiled / filter: a Go regular expression matched
// case-insensitively, or, when the text has no regexp operator, a plain
// case-insensitive substring (the fast path, and what "aten::mm" or a
// kernel name means however it is typed).
type matcher struct {
	sub string // lower-cased substring, when re is nil
	re  *regexp.Regexp
}

// regexpMeta are the characters that make a filter a regexp.
const regexpMeta = `\.+*?()|[]{}^$`

// compileFilter compiles the filter f; the error is the regexp's, for
// the prompt line to show.
func compileFilter(f string) (matcher, error) {
	if !strings.ContainsAny(f, regexpMeta) {
		return matcher{sub: strings.ToLower(f)}, nil
	}
	re, err := regexp.Compile("(?i)" + f)
	if err != nil {
		return matcher{}, err
	}
	return matcher{re: re}, nil
}

// filterMatcher is compileFilter for a filter the model has already
// checked; one that does not compile matches everything.
func filterMatcher(f string) matcher {
	m, err := compileFilter(f)
	if err != nil {
		return matcher{}
	}
	return m
}

// match reports whether the lower-cased text s matches.
func (m matcher) match(s string) bool {
	if m.re != nil {
		return m.re.MatchString(s)
	}
	return strings.Contains(s, m.sub)
}
