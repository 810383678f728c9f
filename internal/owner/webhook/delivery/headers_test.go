package delivery_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
)

// TestRequestOpensSealedHeaderValues: custom header values stored sealed
// (with the endpoint id) are sent in the clear, and a value stored before
// values were sealed is sent as it is.
func TestRequestOpensSealedHeaderValues(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ep := b.ep
	ep.Headers = map[string]string{
		"Authorization": domain.SealedText([]byte("Bearer s3cret")),
		"X-Legacy":      "stored before values were sealed",
	}
	req, err := b.d.Request(ep, b.ev, fixedNow)
	require.NoError(t, err)
	require.Equal(t, "Bearer s3cret", req.Header.Get("Authorization"))
	require.Equal(t, "stored before values were sealed", req.Header.Get("X-Legacy"))

}
