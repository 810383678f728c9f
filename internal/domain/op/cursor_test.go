package op

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
)

func TestKeysetCursorRoundTrip(t *testing.T) {
	t.Parallel()
	c := KeysetCursor{At: time.Date(2026, 11, 30, 6, 1, 2, 123456000, time.UTC), ID: uuid.New()}
	got, err := ParseKeysetCursor(c.String())
	require.NoError(t, err)
	require.Equal(t, c, *got)
	none, err := ParseKeysetCursor("")
	require.NoError(t, err)
	require.Nil(t, none)
	for _, bad := range []string{"!!", "bm90LWEtY3Vyc29y", "MTIz", "eCwx"} {
		_, err := ParseKeysetCursor(bad)
		require.ErrorIs(t, err, domain.Validation("INVALID_CURSOR", ""), bad)
	}
}

func FuzzParseKeysetCursor(f *testing.F) {
	f.Add(KeysetCursor{At: time.Unix(1, 0), ID: uuid.Nil}.String())
	f.Add("garbage")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseKeysetCursor(s)
		if err == nil && c != nil {
			again, err := ParseKeysetCursor(c.String())
			if err != nil || *again != *c {
				t.Fatalf("round trip of %q failed", s)
			}
		}
	})
}
