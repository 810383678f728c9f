package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/entity"
)

func TestFanoutScalesTheCooldown(t *testing.T) {
	t.Parallel()
	f := NewFanouter(FanoutDeps{BackoffScale: 300})
	require.Equal(t, time.Second, f.cooldown)
	require.Equal(t, 5*time.Second/300, f.cooldownAfter)
}

func TestEmbedScopeAsksOnEveryEventAndFailsClosed(t *testing.T) {
	t.Parallel()
	embed := uuid.New()
	ep := Endpoint{ID: uuid.New(), EmbedID: &embed}
	ev := Event{Type: domain.EventCorpusNoteChanged, Subject: "wiki://a", Data: json.RawMessage(`{"published":true}`)}
	ok, err := inScope(context.Background(), nil, ep, ev)
	require.NoError(t, err)
	require.False(t, ok, "no EmbedAdmits: nothing scoped goes out")

	revoked := false
	admits := func(context.Context, uuid.UUID, entity.CorpusEntry) (bool, error) { return !revoked, nil }
	ok, err = inScope(context.Background(), admits, ep, ev)
	require.NoError(t, err)
	require.True(t, ok)
	revoked = true
	ok, err = inScope(context.Background(), admits, ep, ev)
	require.NoError(t, err)
	require.False(t, ok, "asked again: the revocation counts at once")

	boom := func(context.Context, uuid.UUID, entity.CorpusEntry) (bool, error) {
		return false, errors.New("db down")
	}
	_, err = inScope(context.Background(), boom, ep, ev)
	require.Error(t, err)
}

// The first waiter of an endpoint held elsewhere asks PostgreSQL every
// LeasePoll, or at once when a release here woke it; the others wait for
// it, and nobody here asks while a holder here will pass the lease on.
func TestTheFirstWaiterPollsAtTheLeasePoll(t *testing.T) {
	t.Parallel()
	h := newHandoff()
	id := uuid.New()
	first, _ := h.wait(id, 0, h.begin(id))
	second, _ := h.wait(id, 0, h.begin(id))
	require.False(t, h.shouldPoll(id, first, false), "its take just asked")
	require.False(t, h.shouldPoll(id, second, true), "only the first waiter asks")
	q := h.eps[id]
	q.polled = time.Now().Add(-LeasePoll)
	require.True(t, h.shouldPoll(id, first, false))
	require.False(t, h.shouldPoll(id, first, false), "the next ask waits LeasePoll")
	require.True(t, h.shouldPoll(id, first, true), "a release here is asked for at once")
	h.taking(id)
	h.took(id, true, 1, 0)
	q.polled = time.Now().Add(-LeasePoll)
	require.False(t, h.shouldPoll(id, first, true), "a holder here passes the lease on")
	h.done(id)
	require.True(t, h.shouldPoll(id, first, false), "the holder here is gone: ask")
}

// A waiter that leaves the line to ask PostgreSQL and queues again keeps
// its place: deliveries here are passed the lease in the order they first
// asked for it, and the line is idle once their claims end.
func TestAWaiterThatAsksAgainKeepsItsPlace(t *testing.T) {
	t.Parallel()
	h := newHandoff()
	id := uuid.New()
	first, second := h.begin(id), h.begin(id)
	w1, _ := h.wait(id, 0, first)
	w2, _ := h.wait(id, 0, second)
	require.True(t, h.leave(id, w1), "the first waiter asks PostgreSQL and finds the lease held")
	again, _ := h.wait(id, 0, first)
	require.Same(t, again, h.next(id), "it is first in line again")
	require.Same(t, w2, h.next(id))
	require.Nil(t, h.next(id))
	h.end(id, 0, 0)
	h.end(id, 0, 0)
	require.True(t, h.eps[id].idle())
}

// A delivery whose take failed while a slot was released here meanwhile
// asks again instead of waiting for a wake that came before it queued; a
// delivery arriving while another here holds or takes the lease queues
// without asking PostgreSQL at all.
func TestATakerThatMissedARelease(t *testing.T) {
	t.Parallel()
	h := newHandoff()
	id := uuid.New()
	require.Nil(t, h.join(id, h.begin(id)), "nobody here holds or takes the lease: ask PostgreSQL")
	h.taking(id)
	require.Nil(t, h.join(id, h.begin(id)), "a taker here, but how many slots the endpoint has is not known yet")
	h.took(id, true, 2, 0)
	h.taking(id)
	joined := h.join(id, h.begin(id))
	require.NotNil(t, joined, "a holder and a taker here fill the endpoint's two slots: queue behind them")
	ok := h.leave(id, joined)
	require.True(t, ok)
	h.took(id, true, 2, 0)
	h.releasedHere(id)
	h.done(id)
	require.Nil(t, h.join(id, h.begin(id)), "one of two slots held here: ask PostgreSQL for the other")
	gen := h.taking(id)
	h.releasedHere(id)
	h.done(id)
	gen2 := h.taking(id)
	require.NotEqual(t, gen, gen2)
	w, again := h.wait(id, gen, h.begin(id))
	require.Nil(t, w)
	require.True(t, again, "a release since the take began: take again")
	w, again = h.wait(id, gen2, h.begin(id))
	require.NotNil(t, w)
	require.False(t, again)
	h.took(id, false, 1, 0)
}

func TestAnOperationalEventIsNeverWantedByTheEndpointItIsAbout(t *testing.T) {
	t.Parallel()
	failing, alert := Endpoint{ID: uuid.New(), EventTypes: []string{"*"}}, Endpoint{ID: uuid.New(), EventTypes: []string{"webhook.endpoint.*"}}
	for _, typ := range []string{domain.EventWebhookEndpointFailing, domain.EventWebhookEndpointRecovered, domain.EventWebhookEndpointDisabled} {
		ev := Event{Type: typ, Data: json.RawMessage(`{"endpoint_id":"` + failing.ID.String() + `"}`)}
		require.False(t, wants(failing, ev), typ)
		require.True(t, wants(alert, ev), typ)
	}
	other := Event{Type: domain.EventAPIKeyIssued, Data: json.RawMessage(`{"endpoint_id":"` + failing.ID.String() + `"}`)}
	require.True(t, wants(failing, other), "only the operational types are kept from their endpoint")
}

// TestHopelessWaitIsJudgedByTheLeasesPace: a waiter gives up when the
// lease has gone unserved here for a poll or more and the deliveries ahead
// of it, each held that long, would outlast its deadline — a hanging holder
// frees the line behind it, a lease served within a poll keeps it, however
// long the line.
func TestHopelessWaitIsJudgedByTheLeasesPace(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		idle       time.Duration
		slots      int
		ahead      int
		left       time.Duration
		wantGiveUp bool
	}{
		{name: "fast endpoint, long line", idle: 2 * time.Millisecond, slots: 1, ahead: 127, left: 3 * time.Second},
		{name: "hanging holder, second in line", idle: 2 * time.Second, slots: 1, ahead: 1, left: time.Second, wantGiveUp: true},
		{name: "a 300 ms endpoint's tail", idle: 300 * time.Millisecond, slots: 1, ahead: 100, left: 3 * time.Second, wantGiveUp: true},
		{name: "a 300 ms endpoint's head", idle: 300 * time.Millisecond, slots: 1, ahead: 5, left: 3 * time.Second},
		{name: "a fast endpoint's line, a hiccup of less than a poll", idle: LeasePoll - 10*time.Millisecond, slots: 1, ahead: 127, left: 3 * time.Second},
		{name: "more slots serve the line faster", idle: 400 * time.Millisecond, slots: 8, ahead: 50, left: 3 * time.Second},
		{name: "one slot, the same line", idle: 400 * time.Millisecond, slots: 1, ahead: 50, left: 3 * time.Second, wantGiveUp: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHandoff()
			id := uuid.New()
			h.took(id, true, c.slots, 0)
			h.queue(id).progress = time.Now().Add(-c.idle)
			require.Equal(t, c.wantGiveUp, h.hopeless(id, c.ahead, time.Now().Add(c.left)))
		})
	}
}

// A busy snooze is the wait ahead at the slower of the line's pace and its
// current stall: a hanging endpoint's line, which served nobody while the
// delivery waited, sends each delivery away for as long as those before it
// would hold the slot at the stall seen, not for the shortest snooze.
func TestABusySnoozeCoversTheStallAhead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                      string
		ahead, went, slots        int
		waited, held, wantSnoozed time.Duration
	}{
		{"a moving line: its pace", 4, 10, 1, 3 * time.Second, 10 * time.Millisecond, 1500 * time.Millisecond},
		{"a hanging line: its stall", 9, 0, 1, 0, time.Second, 10 * time.Second},
		{"a stall shared by slots", 9, 0, 4, 0, 2 * time.Second, 5 * time.Second},
		{"never under the shortest", 0, 100, 1, time.Second, 0, BusySnooze},
		{"never over the cooldown", 1000, 0, 1, 0, 10 * time.Second, MaxBusySnooze},
	} {
		require.Equal(t, c.wantSnoozed, busySnooze(c.ahead, c.went, c.waited, c.held, c.slots), c.name)
	}
}

// The handoff keeps an endpoint's queue while its line is live, a
// delivery that snoozed from it is still due (so the line that empties
// can wake it), or it was used within a LeaseRefresh; the queues of
// endpoints gone quiet here are pruned as the map grows, so it stays
// within twice its live queues.
func TestTheHandoffForgetsQuietEndpoints(t *testing.T) {
	t.Parallel()
	h := newHandoff()
	sleeping := uuid.New()
	h.slept(sleeping, 7, time.Hour)
	quiet := func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, q := range h.eps {
			q.touched = q.touched.Add(-LeaseRefresh)
		}
	}
	for i := range 1000 {
		// Each snoozes from a line that then goes quiet here: its
		// delivery runs in another process and never comes back here.
		h.slept(uuid.New(), int64(i), time.Nanosecond)
	}
	quiet()
	for i := range 1000 {
		h.slept(uuid.New(), int64(i), time.Nanosecond)
	}
	h.mu.Lock()
	n := len(h.eps)
	h.mu.Unlock()
	require.LessOrEqual(t, n, 1001, "queues of quiet endpoints pruned")
	quiet()
	require.Equal(t, []int64{7}, h.wakeable(sleeping), "the endpoint whose sleeper is due later keeps it")
}

// A line that a run here still holds does not wake its sleepers; the
// sleeper that runs again here is no longer one to wake.
func TestTheLineWakesOnlyWhenEmpty(t *testing.T) {
	t.Parallel()
	h := newHandoff()
	id := uuid.New()
	h.took(id, true, 1, 0)
	h.slept(id, 1, time.Minute)
	h.slept(id, 2, time.Minute)
	require.Nil(t, h.wakeable(id), "held here")
	h.back(id, 1)
	h.done(id)
	require.Equal(t, []int64{2}, h.wakeable(id))
	require.Nil(t, h.wakeable(id), "handed over once")
}

// A delivery does not join the line of an endpoint that the last take here
// found cooling down (it snoozes out the cooldown). The next take that
// finds the cooldown over opens the line again.
func TestNoDeliveryJoinsTheLineOfACoolingEndpoint(t *testing.T) {
	t.Parallel()
	h := newHandoff()
	id := uuid.New()
	h.taking(id)
	h.took(id, true, 1, time.Minute)
	require.Positive(t, h.cooling(id), "the take found it cooling")
	require.Nil(t, h.join(id, h.begin(id)), "cooling: no line to join")
	h.taking(id)
	h.took(id, false, 1, 0)
	require.Zero(t, h.cooling(id), "the take found the cooldown over")
	require.NotNil(t, h.join(id, h.begin(id)), "a holder here, the cooldown over: join it")
}

// A delivery that gives up while the last holder here lets go with a
// success is not left asleep beside an idle line: when its own end
// empties the line, it hands over the sleepers to wake and comes back
// after BusySnooze. A line whose last release was a failure owes no wake.
func TestTheLastRunOutOfALineWakesItsSleepers(t *testing.T) {
	t.Parallel()
	for _, failed := range []bool{false, true} {
		h := newHandoff()
		id := uuid.New()
		h.slept(id, 1, time.Minute) // left the line earlier
		h.taking(id)
		h.took(id, true, 1, 0) // the holder
		h.begin(id)            // a waiter, about to give up
		h.done(id)             // the holder lets go while the waiter's claim is open
		require.Nil(t, h.wakeable(id), "the line is not empty yet")
		if failed {
			h.releasedHere(id)
		}
		wake, short := h.end(id, 2, time.Minute)
		if failed {
			require.Nil(t, wake)
			require.False(t, short)
			require.Equal(t, []int64{1, 2}, h.eps[id].asleep, "both sleep out the failing line")
			continue
		}
		require.Equal(t, []int64{1}, wake, "the last run out wakes the sleepers")
		require.True(t, short, "and comes back soon itself")
		require.Empty(t, h.eps[id].asleep)
	}
}

// slept records job, a delivery of id, as snoozed here for snooze, as a
// run's end does (end).
func (h *handoff) slept(id uuid.UUID, job int64, snooze time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queue(id).sleep(job, snooze)
}
