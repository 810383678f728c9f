package domain

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeaderBehavesAsNetHTTPs: the same calls on a Header and on an
// http.Header leave the same map, so adapters convert freely.
func TestHeaderBehavesAsNetHTTPs(t *testing.T) {
	t.Parallel()
	h, n := Header{}, http.Header{}
	for _, hd := range []interface {
		Set(string, string)
		Add(string, string)
		Del(string)
	}{h, n} {
		hd.Set("content-type", "application/json")
		hd.Add("X-Team", "a")
		hd.Add("x-team", "b")
		hd.Set("webhook-id", "msg_1")
		hd.Del("WEBHOOK-ID")
	}
	require.Equal(t, map[string][]string(n), map[string][]string(h))
	require.Equal(t, n.Get("x-TEAM"), h.Get("x-TEAM"))
	require.Equal(t, n.Values("X-Team"), h.Values("X-Team"))
	require.Equal(t, "", h.Get("missing"))
	c := h.Clone()
	c.Add("X-Team", "c")
	require.Len(t, h.Values("X-Team"), 2, "a clone shares nothing")
	require.Nil(t, Header(nil).Clone())
	require.Equal(t, http.CanonicalHeaderKey("x-my-header"), CanonicalHeaderKey("x-my-header"))
}
