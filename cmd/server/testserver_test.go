package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/testdb"
)

// testServer is the real server — the Wire composition root, River, the
// relay, HTTP on a loopback port — on a fresh database of the test's own.
type testServer struct {
	App     *App
	URL     string // http://127.0.0.1:port
	DBURL   string
	Logs    *observer.ObservedLogs
	cancel  context.CancelFunc
	stopped chan struct{}
}

// testServerOptions tune a test server.
type testServerOptions struct {
	// Env overrides configuration variables (e.g. STANDMEET_EGRESS_ALLOW).
	Env map[string]string
	// DBURL reuses an existing database (a second replica); empty = a fresh one.
	DBURL string
}

// startTestServer starts the real server and stops it when the test ends.
func startTestServer(t *testing.T, opts testServerOptions) *testServer {
	t.Helper()
	dbURL := opts.DBURL
	if dbURL == "" {
		dbURL = testdb.NewURL(t)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	env := map[string]string{
		"DATABASE_URL":         dbURL,
		"STANDMEET_MASTER_KEY": base64.StdEncoding.EncodeToString(key),
		"STANDMEET_ADDR":       "127.0.0.1:0",
		"STANDMEET_LOG":        "json",
	}
	for k, v := range opts.Env {
		env[k] = v
	}
	cfg, err := config.Load(func(k string) string { return env[k] }, true)
	require.NoError(t, err)
	core, logs := observer.New(zap.DebugLevel)
	logger := zap.New(core)

	ctx, cancel := context.WithCancel(context.Background())
	app, cleanup, err := initApp(ctx, cfg, logger)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ts := &testServer{App: app, URL: "http://" + ln.Addr().String(), DBURL: dbURL, Logs: logs, cancel: cancel, stopped: make(chan struct{})}
	go func() {
		defer close(ts.stopped)
		if err := app.Serve(ctx, ln); err != nil {
			t.Logf("test server: %v", err)
		}
	}()
	t.Cleanup(func() {
		ts.Stop()
		cleanup()
	})
	require.Eventually(t, func() bool {
		resp, err := http.Get(ts.URL + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 20*time.Millisecond, "server never became ready")
	return ts
}

// Stop shuts the server down (idempotent).
func (ts *testServer) Stop() {
	ts.cancel()
	select {
	case <-ts.stopped:
	case <-time.After(60 * time.Second):
	}
}

// do sends a request with an optional bearer key and JSON body and returns
// the status and body.
func (ts *testServer) do(t *testing.T, method, path, apiKey, body string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.URL+path, r)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}
