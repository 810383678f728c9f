package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/bench"
	"github.com/standmeet/standmeet/internal/testdb"
)

// TestWebhookDeliveryBench measures delivery throughput and commit-to-receipt
// latency of the real server for 1 endpoint × 10,000 events and
// 100 endpoints × 200 events, each beside River's raw no-op throughput
// measured in the same run on a database of its own. It takes about a
// minute, so it runs only when asked:
//
//	STANDMEET_WEBHOOK_BENCH=1 go test -run TestWebhookDeliveryBench -v ./cmd/server/
func TestWebhookDeliveryBench(t *testing.T) {
	if os.Getenv("STANDMEET_WEBHOOK_BENCH") == "" {
		t.Skip("set STANDMEET_WEBHOOK_BENCH=1 to run the delivery benchmark")
	}
	ctx := context.Background()
	dbURL := testdb.NewURL(t)
	if n := os.Getenv("STANDMEET_WEBHOOK_BENCH_POOL"); n != "" {
		sep := "?"
		if strings.Contains(dbURL, "?") {
			sep = "&"
		}
		dbURL += sep + "pool_max_conns=" + n
	}
	ts := startTestServer(t, testServerOptions{Env: webhookEnv(1), DBURL: dbURL})
	noop, err := bench.RiverNoop(ctx, testdb.New(t), provideRiverConfig(ts.App.Config), 20000)
	require.NoError(t, err)
	t.Logf("ceiling: River no-op jobs %.0f/s (server settings, same run)", noop)
	cases := []struct{ endpoints, events int }{{1, 10000}, {100, 200}}
	if os.Getenv("STANDMEET_WEBHOOK_BENCH") == "fanout" {
		cases = cases[1:]
	}
	for _, c := range cases {
		res := runBurst(t, ts, c.endpoints, c.events)
		t.Log(res)
		t.Logf("ratio to River's no-op ceiling: %.3f", res.PerSecond/noop)
		require.EqualValues(t, 1, res.MaxInFlight)
	}
}
