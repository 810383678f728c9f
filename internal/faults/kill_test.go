package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/testdb"
)

// rescueAfter is STANDMEET_RIVER_RESCUE_AFTER for the tests that leave jobs
// running on purpose. River refuses a value below the client's JobTimeout
// (its default, 1 minute, as the server does not change it), and its
// rescuer also skips a job until the kind's own timeout (15 s for a
// delivery) has passed; the rescuer runs every 30 s on the leader.
func rescueAfter() time.Duration {
	if v := os.Getenv("STANDMEET_FAULTS_RESCUE_AFTER"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
	}
	return time.Minute
}

// TestFaultKillReplica: while W2 (endpoints × events) runs on three
// replicas, one of them is killed with SIGKILL every few seconds and started
// again. Afterwards every event reached every endpoint (lost = 0), the
// duplicates are counted and reported (none of a delivery whose success
// was recorded), no endpoint ever had two requests in flight, and River's
// rescuer leaves no job running.
func TestFaultKillReplica(t *testing.T) {
	skipUnlessFull(t, "kill -9 leaves jobs running until River's rescuer returns them (a minute or more)")
	t.Parallel()
	rescue := rescueAfter()
	// Rescued jobs retry on the delivery schedule (5 s, 5 min, 30 min…),
	// compressed here so the test waits seconds, not hours.
	f := startFleet(t, testdb.NewURL(t), 3, map[string]string{
		"STANDMEET_RIVER_RESCUE_AFTER":    rescue.String(),
		"STANDMEET_WEBHOOK_BACKOFF_SCALE": "300",
	})
	endpoints, events := 100, 200
	// A few milliseconds per request stretch W2 over the kills. The
	// endpoints are spread over owners of 50 (the server's per-owner
	// limit); each owner writes the events, so deliveries = endpoints x
	// events.
	tenants := f.tenants(t, "kill", endpoints, 50, slowly(2*time.Millisecond))

	// The killer: every 3 s one replica, chosen at random, gets kill -9 and
	// is started again, maxKills times (or until W2 is through).
	const maxKills = 8
	ctx, stop := context.WithCancel(context.Background())
	killerDone := make(chan struct{})
	kills := 0
	go func() {
		defer close(killerDone)
		for kills < maxKills {
			select {
			case <-ctx.Done():
				return
			case <-time.After(3 * time.Second):
			}
			i := rand.IntN(3)
			f.kill(i)
			kills++
			for try := 0; try < 5; try++ {
				err := f.restart(context.Background(), i)
				if err == nil {
					break
				}
				t.Logf("restart replica %d: %v", i, err)
			}
		}
	}()
	var writers sync.WaitGroup
	writeErrs := make(chan error, len(tenants))
	for i, tn := range tenants {
		writers.Add(1)
		go func() {
			defer writers.Done()
			writeErrs <- tryWriteNotes(tn, fmt.Sprintf("kill-%d", i), events)
		}()
	}
	writers.Wait()
	close(writeErrs)
	for err := range writeErrs {
		require.NoError(t, err)
	}
	// Keep killing while the deliveries flow.
	for done := false; !done; {
		select {
		case <-killerDone:
			done = true
		case <-time.After(500 * time.Millisecond):
			tl, short := countAll(t, f.Pool, tenants, events)
			done = tl.Lost == 0 && short == 0
		}
	}
	stop()
	<-killerDone

	// Jobs of a killed replica come back after rescue + the rescuer's 30 s
	// interval + a leader election.
	tl := waitDelivered(t, f.Pool, tenants, events, rescue+3*time.Minute)
	t.Logf("3 replicas, %d kill -9s, %d endpoints x %d events: %s", kills, endpoints, events, tl)
	require.Positive(t, kills)
	require.Zero(t, tl.Invalid, "every request must verify")
	explainLost(t, f.Pool, tl)
	again, _ := explainDuplicates(t, f.Pool, tenants)
	require.Zero(t, again, "a delivery whose success was recorded is not posted again")
	require.Zero(t, tl.Lost, "lost deliveries, e.g. %v", tl.LostSample)
	require.LessOrEqual(t, tl.MaxInFlight, int64(1), "the lease let several requests reach one endpoint at once")
	requireNothingRunning(t, f.Pool, rescue+2*time.Minute)
	t.Logf("job states at the end: %v", jobStates(t, f.Pool))
}
