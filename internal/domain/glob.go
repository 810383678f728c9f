package domain

import "strings"

// MatchGlob reports whether s matches pattern, where '*' matches any run of
// characters (dots and slashes included) and every other character matches
// itself. It is the one glob used everywhere: event-type subscriptions
// ("corpus.*", "*"), endpoint filters and the URI globs of access roles
// ("wiki://software/*").
func MatchGlob(pattern, s string) bool {
	// Iterative wildcard matching with single backtrack point: linear in
	// practice, never exponential on hostile patterns.
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// MatchAnyGlob reports whether s matches at least one of patterns.
func MatchAnyGlob(patterns []string, s string) bool {
	for _, p := range patterns {
		if MatchGlob(p, s) {
			return true
		}
	}
	return false
}

// CanonicalGlob returns the one spelling of pattern: no white space around
// it and no run of '*' (which matches what one '*' matches). Two spellings of
// one glob would be two subscriptions or grants that look different and are
// the same, so inputs take only this one.
func CanonicalGlob(pattern string) string {
	p := strings.TrimSpace(pattern)
	for strings.Contains(p, "**") {
		p = strings.ReplaceAll(p, "**", "*")
	}
	return p
}
