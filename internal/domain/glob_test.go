package domain

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMatchGlob(t *testing.T) {
	t.Parallel()
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "corpus.note.changed", true},
		{"*", "", true},
		{"corpus.*", "corpus.note.changed", true},
		{"corpus.*", "corpus.", true},
		{"corpus.*", "corpus", false},
		{"corpus.*", "code.issued", false},
		{"code.*", "code.issued", true},
		{"code.issued", "code.issued", true},
		{"code.issued", "code.issued2", false},
		{"code.issue", "code.issued", false},
		{"*.issued", "code.issued", true},
		{"*.issued", "api_key.issued", true},
		{"*.note.*", "corpus.note.changed", true},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"wiki://software/*", "wiki://software/project/standmeet", true},
		{"wiki://software/*", "wiki://softwarex", false},
		{"wiki://*", "raw://x", false},
		{"", "", true},
		{"", "a", false},
		{"**", "abc", true},
	}
	for _, c := range cases {
		require.Equal(t, c.want, MatchGlob(c.pattern, c.s), "%q ~ %q", c.pattern, c.s)
	}
	require.True(t, MatchAnyGlob([]string{"x.*", "code.*"}, "code.revoked"))
	require.False(t, MatchAnyGlob(nil, "code.revoked"))
}

func TestMatchGlobIsLinearOnHostilePatterns(t *testing.T) {
	t.Parallel()
	// A naive recursive matcher takes exponential time here; ours returns.
	pattern := strings.Repeat("a*", 30) + "b"
	require.False(t, MatchGlob(pattern, strings.Repeat("a", 5000)))
}

func FuzzMatchGlob(f *testing.F) {
	f.Add("corpus.*", "corpus.note.changed")
	f.Add("*a*", "bab")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		got := MatchGlob(pattern, s)
		if !strings.Contains(pattern, "*") && got != (pattern == s) {
			t.Fatalf("literal pattern %q vs %q gave %v", pattern, s, got)
		}
		if MatchGlob("*", s) != true {
			t.Fatal("* must match everything")
		}
	})
}

func TestCanonicalGlob(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"*": "*", "**": "*", "***": "*", "corpus.*": "corpus.*", "corpus.**.x": "corpus.*.x", " code.* ": "code.*",
		"webhook.test\r\n": "webhook.test", "wiki://a/*": "wiki://a/*", "": "",
	} {
		require.Equal(t, want, CanonicalGlob(in), "%q", in)
		require.Equal(t, want, CanonicalGlob(want), "canonical is a fixed point: %q", want)
		// The canonical form matches what the spelling matched.
		for _, s := range []string{"", "corpus.note.changed", "corpus..x", "wiki://a/b", "code.issued"} {
			require.Equal(t, MatchGlob(strings.TrimSpace(in), s), MatchGlob(want, s), "%q on %q", in, s)
		}
	}
}
