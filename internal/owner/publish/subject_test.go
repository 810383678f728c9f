package publish

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func FuzzCheckSubject(f *testing.F) {
	for _, s := range []string{"booking://b_1", "urn:isbn:1", "b_1", "", "a:", ":x", "h\x00://x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkSubject(s) == nil {
			scheme, rest, ok := strings.Cut(s, ":")
			require.True(t, ok && scheme != "" && rest != "")
			require.NotContains(t, s, " ")
		}
	})
}
