package hook

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// TestLimitedBodyReportsAServerLimitAsTooLarge: a body cut by
// http.MaxBytesReader reaches the gateway as inbound.ErrBodyTooLarge (413),
// any other read error as it is.
func TestLimitedBodyReportsAServerLimitAsTooLarge(t *testing.T) {
	t.Parallel()
	cut := http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader("0123456789")), 4)
	_, err := io.ReadAll(limitedBody{cut})
	require.ErrorIs(t, err, inbound.ErrBodyTooLarge)

	broken := errors.New("connection reset")
	_, err = io.ReadAll(limitedBody{io.MultiReader(strings.NewReader("ab"), errReader{broken})})
	require.ErrorIs(t, err, broken)
	require.NotErrorIs(t, err, inbound.ErrBodyTooLarge)

	b, err := io.ReadAll(limitedBody{strings.NewReader("whole")})
	require.NoError(t, err)
	require.Equal(t, "whole", string(b))
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
