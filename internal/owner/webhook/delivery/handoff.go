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
	// lease in process; then it snoozes (BusySnooze). HTTPTimeout still fits
	// in JobTimeout after it.
	MaxLocalWait = 3 * time.Second
	// LeasePoll is how often the first local waiter of an endpoint whose
	// lease no delivery here holds asks PostgreSQL for it: the holder is in
	// another process (a lane changing hands) or died, and a slot it
	// releases is found at the next ask. Only the first waiter asks, so the
	// waiters of a process cost PostgreSQL four statements a second per
	// endpoint, not one per waiter.
	LeasePoll = 250 * time.Millisecond
	// BusySnooze is the shortest snooze of a delivery that waited
	// MaxLocalWait without getting the lease: one LeasePoll, the pace at
	// which it would have asked again. MaxBusySnooze is the longest: a
	// failing endpoint's Cooldown, after which new deliveries to it wait
	// that long anyway. In between, the snooze is the wait still ahead of
	// it (busySnooze): a turn for each delivery still in line before it
	// and its own, each the longer of the pace it saw and the line's
	// current stall shared by the slots. A line that empties with a
	// success wakes its sleepers early (wakeable), so the estimate may err
	// long; erring short brings a hanging endpoint's deliveries back to
	// wait in vain.
	BusySnooze    = LeasePoll
	MaxBusySnooze = Cooldown
	// maxLocalWaiters bounds the deliveries of one endpoint waiting in line
	// in one process, and those remembered asleep (woken together in one
	// transaction). It is above the workers of a delivery queue (200 by
	// default), so a line never sends a delivery away for want of room
	// while the workers it holds are what bounds it.
	maxLocalWaiters = 256
)

// passed is a lease handed from a finishing holder to a waiter of the same
// process, with the endpoint as the holder last read it.
type passed struct {
	lease    Lease
	endpoint Endpoint
}

// waiter is one delivery waiting for an endpoint's lease in process. Its
// channel receives exactly one message once a holder took it off the queue:
// the lease, or nil when the holder released it to PostgreSQL instead.
type waiter struct {
	ch chan *passed
	// poke wakes the first waiter to ask PostgreSQL at once.
	poke chan struct{}
	// seq is its claim's place in line.
	seq uint64
}

// claimant is one delivery's claim of an endpoint's lease in this process,
// from its first ask to its outcome. It keeps its place in line when it
// leaves the queue to ask PostgreSQL and queues again, so the deliveries
// here are passed the lease in the order they first asked for it, and a
// delivery that gives up measures its wait against the deliveries served
// here since then.
type claimant struct {
	seq    uint64
	served uint64
	start  time.Time
}

// localQueue is one endpoint's state in this process: how many of its lease
// slots this process holds and who waits here for one.
type localQueue struct {
	holders int
	// takers is how many deliveries here are asking PostgreSQL for a
	// slot right now.
	takers  int
	waiters []*waiter
	// claims counts the deliveries here between their first ask for id and
	// their outcome (the queue outlives them all), line the places in line
	// given out, served the slots of id this process got (taken or passed
	// here) since the queue began.
	claims int
	line   uint64
	served uint64
	// progress is when a slot of id was last taken or passed here (or its
	// line began): how long the lease has gone without serving a
	// delivery here, the pace hopeless judges a wait by.
	progress time.Time
	// polled is when a waiter here last asked PostgreSQL for the lease.
	polled time.Time
	// released counts the slots of id let go here to PostgreSQL: a taker
	// whose take failed while it changed asks again instead of waiting for
	// a wake that came before it queued.
	released uint64
	// slots is id's max_in_flight as the last take here read it (0: not
	// read yet). A change reaches it at the endpoint's next take, at the
	// latest when the lease goes back to PostgreSQL after LeaseRefresh.
	slots int
	// asleep is the jobs of the deliveries that snoozed here because every
	// slot stayed busy and have not run here since (at most
	// maxLocalWaiters): the ones to wake when the line they left empties
	// (see wakeable). due is when the last of them comes back anyway; the
	// queue outlives its line until then.
	asleep []int64
	due    time.Time
	// owed is set when a success let go of a slot of id while the line
	// was busy: the run whose end empties the line wakes the sleepers.
	// Without it, a delivery that gives up just as the last holder
	// finishes sleeps out its whole estimate beside an idle endpoint.
	owed bool
	// touched is when the queue was last used.
	touched time.Time
	// coolUntil is when id's cooldown ends as the last take here read it
	// (zero: not cooling). While it lasts a delivery neither joins id's
	// line nor asks PostgreSQL for a slot: it snoozes until then (see
	// Deliverer.claim), so a down endpoint's deliveries hold no worker in
	// a line only its probe moves, and cost no statement of their own.
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
	// deliveries that waited MaxLocalWait (or found no room) and snoozed,
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
		s.InFlight += max(q.holders, 0)
		s.Waiting += len(q.waiters)
	}
	return s
}

func newHandoff() *handoff {
	return &handoff{eps: map[uuid.UUID]*localQueue{}}
}

// sleep records job as snoozed from q's line for snooze because every
// slot stayed busy (at most maxLocalWaiters are remembered).
func (q *localQueue) sleep(job int64, snooze time.Duration) {
	if len(q.asleep) < maxLocalWaiters {
		q.asleep = append(q.asleep, job)
		if due := time.Now().Add(snooze); due.After(q.due) {
			q.due = due
		}
	}
}

// back records job, a delivery of id, as running here again: it is no
// longer one to wake.
func (h *handoff) back(id uuid.UUID, job int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.eps[id]
	if q == nil {
		return
	}
	if i := slices.Index(q.asleep, job); i >= 0 {
		q.asleep = slices.Delete(q.asleep, i, i+1)
	}
}

// wakeable hands over, and forgets, the jobs of id asleep here when id's
// line here has emptied: no delivery here holds, takes, claims or waits
// for a slot of id. nil while the line is not empty, or none sleeps.
func (h *handoff) wakeable(id uuid.UUID) []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.eps[id]
	if q == nil {
		return nil
	}
	if !q.idle() {
		// The line's last run out wakes them (end).
		q.owed = true
		return nil
	}
	q.owed = false
	jobs := q.asleep
	q.asleep = nil
	return jobs
}

// queue is id's queue here, made on first use; an idle queue begins a
// new line, whose pace is judged from now.
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
// a slot of q's endpoint.
func (q *localQueue) idle() bool {
	return q.holders <= 0 && q.takers <= 0 && q.claims <= 0 && len(q.waiters) == 0
}

// done records a lease slot of id no longer held by this process.
func (h *handoff) done(id uuid.UUID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	q.holders--
}

// begin opens a delivery's claim of id here and gives it the next place in
// line; end closes it.
func (h *handoff) begin(id uuid.UUID) *claimant {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	q.claims++
	q.line++
	return &claimant{seq: q.line, served: q.served, start: time.Now()}
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
		q.owed = false
		wake, q.asleep = q.asleep, nil
		return wake, snooze > 0
	}
	if snooze > 0 {
		q.sleep(job, snooze)
	}
	return nil, false
}

// snooze is how long c's delivery, giving up, snoozes: about the wait
// still ahead of it here (see busySnooze), from the deliveries still in
// line before it and those served here since it first asked.
func (h *handoff) snooze(id uuid.UUID, c *claimant) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	ahead := 0
	for _, w := range q.waiters {
		if w.seq < c.seq {
			ahead++
		}
	}
	return busySnooze(ahead, int(q.served-c.served), time.Since(c.start), time.Since(q.progress), max(q.slots, 1))
}

// enqueue puts a waiter for c in id's line, before every waiter that first
// asked after c did; nil when the endpoint has maxLocalWaiters already.
func (q *localQueue) enqueue(c *claimant) *waiter {
	if len(q.waiters) >= maxLocalWaiters {
		return nil
	}
	w := &waiter{ch: make(chan *passed, 1), poke: make(chan struct{}, 1), seq: c.seq}
	i := len(q.waiters)
	for i > 0 && q.waiters[i-1].seq > c.seq {
		i--
	}
	q.waiters = slices.Insert(q.waiters, i, w)
	return w
}

// hopeless reports whether a delivery of id with ahead deliveries before it
// in line here is unlikely to get a slot before deadline: the lease has
// gone without serving a delivery here for a LeasePoll or more, and if each
// of the deliveries ahead held a slot that long, they would take longer
// than the time left. Such a delivery would hold its worker for nothing, so
// it snoozes at once instead: a hanging endpoint's waiting deliveries give
// their workers back within a poll tick of its holder passing that pace,
// while a line served within the last poll is moving and keeps waiting,
// however long it is — a pause of a few tens of milliseconds (a busy
// machine, a collection) must not send the back of a fast endpoint's line
// away for seconds.
func (h *handoff) hopeless(id uuid.UUID, ahead int, deadline time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	slots := time.Duration(max(q.slots, 1))
	idle := time.Since(q.progress)
	return idle >= LeasePoll && time.Duration(ahead+1)*idle/slots > time.Until(deadline)
}

// place is w's place in id's line here (the deliveries before it); -1 when
// it is no longer in line.
func (h *handoff) place(id uuid.UUID, w *waiter) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	i := slices.Index(q.waiters, w)
	return i
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

// join queues a waiter for c's claim of id without asking PostgreSQL when
// deliveries here hold or are taking every slot of id this process may
// hold (its max_in_flight as last read here): one of them passes the lease
// on here, or asks for it again as the first waiter. nil otherwise, or
// when the endpoint has maxLocalWaiters already.
func (h *handoff) join(id uuid.UUID, c *claimant) *waiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	if q.slots <= 0 || max(q.holders, 0)+max(q.takers, 0) < q.slots || time.Now().Before(q.coolUntil) {
		return nil
	}
	w := q.enqueue(c)
	return w
}

// wait queues a waiter for c's claim of id after a take that began at
// generation gen (taking) found every slot busy. again is true, and
// nothing is queued, when a slot was released since (the take may have
// missed it); w is nil when the endpoint has maxLocalWaiters already.
func (h *handoff) wait(id uuid.UUID, gen uint64, c *claimant) (w *waiter, again bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	if q.released != gen {
		return nil, true
	}
	w = q.enqueue(c)
	if w != nil {
		// It waits because its take found the lease held: that was an ask.
		q.polled = time.Now()
	}
	return w, false
}

// leave takes w off id's queue. ok is false when a holder took it off
// first: a message is on its way to w.ch and must be received.
func (h *handoff) leave(id uuid.UUID, w *waiter) (ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	i := slices.Index(q.waiters, w)
	if i >= 0 {
		q.waiters = slices.Delete(q.waiters, i, i+1)
	}
	return i >= 0
}

// next takes the first waiter of id off the queue, to be passed a slot;
// nil when none waits.
func (h *handoff) next(id uuid.UUID) *waiter {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	if len(q.waiters) == 0 {
		return nil
	}
	w := q.waiters[0]
	q.waiters = q.waiters[1:]
	q.served++
	q.progress = time.Now()
	return w
}

// taking records a delivery here asking PostgreSQL for a slot of id and
// returns the generation of releases the take starts at (see wait).
func (h *handoff) taking(id uuid.UUID) (gen uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.queue(id)
	q.takers++
	return q.released
}

// took ends a taking; got says whether it took a slot, slots is the
// endpoint's max_in_flight as the take read it (0: not read), cool how
// much of its cooldown was left then (0: none).
func (h *handoff) took(id uuid.UUID, got bool, slots int, cool time.Duration) {
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
	if got {
		q.holders++
		q.served++
		q.progress = time.Now()
	}
}

// poke records a slot of id released here and wakes the first waiter of
// id, if any, to ask PostgreSQL at once.
func (h *handoff) poke(id uuid.UUID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.eps[id]
	if q == nil {
		return
	}
	q.released++
	if len(q.waiters) > 0 {
		select {
		case q.waiters[0].poke <- struct{}{}:
		default:
		}
	}
}

// releasedHere records a slot of id released to PostgreSQL by this
// process after a failure, for takers already asking (see wait); a
// failing line owes its sleepers no wake.
func (h *handoff) releasedHere(id uuid.UUID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if q := h.eps[id]; q != nil {
		q.released++
		q.owed = false
	}
}

// shouldPoll reports whether w is to ask PostgreSQL for id's lease now: it
// is the first waiter, no holder here will pass one on, and it was woken by
// a release here or the endpoint's last ask from here is LeasePoll ago.
func (h *handoff) shouldPoll(id uuid.UUID, w *waiter, woken bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	q := h.eps[id]
	if q == nil || q.holders > 0 || len(q.waiters) == 0 || q.waiters[0] != w {
		return false
	}
	now := time.Now()
	if !woken && now.Sub(q.polled) < LeasePoll {
		return false
	}
	q.polled = now
	return true
}
