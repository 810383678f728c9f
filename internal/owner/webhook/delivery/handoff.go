package delivery

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// The local handoff (see docs/design/delivery.md, Waiting).
const (
	// MaxLocalWait bounds a delivery's wait in process for its endpoint's
	// lease; HTTPTimeout still fits in JobTimeout after it.
	MaxLocalWait = 3 * time.Second
	// Stall is how long a line may go unserved here before its waiters
	// judge their wait by that pace (hopeless).
	Stall = 250 * time.Millisecond
	// BusySnooze and MaxBusySnooze bound the snooze of a delivery that gave
	// up a wait for its endpoint's lease (busySnooze).
	BusySnooze    = Stall
	MaxBusySnooze = Cooldown
	// maxLocalWaiters bounds an endpoint's line here and the sleepers it
	// remembers; above a queue's 200 workers, so the workers bound the line.
	maxLocalWaiters = 256
)

// passed is a lease a finishing holder hands to a waiter here, with the
// endpoint as it last read it; a waiter sent nil takes a slot itself.
type passed struct {
	lease    Lease
	endpoint Endpoint
}

// waiter is one delivery in an endpoint's line; ch receives exactly one
// message once a holder takes it off the line.
type waiter struct {
	ch chan *passed
}

// sendToTake sends w, if any (from vacate), to take a slot itself.
func (w *waiter) sendToTake() {
	if w != nil {
		w.ch <- nil
	}
}

// localQueue is one endpoint's state in this process. While deliveries wait
// in its line, a delivery here holds, takes or releases a slot (vacate keeps
// that so) and passes it on or sends the first waiter to take one, so no
// waiter polls PostgreSQL.
type localQueue struct {
	// holders, takers and releasing count the slots held here, the takes in
	// flight and the releases being written. A delivery that comes during a
	// release waits in line for it: a take beside it would find the slot
	// still held and, were the release written first, leave nobody here to
	// send the line on.
	holders, takers, releasing int
	waiters                    []*waiter
	// claims counts the deliveries between begin and end.
	claims int
	// progress is when a slot was last taken or passed here (or the line
	// began); pace the moving average of the time between passes (0: none).
	progress time.Time
	pace     time.Duration
	// unanswered is set while the last slot let go here got no answer
	// (timeout, refused connection); an answer, even a failure, clears it.
	unanswered bool
	// slots is max_in_flight as the last take here read it (0: not read).
	slots int
	// asleep is the jobs that snoozed from the line and have not run here
	// since, to wake when it empties; due is when the last comes back anyway.
	asleep []int64
	due    time.Time
	// woken is the jobs handed to a wake that have not run here since: the
	// only ones the wake may try again (notBack).
	woken map[int64]bool
	// owed is set when a success let go of a slot: the end that empties the
	// line, or the written release, wakes the sleepers.
	owed bool
	// touched is when the queue was last used.
	touched time.Time
	// coolUntil ends the cooldown as the last take here read it: until then
	// deliveries snooze without a take or a place in line.
	coolUntil time.Time
}

// handoff passes an endpoint's lease from a finishing holder to a delivery
// of it already running in this process, without a write. It is bounded and
// advisory: the lease row stays the guarantee, and losing this state costs
// time, never a delivery.
type handoff struct {
	mu sync.Mutex
	// eps holds the queues not yet gone (localQueue.gone); gone ones are
	// pruned once eps has doubled since the last prune (kept).
	eps  map[uuid.UUID]*localQueue
	kept int
	// passes, snoozes and wakes count for HandoffStats.
	passes, snoozes, wakes atomic.Int64
}

// HandoffStats is what a deliverer's local handoff did and holds now.
type HandoffStats struct {
	// Handoffs counts leases passed in process, BusySnoozes the deliveries
	// that gave up a wait for a busy endpoint, Wakes those of them woken by
	// the line they left emptying.
	Handoffs, BusySnoozes, Wakes int64
	// InFlight is the lease slots this process holds, Waiting the
	// deliveries waiting here for one.
	InFlight, Waiting int
}

func (h *handoff) stats() HandoffStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := HandoffStats{Handoffs: h.passes.Load(), BusySnoozes: h.snoozes.Load(), Wakes: h.wakes.Load()}
	for _, q := range h.eps {
		s.InFlight += q.holders
		s.Waiting += len(q.waiters)
	}
	return s
}

func newHandoff() *handoff {
	return &handoff{eps: map[uuid.UUID]*localQueue{}}
}

// queue is id's queue, made on first use; an idle queue begins a new line,
// whose pace is judged from now. The caller holds h.mu.
func (h *handoff) queue(id uuid.UUID) *localQueue {
	now := time.Now()
	q := h.eps[id]
	if q == nil {
		if len(h.eps) > 2*h.kept {
			for other, oq := range h.eps {
				if oq.gone(now) {
					delete(h.eps, other)
				}
			}
			h.kept = len(h.eps)
		}
		q = &localQueue{}
		h.eps[id] = q
	}
	if q.idle() {
		q.progress = now
	}
	q.touched = now
	return q
}

// gone reports whether q may be dropped at now: idle, no sleeper still due,
// and unused for a LeaseRefresh, after which its slots are read afresh.
func (q *localQueue) gone(now time.Time) bool {
	return q.idle() && !now.Before(q.due) && now.Sub(q.touched) >= LeaseRefresh
}

// idle reports whether no delivery here holds, takes, claims or waits for a
// slot of q's endpoint (a release being written does not count).
func (q *localQueue) idle() bool {
	return q.holders <= 0 && q.takers <= 0 && q.claims <= 0 && len(q.waiters) == 0
}

// vacate keeps the line's promise: when nobody here holds, takes or
// releases a slot, it takes the first waiter off the line as a taker and
// returns it, to be sent nil.
func (q *localQueue) vacate() *waiter {
	if q.holders > 0 || q.takers > 0 || q.releasing > 0 || len(q.waiters) == 0 {
		return nil
	}
	w := q.waiters[0]
	q.waiters = q.waiters[1:]
	q.takers++
	return w
}

// enqueue appends a waiter to q's line; nil when the line is full.
func (q *localQueue) enqueue() *waiter {
	if len(q.waiters) >= maxLocalWaiters {
		return nil
	}
	w := &waiter{ch: make(chan *passed, 1)}
	q.waiters = append(q.waiters, w)
	return w
}

// begin opens a delivery's claim of id here and returns when it began; end
// closes it.
func (h *handoff) begin(id uuid.UUID) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.queue(id).claims++
	return time.Now()
}

// end closes a claim of id. A busy snooze (snooze > 0) of job is remembered
// asleep in the same step, for a wake. An end that empties a line owing a
// wake returns the sleepers, and short: its own job, not snoozed yet and so
// out of the wake's reach, comes back after BusySnooze instead.
func (h *handoff) end(id uuid.UUID, job int64, snooze time.Duration) (wake []int64, short bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	q.claims--
	if q.owed && q.idle() {
		return q.handOver(), snooze > 0
	}
	if snooze > 0 && len(q.asleep) < maxLocalWaiters {
		q.asleep = append(q.asleep, job)
		if due := time.Now().Add(snooze); due.After(q.due) {
			q.due = due
		}
	}
	return nil, false
}

// back records job, a delivery of id, as running here again: not one to wake.
func (h *handoff) back(id uuid.UUID, job int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if q := h.eps[id]; q != nil {
		if i := slices.Index(q.asleep, job); i >= 0 {
			q.asleep = slices.Delete(q.asleep, i, i+1)
		}
		delete(q.woken, job)
	}
}

// cooling is what is left of id's cooldown as the last take here read it.
func (h *handoff) cooling(id uuid.UUID) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if q := h.eps[id]; q != nil {
		return max(time.Until(q.coolUntil), 0)
	}
	return 0
}

// join queues a waiter for a claim of id, without asking PostgreSQL, when
// deliveries here hold, take or release every slot of id (as last read here)
// and id is not cooling: one of them passes a slot on or sends the first
// waiter to take. Otherwise (nil) the claim counts as taking, and its run
// reports with took.
func (h *handoff) join(id uuid.UUID) *waiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	if q.slots > 0 && q.holders+q.takers+q.releasing >= q.slots && !time.Now().Before(q.coolUntil) {
		if w := q.enqueue(); w != nil {
			return w
		}
	}
	q.takers++
	return nil
}

// took ends a take: got says whether it took a slot, slots is the
// max_in_flight it read (0: not read), cool the cooldown left (0: none). A
// take that found every slot busy while a delivery here holds or releases
// one waits in line (w); next, if not nil, is to be sent nil (vacate).
func (h *handoff) took(id uuid.UUID, got, busy bool, slots int, cool time.Duration) (w, next *waiter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	q.takers--
	if slots > 0 {
		q.slots = slots
		q.coolUntil = time.Time{}
		if cool > 0 {
			q.coolUntil = time.Now().Add(cool)
		}
	}
	switch {
	case got:
		q.holders++
		q.progress = time.Now()
		return nil, nil
	case busy && q.holders+q.releasing > 0 && cool <= 0:
		if w = q.enqueue(); w != nil {
			return w, nil
		}
	}
	return nil, q.vacate()
}

// pass takes the first waiter off id's line, to be passed the slot its
// holder finished with; nil when none waits (the holder lets it go).
func (h *handoff) pass(id uuid.UUID) *waiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	if len(q.waiters) == 0 {
		return nil
	}
	w := q.waiters[0]
	q.waiters = q.waiters[1:]
	now := time.Now()
	q.pace = paced(q.pace, now.Sub(q.progress))
	q.progress = now
	q.unanswered = false
	return w
}

// paced adds interval to pace, a moving average over about the last eight.
func paced(pace, interval time.Duration) time.Duration {
	if pace == 0 {
		return interval
	}
	return (7*pace + interval) / 8
}

// slotEnd is how a slot let go here went: served (posted, or ended the
// delivery, without a failure), rejected (a failure answer), unanswered
// (timeout, refused connection) or dropped (let go without posting).
type slotEnd int

const (
	served slotEnd = iota
	rejected
	unanswered
	dropped
)

// release records a slot of id let go to PostgreSQL, before its release is
// written; letGo ends it. Only a served slot owes the sleepers a wake: a
// failing endpoint's deliveries wait out the cooldown.
func (h *handoff) release(id uuid.UUID, how slotEnd) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	q.holders--
	q.releasing++
	q.owed = how == served
	if how != dropped {
		q.unanswered = how == unanswered
	}
}

// letGo records a release of id written: next is to be sent nil (vacate),
// wake the sleepers when the line owes them a wake and is empty.
func (h *handoff) letGo(id uuid.UUID) (next *waiter, wake []int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	q.releasing--
	next = q.vacate()
	if q.owed && q.idle() {
		wake = q.handOver()
	}
	return next, wake
}

// handOver hands the sleepers to a wake and marks them woken (h.mu held).
func (q *localQueue) handOver() []int64 {
	q.owed = false
	wake := q.asleep
	q.asleep = nil
	if q.woken == nil {
		q.woken = map[int64]bool{}
	}
	for _, j := range wake {
		q.woken[j] = true
	}
	return wake
}

// notBack returns those of running (jobs a wake of id handed over) that
// have not run here since, and forgets jobs: one that ran meanwhile may
// sleep for a reason of its own (Retry-After, the cooldown).
func (h *handoff) notBack(id uuid.UUID, jobs, running []int64) []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.eps[id]
	if q == nil {
		return nil
	}
	var out []int64
	for _, j := range running {
		if q.woken[j] {
			out = append(out, j)
		}
	}
	for _, j := range jobs {
		delete(q.woken, j)
	}
	return out
}

// giveUp takes w off id's line and returns its snooze; ok is false when a
// holder took it off first (a message to w.ch is on its way). With
// onlyHopeless it gives up only a hopeless wait.
func (h *handoff) giveUp(id uuid.UUID, w *waiter, deadline time.Time, onlyHopeless bool) (snooze time.Duration, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	ahead := slices.Index(q.waiters, w)
	if ahead < 0 {
		return 0, false
	}
	slots := max(q.slots, 1)
	stall := time.Since(q.progress)
	if onlyHopeless && !hopeless(ahead, stall, slots, time.Until(deadline)) {
		return 0, false
	}
	q.waiters = slices.Delete(q.waiters, ahead, ahead+1)
	return busySnooze(ahead, stall, slots, q.pace, q.unanswered), true
}

// hopeless reports whether a waiter with ahead deliveries before it will
// likely not get a slot in the time left: the lease has gone unserved here
// for a Stall or more, and the deliveries ahead, each holding a slot that
// long, would outlast left. Such a waiter gives its worker back at once. A
// line served within the last Stall keeps waiting however long it is, so a
// brief pause of the machine does not send a fast line's back away; the
// first in line waits for the slot that comes to it next.
func hopeless(ahead int, stall time.Duration, slots int, left time.Duration) bool {
	return ahead > 0 && stall >= Stall && time.Duration(ahead+1)*stall/time.Duration(slots) > left
}

// busySnooze is the wait still ahead of a waiter with ahead deliveries
// before it, the slots (≥ 1) having served nobody here for stall: on a
// hanging line MaxBusySnooze (a success that empties it wakes them); with a
// pace, the stall shared by the slots, then one pace per delivery ahead;
// without, one shared stall per delivery ahead and its own. It may err long,
// since a line that empties wakes its sleepers.
func busySnooze(ahead int, stall time.Duration, slots int, pace time.Duration, hanging bool) time.Duration {
	if hanging {
		return MaxBusySnooze
	}
	shared := stall / time.Duration(slots)
	left := time.Duration(ahead+1) * shared
	if pace > 0 {
		left = shared + time.Duration(ahead)*pace
	}
	return min(max(left, BusySnooze), MaxBusySnooze)
}

// snooze is the busy snooze of a take that found every slot busy outside
// the line: its own turn at the pace of id's line.
func (h *handoff) snooze(id uuid.UUID) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	return busySnooze(0, time.Since(q.progress), max(q.slots, 1), q.pace, q.unanswered)
}
