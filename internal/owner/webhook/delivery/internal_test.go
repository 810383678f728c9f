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

// A delivery queues in its endpoint's line only behind deliveries here
// that hold or take every slot, and the line always keeps one of them:
// the holder passes its slot to the first waiter or, letting it go to
// PostgreSQL, sends the first waiter to take one itself; a take that finds
// every slot busy queues only while a holder here will pass one on.
func TestAnEndpointsLineAlwaysHasAHolderOrATaker(t *testing.T) {
	t.Parallel()
	h := newHandoff()
	id := uuid.New()
	h.begin(id)
	require.Nil(t, h.join(id), "nothing known here: ask PostgreSQL")
	require.Nil(t, h.beginJoin(id), "a taker here, but how many slots the endpoint has is not known yet")
	w, next := h.took(id, false, true, 1, 0)
	require.Nil(t, w, "every slot busy and none held here: nothing here will pass one on")
	require.Nil(t, next)
	w, next = h.took(id, true, false, 1, 0)
	require.Nil(t, w)
	require.Nil(t, next)
	wb := h.beginJoin(id)
	wc := h.beginJoin(id)
	require.NotNil(t, wb, "the holder here fills the endpoint's one slot: queue behind it")
	require.NotNil(t, wc)
	require.Same(t, wb, h.pass(id), "the holder passes its slot to the first waiter")
	next, wake := h.releaseNow(id, true)
	require.Same(t, wc, next, "the slot went back to PostgreSQL: the next waiter takes one")
	require.Nil(t, wake)
	w, next = h.took(id, false, true, 1, 0)
	require.Nil(t, w, "held elsewhere now: it snoozes")
	require.Nil(t, next)
	for range 4 {
		h.end(id, 0, 0)
	}
	require.True(t, h.eps[id].idle())

	// Two slots, one held here: a take for the other that finds it busy
	// waits for the one here.
	h.eps[id].slots = 2
	require.Nil(t, h.beginJoin(id))
	h.took(id, true, false, 2, 0)
	h.begin(id)
	require.Nil(t, h.join(id), "one of two slots held here: ask PostgreSQL for the other")
	w, next = h.took(id, false, true, 2, 0)
	require.NotNil(t, w, "a holder here passes its slot on")
	require.Nil(t, next)
	next, _ = h.releaseNow(id, false)
	require.Same(t, w, next, "the holder let go: the waiter takes a slot itself")
}

// A delivery that comes while a slot here is being released waits in line
// without a take, and the release, once written, sends it to take: a take
// beside the release finds the slot still held.
func TestATakeDuringAReleaseWaitsForIt(t *testing.T) {
	t.Parallel()
	h := newHandoff()
	id := uuid.New()
	require.Nil(t, h.beginJoin(id), "nobody here holds a slot: take one")
	h.took(id, true, false, 1, 0)
	h.release(id, served)
	w := h.beginJoin(id)
	require.NotNil(t, w, "the release is not written yet: wait for it without a take")
	next, _ := h.letGo(id)
	require.Same(t, w, next, "the release written: take")
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
// lease has gone unserved here for a Stall or more and the deliveries
// ahead of it, each held that long, would outlast its deadline — a hanging
// holder frees the line behind it, a lease served within a Stall keeps it,
// however long the line, and the first in line waits for the slot.
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
		{name: "hanging holder, first in line", idle: 2 * time.Second, slots: 1, ahead: 0, left: time.Second},
		{name: "hanging holder, second in line", idle: 2 * time.Second, slots: 1, ahead: 1, left: time.Second, wantGiveUp: true},
		{name: "a 300 ms endpoint's tail", idle: 300 * time.Millisecond, slots: 1, ahead: 100, left: 3 * time.Second, wantGiveUp: true},
		{name: "a 300 ms endpoint's head", idle: 300 * time.Millisecond, slots: 1, ahead: 5, left: 3 * time.Second},
		{name: "a fast endpoint's line, a hiccup of less than a poll", idle: Stall - 10*time.Millisecond, slots: 1, ahead: 127, left: 3 * time.Second},
		{name: "more slots serve the line faster", idle: 400 * time.Millisecond, slots: 8, ahead: 50, left: 3 * time.Second},
		{name: "one slot, the same line", idle: 400 * time.Millisecond, slots: 1, ahead: 50, left: 3 * time.Second, wantGiveUp: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.wantGiveUp, hopeless(c.ahead, c.idle, c.slots, c.left))
		})
	}
}

// A busy snooze is the wait ahead: in a line that has passed no slot yet,
// the line's current stall for each delivery ahead and its own, so a
// hanging holder sends each delivery away for as long as those before it
// would hold the slot at the stall seen, not for the shortest snooze; with
// a pace, the stall once and the pace for each delivery ahead, so a line
// that paused for seconds does not send its back away for minutes; once a
// receiver has stopped answering, the longest, so a hanging endpoint's
// deliveries snooze once.
func TestABusySnoozeCoversTheStallAhead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name         string
		ahead, slots int
		held, pace   time.Duration
		hanging      bool
		wantSnoozed  time.Duration
	}{
		{"a hanging line: its stall", 9, 1, time.Second, 0, false, 10 * time.Second},
		{"a stall shared by slots", 9, 4, 2 * time.Second, 0, false, 5 * time.Second},
		{"a paused line with a pace: the stall once", 25, 1, 3400 * time.Millisecond, 45 * time.Millisecond, false, 4525 * time.Millisecond},
		{"a pace with slots: the stall shared", 10, 2, time.Second, 100 * time.Millisecond, false, 1500 * time.Millisecond},
		{"a line whose receiver stopped answering: the longest", 0, 1, 0, 45 * time.Millisecond, true, MaxBusySnooze},
		{"never under the shortest", 0, 1, 0, 0, false, BusySnooze},
		{"never over the cooldown", 1000, 1, 10 * time.Second, 0, false, MaxBusySnooze},
	} {
		require.Equal(t, c.wantSnoozed, busySnooze(c.ahead, c.held, c.slots, c.pace, c.hanging), c.name)
	}
}

// A line's pace is the moving average of the time between its passes. A
// slot let go without an answer (a timeout) marks the line hanging until a
// receiver's answer here, and its give-ups snooze the longest; a slot
// dropped without a post changes nothing.
func TestALinesPaceComesFromItsPassesAndATimeoutMarksIt(t *testing.T) {
	t.Parallel()
	require.Equal(t, 80*time.Millisecond, paced(0, 80*time.Millisecond))
	require.Equal(t, 50*time.Millisecond, paced(40*time.Millisecond, 120*time.Millisecond))
	h := newHandoff()
	id := uuid.New()
	take := func() {
		require.Nil(t, h.beginJoin(id))
		h.took(id, true, false, 1, 0)
	}
	let := func(how slotEnd) {
		h.release(id, how)
		h.letGo(id)
	}
	take()
	w := h.beginJoin(id)
	require.NotNil(t, w)
	time.Sleep(time.Millisecond)
	require.Same(t, w, h.pass(id))
	require.GreaterOrEqual(t, h.queue(id).pace, time.Millisecond, "a pass measures the pace")
	require.Less(t, h.snooze(id), MaxBusySnooze)
	let(unanswered)
	require.Equal(t, MaxBusySnooze, h.snooze(id), "no answer: give-ups sleep until a success wakes them")
	take()
	let(dropped)
	require.Equal(t, MaxBusySnooze, h.snooze(id), "a drop tells nothing")
	take()
	let(rejected)
	require.Less(t, h.snooze(id), MaxBusySnooze, "an answer, even a failure, clears it")
	for _, how := range []slotEnd{unanswered, served} {
		take()
		let(how)
	}
	require.Less(t, h.snooze(id), MaxBusySnooze, "and so does a success")
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
	h.took(sleeping, true, false, 1, 0)
	_, wake := h.releaseNow(sleeping, true)
	require.Equal(t, []int64{7}, wake, "the endpoint whose sleeper is due later keeps it")
}

// A line that a run here still holds does not wake its sleepers; the
// sleeper that runs again here is no longer one to wake.
func TestTheLineWakesOnlyWhenEmpty(t *testing.T) {
	t.Parallel()
	h := newHandoff()
	id := uuid.New()
	h.took(id, true, false, 2, 0)
	h.took(id, true, false, 2, 0)
	h.slept(id, 1, time.Minute)
	h.slept(id, 2, time.Minute)
	_, wake := h.releaseNow(id, true)
	require.Nil(t, wake, "still held here")
	h.back(id, 1)
	_, wake = h.releaseNow(id, true)
	require.Equal(t, []int64{2}, wake)
	h.took(id, true, false, 2, 0)
	_, wake = h.releaseNow(id, true)
	require.Nil(t, wake, "handed over once")
}

// A delivery does not join the line of an endpoint that the last take here
// found cooling down (it snoozes out the cooldown). The next take that
// finds the cooldown over opens the line again.
func TestNoDeliveryJoinsTheLineOfACoolingEndpoint(t *testing.T) {
	t.Parallel()
	h := newHandoff()
	id := uuid.New()
	require.Nil(t, h.beginJoin(id))
	h.took(id, true, false, 1, time.Minute)
	require.Positive(t, h.cooling(id), "the take found it cooling")
	require.Nil(t, h.beginJoin(id), "cooling: no line to join")
	h.took(id, false, false, 1, 0)
	require.Zero(t, h.cooling(id), "the take found the cooldown over")
	require.NotNil(t, h.beginJoin(id), "a holder here, the cooldown over: join it")
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
		h.slept(id, 1, time.Minute)          // left the line earlier
		h.took(id, true, false, 1, 0)        // the holder
		h.begin(id)                          // a waiter, about to give up
		_, wake := h.releaseNow(id, !failed) // the holder lets go while the waiter's claim is open
		require.Nil(t, wake, "the line is not empty yet")
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

// releaseNow lets go of a slot of id held here, its release written at
// once, as a run that releases to PostgreSQL does.
func (h *handoff) releaseNow(id uuid.UUID, ok bool) (*waiter, []int64) {
	how := served
	if !ok {
		how = rejected
	}
	h.release(id, how)
	return h.letGo(id)
}

// A delivery that gives up while the last holder's successful release is
// still being written empties the line: it hands over the sleepers to wake
// (and comes back soon itself), where waiting for the release to be
// written could wake them before River has recorded its own snooze.
func TestAGiveUpDuringASuccessfulReleaseWakesTheSleepers(t *testing.T) {
	t.Parallel()
	h := newHandoff()
	id := uuid.New()
	h.slept(id, 1, time.Minute)
	h.took(id, true, false, 1, 0)
	h.begin(id)
	h.release(id, served)
	wake, short := h.end(id, 2, time.Minute)
	require.Equal(t, []int64{1}, wake)
	require.True(t, short)
	next, wake := h.letGo(id)
	require.Nil(t, next)
	require.Nil(t, wake, "handed over once")
}

// slept records job, a delivery of id, as snoozed here for snooze, as a
// run's end does.
func (h *handoff) slept(id uuid.UUID, job int64, snooze time.Duration) {
	h.begin(id)
	h.end(id, job, snooze)
}

// beginJoin opens a claim of id and asks to join its line, as a run does.
func (h *handoff) beginJoin(id uuid.UUID) *waiter {
	h.begin(id)
	return h.join(id)
}
