package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRegistrationChecksEgress: numeric hosts the resolver would not take
// as written are refused naming their canonical form, and literal internal
// addresses (and localhost) are refused at create and update unless
// STANDMEET_EGRESS_ALLOW lists them, with a message naming the setting.
func TestRegistrationChecksEgress(t *testing.T) {
	t.Parallel()
	closed := startTestServer(t, testServerOptions{})
	open := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.0/8, ::1/128"}})
	body := func(url string) string { return `{"url":"` + url + `","event_types":["code.*"]}` }
	mk := func(url string) map[string]any { return map[string]any{"url": url, "event_types": []string{"code.*"}} }

	for _, ts := range []*testServer{closed, open} {
		_, key := ts.newOwner(t)
		for _, c := range []struct{ host, canonical string }{
			{"127.1", "127.0.0.1"}, {"2130706433", "127.0.0.1"}, {"0x7f000001", "127.0.0.1"}, {"0177.0.0.1", "127.0.0.1"},
			{"10.1", "10.0.0.1"},
		} {
			status, resp := ts.do(t, http.MethodPost, "/api/admin/webhooks", key, body("http://"+c.host+":9/h"))
			require.Equal(t, http.StatusBadRequest, status, resp)
			require.Equal(t, "INVALID_URL", errCode(t, resp))
			require.Contains(t, resp, "write "+c.canonical, c.host)
		}
	}

	_, key := closed.newOwner(t)
	for _, url := range []string{"http://127.0.0.1:9/h", "http://[::1]:9/h", "http://localhost:9/h", "http://10.0.0.7/h", "http://169.254.169.254/latest"} {
		status, resp := closed.do(t, http.MethodPost, "/api/admin/webhooks", key, body(url))
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", url, resp)
		require.Equal(t, "INVALID_URL", errCode(t, resp))
		require.Contains(t, resp, "STANDMEET_EGRESS_ALLOW", url)
	}
	// Update cannot move a public endpoint inside either.
	id := createEndpoint(t, closed, key, mk("https://hooks.example.com/h")).ID.String()
	status, resp := closed.do(t, http.MethodPatch, "/api/admin/webhooks/"+id, key, `{"url":"http://127.0.0.1:9/h"}`)
	require.Equal(t, http.StatusBadRequest, status, resp)
	require.Contains(t, resp, "STANDMEET_EGRESS_ALLOW")
	status, resp = closed.do(t, http.MethodGet, "/api/admin/webhooks/"+id, key, "")
	require.Equal(t, http.StatusOK, status, resp)
	require.Contains(t, resp, "https://hooks.example.com/h")

	// With the loopback allowed, the same URLs register; the private range
	// not listed is still refused.
	_, key = open.newOwner(t)
	for _, url := range []string{"http://127.0.0.1:9/h", "http://[::1]:9/h", "http://localhost:9/h"} {
		createEndpoint(t, open, key, mk(url))
	}
	status, resp = open.do(t, http.MethodPost, "/api/admin/webhooks", key, body("http://10.0.0.7/h"))
	require.Equal(t, http.StatusBadRequest, status, resp)
	require.True(t, strings.Contains(resp, "STANDMEET_EGRESS_ALLOW") && strings.Contains(resp, "10.0.0.7"), resp)
}
