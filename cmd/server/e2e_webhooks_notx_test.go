package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// heldTransactions counts the connections to the test's database, other
// than the asking one, inside a transaction that began at least age ago.
func heldTransactions(t *testing.T, ts *testServer, age time.Duration) int {
	t.Helper()
	var n int
	require.NoError(t, ts.App.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid() AND xact_start < now() - make_interval(secs => $1)`,
		age.Seconds()).Scan(&n))
	return n
}

// TestNoTransactionIsHeldAcrossThePOST: while a receiver holds a delivery's
// request for two seconds, no connection of the server is inside a
// transaction older than one second — the lease is taken and the outcome
// written in statements of their own, never around the POST. The probe
// itself is shown to see a transaction held that long.
func TestNoTransactionIsHeldAcrossThePOST(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1)})
	_, key := webhookOwner(t, ts)
	inHandler := make(chan struct{}, 1)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		inHandler <- struct{}{}
		time.Sleep(2500 * time.Millisecond)
		w.WriteHeader(http.StatusNoContent)
	})
	ep := createEndpoint(t, ts, key, map[string]any{"url": rc.URL, "event_types": []string{"webhook.test"}})

	// The control: a transaction held open for more than a second is seen.
	tx, err := ts.App.Pool.Begin(context.Background())
	require.NoError(t, err)
	_, err = tx.Exec(context.Background(), `SELECT 1`)
	require.NoError(t, err)
	time.Sleep(1200 * time.Millisecond)
	require.Equal(t, 1, heldTransactions(t, ts, time.Second), "the probe sees a held transaction")
	require.NoError(t, tx.Rollback(context.Background()))

	ev, _ := sendTest(t, ts, key, ep.ID)
	select {
	case <-inHandler:
	case <-time.After(30 * time.Second):
		t.Fatal("the delivery never reached the receiver")
	}
	time.Sleep(1500 * time.Millisecond)
	require.Zero(t, heldTransactions(t, ts, time.Second), "a transaction is held across the POST")
	waitDelivery(t, ts, key, ep.ID, ev, "completed")
}
