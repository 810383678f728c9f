package main

// The owner-isolation rows of the health routes: the charts' and the
// attention list's ops, whose answers sum or list the caller's rows only.

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// failingEndpointOfA is one of A's endpoints, failing for two hours (the
// banner's and the attention list's case).
func (fx *isolationFixture) failingEndpointOfA(t *testing.T) string {
	t.Helper()
	id := fx.endpointOfA(t)
	_, err := fx.ts.App.Pool.Exec(t.Context(), `UPDATE webhook_endpoints SET failing_since = now() - interval '2 hours' WHERE id = $1`, id)
	require.NoError(t, err)
	return id
}

// noAttemptsForB requires that B's charts count none of A's attempts.
func noAttemptsForB(t *testing.T, fx *isolationFixture, target isolationTarget) {
	t.Helper()
	status, body := fx.ts.do(t, http.MethodGet, target.Path, fx.B.Key, "")
	require.Equal(t, http.StatusOK, status, body)
	var st statsOut
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	s, r, g := st.sums()
	require.Zero(t, s+r+g, "B's charts count A's attempts")
	status, body = fx.ts.do(t, http.MethodGet, target.Path, fx.A.Key, "")
	require.Equal(t, http.StatusOK, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	s, r, g = st.sums()
	require.NotZero(t, s+r+g, "A's charts count A's attempt (else this row proves nothing)")
}

func healthIsolationRows() map[string]isolationRow {
	return map[string]isolationRow{
		"GET /api/admin/webhooks/stats": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				fx.deliveryOfA(t)
				return isolationTarget{Path: "/api/admin/webhooks/stats?window=hour"}
			},
			WantB: http.StatusOK, WantA: http.StatusOK, After: noAttemptsForB,
		},
		"GET /api/admin/webhooks/:id/stats": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/webhooks/" + fx.endpointOfA(t) + "/stats"}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK, After: unchangedForA,
		},
		"GET /api/admin/webhooks/attention": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				id := fx.failingEndpointOfA(t)
				return isolationTarget{Path: "/api/admin/webhooks/attention", Hidden: []string{id, "isolation"}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"GET /api/admin/inbound-sources/stats": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				src := fx.sourceOfA(t)
				fx.deadLetterOfA(t, src)
				return isolationTarget{Path: "/api/admin/inbound-sources/stats", Hidden: []string{src, "a-source"}}
			},
			WantB: http.StatusOK, WantA: http.StatusOK,
		},
		"GET /api/admin/inbound-sources/:id/stats": {
			Target: func(t *testing.T, fx *isolationFixture) isolationTarget {
				return isolationTarget{Path: "/api/admin/inbound-sources/" + fx.sourceOfA(t) + "/stats"}
			},
			WantB: http.StatusNotFound, WantA: http.StatusOK,
		},
	}
}
