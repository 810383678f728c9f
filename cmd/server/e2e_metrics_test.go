package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// operatorKey creates an owner with the operator role and returns its API
// key: /metrics on the public listener is the operator's.
func (ts *testServer) operatorKey(t *testing.T) string {
	t.Helper()
	o := ts.newOwnerAccount(t)
	_, err := ts.App.Commands.Owners.SetOperator(context.Background(), o.Email, true)
	require.NoError(t, err)
	return o.Key
}

// TestMetricsOnThePublicListenerAreTheOperatorsOnly: without credentials
// 401, another owner's key 403, the operator's key the figures.
func TestMetricsOnThePublicListenerAreTheOperatorsOnly(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	_, owner := ts.newOwner(t)
	cases := []struct {
		name, key string
		want      int
	}{
		{"no credentials", "", http.StatusUnauthorized},
		{"a wrong key", "sk_live_not-a-key", http.StatusUnauthorized},
		{"an owner who is not the operator", owner, http.StatusForbidden},
		{"the operator", ts.operatorKey(t), http.StatusOK},
	}
	for _, c := range cases {
		status, body := ts.do(t, http.MethodGet, "/metrics", c.key, "")
		require.Equal(t, c.want, status, "%s: %s", c.name, body)
		if c.want == http.StatusOK {
			require.Contains(t, body, "go_goroutines")
		} else {
			require.NotContains(t, body, "go_goroutines", c.name)
		}
	}
}

// TestMetricsOnTheirOwnListenerLeaveThePublicOne: with
// STANDMEET_METRICS_ADDR the figures are on that listener, and the public
// one serves no /metrics, even to the operator.
func TestMetricsOnTheirOwnListenerLeaveThePublicOne(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	ts := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_METRICS_ADDR": addr}})
	status, _ := ts.do(t, http.MethodGet, "/metrics", ts.operatorKey(t), "")
	require.Equal(t, http.StatusNotFound, status)
	var body string
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		body = string(b)
		return err == nil && resp.StatusCode == http.StatusOK
	}, 10*time.Second, 20*time.Millisecond)
	require.Contains(t, body, "go_goroutines")
}
