package delivery

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// The local handoff.
const (
	// MaxLocalWait bounds how long a delivery waits for a busy endpoint's
	// lease in process; then it snoozes. HTTPTimeout still fits in
	// JobTimeout after it.
	MaxLocalWait = 3 * time.Second
	// Stall is how long an endpoint's line here may go without serving a
	// delivery before its waiters judge their wait by that pace
	// (handoff.hopeless); a waiter judges twice per Stall. It is also the
	// shortest snooze of a delivery sent away from a busy line.
	Stall = 250 * time.Millisecond
	// BusySnooze is the shortest snooze of a delivery that gave up a wait
	// for its endpoint's lease, MaxBusySnooze the longest: a failing
	// endpoint's Cooldown, after which new deliveries to it wait that long
	// anyway, and the snooze of every give-up from a line whose last slot
	// went without an answer. In between, the snooze is the wait still ahead
	// of it (busySnooze). A line that empties with a success wakes its
	// sleepers early (end, letGo), so the estimate may err long; erring
	// short brings a hanging endpoint's deliveries back to wait in vain.
	BusySnooze    = Stall
	MaxBusySnooze = Cooldown
	// maxLocalWaiters bounds the deliveries of one endpoint waiting in line
	// in one process, and those remembered asleep (woken together in one
	// transaction). It is above the workers of a delivery queue (200 by
	// default), so a line never sends a delivery away for want of room
	// while the workers it holds are what bounds it.
	maxLocalWaiters = 256
)

// passed is a lease handed from a finishing holder to a waiter of the same
// process, with the endpoint as the holder last read it. A waiter sent a
// nil *passed takes a slot from PostgreSQL itself: the slot went back
// there, and the waiter now counts as this process's taker.
type passed struct {
	lease    Lease
	endpoint Endpoint
}

// waiter is one delivery waiting in line for an endpoint's lease in
// process. Its channel receives exactly one message once a holder took it
// off the line.
type waiter struct {
	ch chan *passed
	cl *claimant
}

// sendToTake sends w, taken off its line by vacate, to take a slot from
// PostgreSQL itself; nothing when w is nil (nobody was).
func (w *waiter) sendToTake() {
	if w != nil {
		w.ch <- nil
	}
}

// claimant is one delivery's claim of an endpoint's lease in this process,
// from its first ask to its outcome: when it began.
type claimant struct {
	start time.Time
}

// localQueue is one endpoint's state in this process. While deliveries
// wait in its line, a delivery here holds or is taking one of its slots
// (vacate keeps that so), and that run passes the slot on or sends the
// first waiter to take one.
type localQueue struct {
	// holders and takers are the slots of the endpoint held here, and the
	// deliveries here asking PostgreSQL for one; releasing the slots let go
	// here whose release is being written. A delivery that comes meanwhile
	// waits in line for the releaser to send it to take: a take beside the
	// release would find the slot still held and, if the release were
	// written before the take reported, leave nobody here to send it on.
	holders, takers, releasing int
	waiters                    []*waiter
	// claims counts the deliveries here between their first ask and their
	// outcome (the queue outlives them all).
	claims int
	// progress is when a slot was last taken or passed here (or the line
	// began): how long the lease has gone without serving a delivery here,
	// the pace hopeless judges a wait by.
	progress time.Time
	// pace is the time between passes here, about one slot's hold divided
	// by the slots in a line that moves (0: no pass yet). A busy snooze
	// counts it for the deliveries ahead, not the stall: a line that
	// stalled for seconds (a pause of the machine) and served at its pace
	// before is expected to serve at that pace again.
	pace time.Duration
	// unanswered is set while the last slot let go here went without an
	// answer (the receiver timed out or refused the connection): a give-up
	// sleeps MaxBusySnooze, woken by the first success that empties the
	// line (see Deliverer.wake). A hanging endpoint's deliveries then cost
	// River one snooze each until its cooldown holds them, not one per
	// estimate of its stall. An answer, even a failure, clears it.
	unanswered bool
	// slots is the endpoint's max_in_flight as the last take here read it
	// (0: not read yet). A change reaches it at the endpoint's next take,
	// at the latest when the lease goes back to PostgreSQL after
	// LeaseRefresh.
	slots int
	// asleep is the jobs of the deliveries that snoozed from the line and
	// have not run here since (at most maxLocalWaiters): the ones to wake
	// when the line empties (see wakeable). due is when the last of them
	// comes back anyway; the queue outlives its line until then.
	asleep []int64
	due    time.Time
	// woken is the jobs handed to a wake (end, letGo) that have not run
	// here since: the only ones the wake may try again (see notBack).
	woken map[int64]bool
	// owed is set when a success let go of a slot (release): the run
	// whose end empties the line, or the release once written, wakes the
	// sleepers. Without it, a
	// delivery that gives up just as the last holder finishes sleeps out
	// its whole estimate beside an idle endpoint.
	owed bool
	// touched is when the queue was last used.
	touched time.Time
	// coolUntil is when the endpoint's cooldown ends as the last take here
	// read it (zero: not cooling). While it lasts a delivery neither joins
	// the line nor asks PostgreSQL for a slot: it snoozes until then (see
	// Deliverer.claim), so a down endpoint's deliveries hold no worker in a
	// line only its probe moves, and cost no statement of their own.
	coolUntil time.Time
}

// handoff is the one piece of per-process state of delivery: a finishing
// holder passes its lease to a delivery of the same endpoint already
// running here, without a write. It is bounded (maxLocalWaiters per
// endpoint) and advisory: the lease row in PostgreSQL stays the guarantee,
// and losing this state costs time, never a delivery.
type handoff struct {
	mu sync.Mutex
	// eps holds an endpoint's queue while a delivery here claims, holds or
	// waits for its lease, one that snoozed from it is not yet due, or it
	// was used within a LeaseRefresh (it keeps the endpoint's slots
	// between runs). Other queues go at the next prune, which runs when
	// eps has doubled since the last one (kept), so the map stays within
	// twice the queues that are live.
	eps  map[uuid.UUID]*localQueue
	kept int
	// passes and snoozes count leases passed in process and deliveries
	// that snoozed because their endpoint stayed busy, wakes those of
	// them made available again by the line they left.
	passes, snoozes, wakes atomic.Int64
}

// HandoffStats is what a deliverer's local handoff did and holds now.
type HandoffStats struct {
	// Handoffs counts leases passed in process; BusySnoozes the
	// deliveries that gave up a wait for a busy endpoint and snoozed,
	// Wakes those of them woken when the line they left emptied.
	Handoffs, BusySnoozes, Wakes int64
	// InFlight is the lease slots this process holds; Waiting the
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

// queue is id's queue here, made on first use; an idle queue begins a
// new line, whose pace is judged from now. The caller holds h.mu.
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

// gone reports whether q's endpoint has nothing here at now: an idle line,
// no sleeper still due, and no use for a LeaseRefresh, after which its
// slots would be read afresh anyway.
func (q *localQueue) gone(now time.Time) bool {
	return q.idle() && !now.Before(q.due) && now.Sub(q.touched) >= LeaseRefresh
}

// idle reports whether no delivery here holds, takes, claims or waits for
// a slot of q's endpoint (one whose release is being written counts as
// gone: its line is empty as it lets go).
func (q *localQueue) idle() bool {
	return q.holders <= 0 && q.takers <= 0 && q.claims <= 0 && len(q.waiters) == 0
}

// vacate keeps the line's promise that a delivery here holds or takes a
// slot while others wait: when none does, the first waiter is taken off
// the line to take one itself (it now counts as a taker), and returned to
// be sent nil.
func (q *localQueue) vacate() *waiter {
	if q.holders > 0 || q.takers > 0 || q.releasing > 0 || len(q.waiters) == 0 {
		return nil
	}
	w := q.waiters[0]
	q.waiters = q.waiters[1:]
	q.takers++
	return w
}

// enqueue puts a waiter for cl at the end of q's line; nil when the
// endpoint has maxLocalWaiters already.
func (q *localQueue) enqueue(cl *claimant) *waiter {
	if len(q.waiters) >= maxLocalWaiters {
		return nil
	}
	w := &waiter{ch: make(chan *passed, 1), cl: cl}
	q.waiters = append(q.waiters, w)
	return w
}

// begin opens a delivery's claim of id here; end closes it.
func (h *handoff) begin(id uuid.UUID) *claimant {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	q.claims++
	return &claimant{start: time.Now()}
}

// end closes a claim of id opened by begin. A claim that ends in a busy
// snooze (snooze > 0) of job is remembered asleep in the same step, so the
// run that empties the line wakes it (wakeable). When this end itself
// empties a line that owes its sleepers a wake, it hands them over (wake),
// and short tells its own job, not snoozed yet and so out of a wake's
// reach, to come back after BusySnooze instead of its estimate.
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

// back records job, a delivery of id, as running here again: it is no
// longer one to wake.
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

// cooling is what is left of id's cooldown as the last take here read it
// (0: none).
func (h *handoff) cooling(id uuid.UUID) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if q := h.eps[id]; q != nil {
		return max(time.Until(q.coolUntil), 0)
	}
	return 0
}

// join queues a waiter for cl's claim of id, without asking PostgreSQL,
// when deliveries here hold, take or release every slot of id this
// process may hold (its max_in_flight as last read here) and id is not
// cooling down: one of them passes its slot on here, or sends the first
// waiter to take one. Otherwise (nil) the claim counts as taking: its run
// asks PostgreSQL, then reports with took.
func (h *handoff) join(id uuid.UUID, cl *claimant) *waiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	if q.slots > 0 && q.holders+q.takers+q.releasing >= q.slots && !time.Now().Before(q.coolUntil) {
		if w := q.enqueue(cl); w != nil {
			return w
		}
	}
	q.takers++
	return nil
}

// took ends a taking. got says whether it took a slot; slots is the
// endpoint's max_in_flight as the take read it (0: not read), cool how
// much of its cooldown was left then (0: none). A take that found every
// slot busy (busy) while a delivery here holds or releases one waits in
// line for it (w). next, when not nil, is the first waiter, to be sent nil: nobody
// here holds or takes a slot any more (vacate).
func (h *handoff) took(id uuid.UUID, got, busy bool, slots int, cool time.Duration, cl *claimant) (w, next *waiter) {
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
		if w = q.enqueue(cl); w != nil {
			return w, nil
		}
	}
	return nil, q.vacate()
}

// pass takes the first waiter of id off the line, to be passed the slot
// its holder here finished with; nil when none waits (the holder keeps it,
// to let it go with letGo).
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

// paced is pace with one more interval between passes counted: a moving
// average over about the last eight.
func paced(pace, interval time.Duration) time.Duration {
	if pace == 0 {
		return interval
	}
	return (7*pace + interval) / 8
}

// slotEnd is how a slot let go here went.
type slotEnd int

const (
	// served: a run posted (or ended the delivery) without a failure.
	served slotEnd = iota
	// rejected: the receiver answered with a failure.
	rejected
	// unanswered: the receiver timed out or refused the connection.
	unanswered
	// dropped: a run let it go without posting.
	dropped
)

// release records a slot of id that a delivery here lets go to
// PostgreSQL, before its release is written; letGo ends it. After a
// served slot the line owes the deliveries that snoozed from it a wake
// when it empties: the run whose end empties it (end), or letGo, hands
// them over. Neither a failure nor a drop owes one: a failing endpoint's
// deliveries wait out the cooldown anyway.
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

// letGo records the release of a slot of id written (see release): next
// is the first waiter, to be sent nil, when nobody here holds, takes or
// releases a slot any more; wake the sleepers to wake, when the line owes
// them a wake and is empty.
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

// handOver gives the sleepers to a wake and remembers them as woken. The
// caller holds h.mu.
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

// notBack returns those of running, jobs a wake of id handed over, that
// have not run here since (back), and forgets every job of jobs: a job
// that ran meanwhile may sleep for a reason of its own now (a
// Retry-After, the cooldown), which a wake must not cut short.
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

// giveUp takes w off id's line and returns the snooze of its delivery
// (busySnooze, from its place in line); ok is false when a holder took it
// off first: a message is on its way to w.ch and must be received. Only
// when hopeless is set does it give up a wait that is not hopeless (see
// hopeless).
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

// hopeless reports whether a delivery with ahead deliveries before it in
// line is unlikely to get a slot in the time left: the lease has gone
// without serving a delivery here for a Stall or more, and if each of the
// deliveries ahead held a slot that long, they would take longer than the
// time left. Such a delivery would hold its worker for nothing, so it
// snoozes at once instead: a hanging endpoint's waiting deliveries give
// their workers back within a Stall of its holder passing that pace, while
// a line served within the last Stall is moving and keeps waiting, however
// long it is — a pause of a few tens of milliseconds (a busy machine, a
// collection) must not send the back of a fast endpoint's line away for
// seconds. The first in line keeps waiting: the slot comes to it next.
func hopeless(ahead int, stall time.Duration, slots int, left time.Duration) bool {
	return ahead > 0 && stall >= Stall && time.Duration(ahead+1)*stall/time.Duration(slots) > left
}

// busySnooze is the snooze of a delivery with ahead deliveries still in
// line before it, while the endpoint's slots (slots ≥ 1 of them) have
// served nobody here for stall: about the wait left. In a line whose
// receiver has stopped answering (hanging) it is MaxBusySnooze (see
// localQueue.unanswered). In a line with a pace (see localQueue.pace) it is
// the stall shared by the slots, then one pace per delivery ahead; in one
// that has not passed a slot yet, one such shared stall per delivery ahead
// and its own.
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

// snooze is the snooze of a delivery giving up outside the line (its take
// found every slot busy): its own turn at the pace of id's line.
func (h *handoff) snooze(id uuid.UUID) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	return busySnooze(0, time.Since(q.progress), max(q.slots, 1), q.pace, q.unanswered)
}
