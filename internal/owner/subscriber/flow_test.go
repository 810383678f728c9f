package subscriber

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func signalled(w *waiter) bool {
	select {
	case <-w.ch:
		return true
	default:
		return false
	}
}

func TestFlowSignalsWaitersInOrderAndPassesUnusedSignalsOn(t *testing.T) {
	t.Parallel()
	f := NewFlow(FlowOptions{DefaultInterval: time.Millisecond})
	id := uuid.New()
	a, b, c := f.join(id), f.join(id), f.join(id)
	require.NotNil(t, a)

	f.released(id, time.Millisecond, 1, false)
	require.True(t, signalled(a), "the first waiter is signalled")
	require.False(t, signalled(b))

	// Two releases before anyone acts: two different waiters are woken.
	f.released(id, time.Millisecond, 2, false)
	f.released(id, time.Millisecond, 2, false)
	// a consumed its signal above, so the next two unsignalled are a and b.
	require.True(t, signalled(a))
	require.True(t, signalled(b))
	require.False(t, signalled(c))

	// A waiter that leaves with a pending signal hands it on.
	f.Wake(id)
	f.leave(id, a)
	require.True(t, signalled(b))
	f.leave(id, b)
	f.leave(id, c)
	require.Equal(t, 0, f.waiting)
}

func TestFlowBoundsTheDeck(t *testing.T) {
	t.Parallel()
	f := NewFlow(FlowOptions{DeckPerEndpoint: 2, DeckTotal: 3, DefaultInterval: time.Millisecond})
	x, y := uuid.New(), uuid.New()
	require.NotNil(t, f.join(x))
	require.NotNil(t, f.join(x))
	require.Nil(t, f.join(x), "per endpoint")
	require.NotNil(t, f.join(y))
	require.Nil(t, f.join(y), "in all")

	slow := NewFlow(FlowOptions{MaxDeckWait: time.Second, DefaultInterval: 400 * time.Millisecond})
	z := uuid.New()
	require.NotNil(t, slow.join(z))
	require.NotNil(t, slow.join(z))
	require.Nil(t, slow.join(z), "three waiters of a 400 ms endpoint would wait past MaxDeckWait")
}

func TestParkingSnoozesForThePositionTimesTheServiceInterval(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	f := NewFlow(FlowOptions{DefaultInterval: 100 * time.Millisecond, MinSnooze: time.Millisecond, Now: clock})
	id := uuid.New()
	var got []time.Duration
	for j := range int64(5) {
		got = append(got, f.park(id, j))
	}
	// The first goes now (at least MinSnooze), the next an interval apart.
	require.Equal(t, time.Millisecond, got[0])
	for i := 1; i < len(got); i++ {
		require.Equal(t, time.Duration(i)*100*time.Millisecond, got[i], "snooze %d", i)
	}
	require.Equal(t, int64(5), f.Stats().Snoozes)
	// Deck waiters are ahead too; parked jobs that ran are not.
	f.join(id)
	f.arrived(id, 0)
	f.arrived(id, 1)
	require.Equal(t, 400*time.Millisecond, f.park(id, 9), "1 waiting + 3 parked ahead")

	// The measured service time (hold plus handoff) replaces the default.
	g := NewFlow(FlowOptions{DefaultInterval: time.Second, MinSnooze: time.Millisecond, Now: clock})
	g.released(id, 20*time.Millisecond, 1, false)
	_, d1, d2 := g.park(id, 1), g.park(id, 2), g.park(id, 3)
	require.Equal(t, 20*time.Millisecond, d2-d1)
	w := g.join(id)
	g.released(id, 20*time.Millisecond, 1, false) // signals w
	now = now.Add(10 * time.Millisecond)
	g.taken(id)
	g.leave(id, w)
	d1, d2 = g.park(id, 4), g.park(id, 5)
	require.Equal(t, 30*time.Millisecond, d2-d1, "20 ms hold + 10 ms handoff")
	// Idle time between deliveries is not service time: the estimate
	// stays put however long the endpoint sat idle.
	now = now.Add(time.Hour)
	g.released(id, 20*time.Millisecond, 1, false)
	d1, d2 = g.park(id, 6), g.park(id, 7)
	require.Equal(t, 30*time.Millisecond, d2-d1)
	// max_in_flight 2 halves it.
	h := NewFlow(FlowOptions{MinSnooze: time.Millisecond, Now: clock})
	h.released(id, 20*time.Millisecond, 2, false)
	_, d1, d2 = h.park(id, 1), h.park(id, 2), h.park(id, 3)
	require.Equal(t, 10*time.Millisecond, d2-d1)
}

func TestTheChainPullsParkedDeliveriesForwardOldestFirst(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := NewFlow(FlowOptions{DeckPerEndpoint: 4, DefaultInterval: time.Millisecond, Now: func() time.Time { return now }})
	id := uuid.New()
	for j := range int64(10) {
		f.park(id, j)
	}
	f.arrived(id, 1) // job 1 woke up by itself

	// Empty deck: pull enough to fill it, oldest first, skipping job 1.
	require.Equal(t, []int64{0, 2, 3, 4}, f.released(id, time.Millisecond, 1, false))
	// They are on their way: no new pull.
	require.Empty(t, f.released(id, time.Millisecond, 1, false))
	// Two arrive and wait on the deck; two are still on their way.
	f.arrived(id, 0)
	f.arrived(id, 2)
	a, b := f.join(id), f.join(id)
	require.Empty(t, f.released(id, time.Millisecond, 1, false), "deck plus pulled is full")
	f.leave(id, a)
	f.leave(id, b)
	// Below three quarters again once the pulled ones time out.
	now = now.Add(2 * time.Second)
	require.Equal(t, []int64{5, 6, 7, 8}, f.released(id, time.Millisecond, 1, false))
	require.Equal(t, int64(8), f.Stats().Pulls)

	// A pulled job still running (its snooze not recorded yet) is put
	// back first in line and pulled at the next release.
	f.unpulled(id, []int64{6})
	now = now.Add(2 * time.Second)
	require.Equal(t, []int64{6, 9}, f.released(id, time.Millisecond, 1, false))
}

func TestFlowForgetsIdleEndpoints(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := NewFlow(FlowOptions{Now: func() time.Time { return now }})
	idle := uuid.New()
	f.released(idle, time.Millisecond, 1, false)
	now = now.Add(time.Hour)
	f.released(uuid.New(), time.Millisecond, 1, false)
	f.mu.Lock()
	_, kept := f.eps[idle]
	f.mu.Unlock()
	require.False(t, kept)
}

// TestChainKeeperRestartsStalledChains: parked deliveries of an endpoint
// that nothing here is delivering to are made available by the keeper; an
// endpoint whose chain is driven (a delivery in flight) is left to it; a job
// the store could not wake (still running) is pulled again on a later tick.
func TestChainKeeperRestartsStalledChains(t *testing.T) {
	t.Parallel()
	flow := NewFlow(FlowOptions{DefaultInterval: time.Millisecond})
	var woken [][]int64
	stillRunning := map[int64]bool{12: true}
	store := &fakeStore{WakeDeliveriesFunc: func(_ context.Context, ids []int64) ([]int64, error) {
		woken = append(woken, append([]int64(nil), ids...))
		var running []int64
		for _, id := range ids {
			if stillRunning[id] {
				running = append(running, id)
			}
		}
		return running, nil
	}}
	d := NewDeliverer(DeliverDeps{Store: store, Flow: flow})

	idle, driven := uuid.New(), uuid.New()
	flow.parkQueued(idle, 11)
	flow.parkQueued(idle, 12)
	flow.taken(driven) // a delivery in flight drives this chain
	flow.parkQueued(driven, 21)

	d.restartStalled(context.Background())
	require.Len(t, woken, 1, "only the idle endpoint's chain is restarted")
	require.Subset(t, []int64{11, 12}, woken[0])
	require.NotContains(t, woken[0], int64(21))

	// 12 was still running: it went back to the parking lot and is pulled
	// again once it has settled; 11 arrived.
	flow.arrived(idle, 11)
	delete(stillRunning, 12)
	woken = nil
	d.restartStalled(context.Background())
	require.Equal(t, [][]int64{{12}}, woken)

	// Nothing parked, nothing to do.
	flow.arrived(idle, 12)
	woken = nil
	d.restartStalled(context.Background())
	require.Empty(t, woken)
}

func TestFanoutDefersOnlyBehindAFullDeckNotBehindItsShare(t *testing.T) {
	t.Parallel()
	// Four busy endpoints share DeckTotal 4: each one's share is 1, its
	// deck 8. A fan-out defers a delivery only once the deck is full.
	f := NewFlow(FlowOptions{DeckPerEndpoint: 8, DeckTotal: 40, DefaultInterval: time.Millisecond})
	others := []uuid.UUID{uuid.New(), uuid.New(), uuid.New()}
	for _, id := range others {
		f.taken(id)
	}
	id := uuid.New()
	f.taken(id)
	f.opts.DeckTotal = 4
	for i := range 8 {
		_, deferred := f.backlog(id, 1)
		require.False(t, deferred, "deferred with %d waiting, below a deck of 8", i)
		f.mu.Lock()
		st := f.state(id)
		st.deck = append(st.deck, &waiter{ch: make(chan *handoff, 2)})
		f.mu.Unlock()
	}
	wait, deferred := f.backlog(id, 1)
	require.True(t, deferred, "a full deck defers")
	require.Positive(t, wait)
}

func TestFanoutDefersNothingWhileAnotherReplicaWorks(t *testing.T) {
	t.Parallel()
	now := time.Now()
	f := NewFlow(FlowOptions{DeckPerEndpoint: 1, DefaultInterval: time.Millisecond, Now: func() time.Time { return now }})
	id := uuid.New()
	f.taken(id)
	w := f.join(id)
	require.NotNil(t, w)
	_, deferred := f.backlog(id, 1)
	require.True(t, deferred, "alone, a full deck defers")

	f.Wake(uuid.New()) // another replica announced a release
	_, deferred = f.backlog(id, 1)
	require.False(t, deferred, "with a peer at work nothing is deferred")

	now = now.Add(peerWindow)
	_, deferred = f.backlog(id, 1)
	require.True(t, deferred, "a peer silent for the window no longer counts")
}

func TestFlowGaugesSumWhatItHoldsNow(t *testing.T) {
	t.Parallel()
	f := NewFlow(FlowOptions{DeckPerEndpoint: 4, DefaultInterval: time.Millisecond})
	x, y := uuid.New(), uuid.New()
	require.Equal(t, FlowGauges{}, f.Gauges())

	f.taken(x)
	f.taken(y)
	w := f.join(x)
	require.NotNil(t, w)
	f.park(x, 1)
	f.park(x, 2)
	f.parkQueued(y, 3)
	require.Equal(t, FlowGauges{Endpoints: 2, InFlight: 2, Waiting: 1, Parked: 3}, f.Gauges())

	// x's release pulls its parked jobs: they are on their way, no longer
	// parked; y's job runs again.
	pulled := f.released(x, time.Millisecond, 1, false)
	require.ElementsMatch(t, []int64{1, 2}, pulled)
	f.arrived(y, 3)
	require.Equal(t, FlowGauges{Endpoints: 2, InFlight: 1, Waiting: 1, Pulled: 2}, f.Gauges())

	f.leave(x, w)
	f.arrived(x, 1)
	f.arrived(x, 2)
	require.Equal(t, FlowGauges{Endpoints: 2, InFlight: 1}, f.Gauges())
}

// TestStalledChainsShareTheRoomLeftOnTheDecks: one sweep over idle
// endpoints counts what it has pulled already, so together they never pull
// more than DeckTotal has room for.
func TestStalledChainsShareTheRoomLeftOnTheDecks(t *testing.T) {
	t.Parallel()
	f := NewFlow(FlowOptions{DeckPerEndpoint: 8, DeckTotal: 4, DefaultInterval: time.Millisecond})
	busy := uuid.New()
	for range 3 {
		require.NotNil(t, f.join(busy)) // 3 of the 4 places taken
	}
	a, b := uuid.New(), uuid.New()
	for j := range int64(4) {
		f.parkQueued(a, 100+j)
		f.parkQueued(b, 200+j)
	}
	pulled := f.stalled()
	total := 0
	for _, ids := range pulled {
		total += len(ids)
	}
	require.Equal(t, 1, total, "one place is left on the decks: %v", pulled)
	require.Equal(t, FlowGauges{Endpoints: 3, Waiting: 3, Pulled: 1, Parked: 7}, f.Gauges())
}
