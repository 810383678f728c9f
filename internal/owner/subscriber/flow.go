package subscriber

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Flow keeps a burst to one endpoint from turning into a snooze storm.
//
// The lease (at most MaxInFlight deliveries in flight per endpoint) lives in
// the database; Flow decides, in this process, what a delivery that finds
// every slot busy does. Three parts work together:
//
//   - The deck. Up to a deck's worth of such deliveries wait here for the
//     lease, in arrival order, each holding its River worker. When a holder
//     releases a slot, the first waiter is signalled and takes the lease at
//     once: the endpoint's next delivery starts one database round trip
//     after the previous one ends, so the endpoint runs at its serial rate.
//     A release in another replica arrives as a NOTIFY (Wake). A wait is
//     bounded by MaxDeckWait; the deck admits no more than it can drain in
//     that time, and no more than DeckTotal waiters over all endpoints, so
//     waiting never starves other endpoints of workers.
//   - Parking. A delivery that does not fit on the deck snoozes (River's
//     JobSnooze: no attempt spent) and is parked: remembered here, in
//     order. Its snooze is only a fallback wake-up: its position in the
//     endpoint's queue times the service interval (measured: lease hold
//     time plus handoff — from a release that left a backlog to the next
//     take —, divided by MaxInFlight; time the endpoint sat idle with
//     nothing queued is never measured, so idleness cannot stretch it).
//   - The chain. When a release leaves the deck (plus what is already on
//     its way) below three quarters full, the releasing holder makes the
//     oldest parked deliveries available at once (released returns their
//     job ids for the store to wake). They reach the deck within one River
//     fetch, before it runs dry. So the endpoint never idles waiting for a
//     timer, however wrong the interval estimate, and each delivery of a
//     burst snoozes at most once: the queue is pulled forward by the work
//     itself, not polled by the waiting. Better still, the fan-out queues
//     a delivery to an endpoint that already has a backlog here straight
//     into the parking lot (scheduled for its fallback time), so most
//     deliveries of a burst never snooze at all.
//
// Flow is safe for concurrent use. Its state is per process and advisory:
// losing it (a restart) costs extra snoozes, never a lost or duplicate
// delivery, because the lease and River's job rows are the truth.
type Flow struct {
	opts FlowOptions

	mu      sync.Mutex
	eps     map[uuid.UUID]*endpointFlow
	waiting int
	sweepAt time.Time

	snoozes      atomic.Int64
	deckJoins    atomic.Int64
	deckTimeouts atomic.Int64
	pulls        atomic.Int64
	deferred     atomic.Int64
	releases     atomic.Int64
	holdNanos    atomic.Int64
	handoffs     atomic.Int64
	// peerSeen is when (unix nanoseconds) another replica last announced a
	// release (Wake): deliveries are then being worked elsewhere too.
	peerSeen atomic.Int64
}

// peerWindow is how long after another replica's last announcement the
// fan-out stops deferring.
const peerWindow = time.Minute

// FlowOptions tune a Flow; zero values take the defaults.
type FlowOptions struct {
	// DeckPerEndpoint is the most deliveries of one endpoint waiting in
	// process for its lease (32). It should cover what the endpoint
	// delivers during one River fetch interval.
	DeckPerEndpoint int
	// DeckTotal bounds the waiting deliveries of all endpoints, each of which
	// holds a River worker (64).
	DeckTotal int
	// MaxDeckWait bounds one wait (3 s); with HTTPTimeout it fits inside
	// JobTimeout.
	MaxDeckWait time.Duration
	// Recheck is how often a waiter retries the lease without a signal, in
	// case one was missed (250 ms).
	Recheck time.Duration
	// DefaultInterval is the assumed service time of an endpoint before one
	// was measured (5 ms).
	DefaultInterval time.Duration
	// MinSnooze and MaxSnooze bound a parked delivery's fallback snooze
	// (20 ms, 15 min).
	MinSnooze time.Duration
	MaxSnooze time.Duration
	// PullTimeout is how long a pulled delivery counts as on its way to the
	// deck (1 s): longer than a River fetch, shorter than it takes to
	// notice a pull that went nowhere.
	PullTimeout time.Duration
	// Now is the clock (time.Now). Flow measures real intervals and arms
	// real timers, so it takes the wall clock, not the domain clock.
	Now func() time.Time
}

func (o FlowOptions) withDefaults() FlowOptions {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.DeckPerEndpoint <= 0 {
		o.DeckPerEndpoint = 32
	}
	if o.DeckTotal <= 0 {
		o.DeckTotal = 64
	}
	def(&o.MaxDeckWait, 3*time.Second)
	def(&o.Recheck, 250*time.Millisecond)
	def(&o.DefaultInterval, 5*time.Millisecond)
	def(&o.MinSnooze, 20*time.Millisecond)
	def(&o.MaxSnooze, 15*time.Minute)
	def(&o.PullTimeout, time.Second)
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// endpointFlow is one endpoint's deck, parking lot and measurements.
type endpointFlow struct {
	deck []*waiter
	// hold and handoff are EWMAs of how long a delivery holds a slot and
	// how long, after a release that left a backlog, the next delivery
	// takes to get it (0 = not measured yet).
	hold    time.Duration
	handoff time.Duration
	slots   int
	// inFlight counts the slots this process holds.
	inFlight int
	// releasedAt is the last release that left a backlog behind.
	releasedAt  time.Time
	lastRelease time.Time
	// parked holds the job ids snoozed here, oldest first; parkedSet those
	// still parked (ids leave it when their job runs again).
	parked    []int64
	parkedSet map[int64]bool
	// pulled are parked jobs made available early, on their way to the deck
	// and not yet seen, with the time they were sent; repulls counts the
	// pulls that found a job not yet snoozed.
	pulled  map[int64]time.Time
	repulls map[int64]int
}

// waiter is one delivery on the deck. Its channel carries nil ("a slot
// may be free: try the lease again"; at most one pending) or, once a
// releasing holder promised it the lease (promise), exactly one handoff.
type waiter struct {
	ch chan *handoff
	// promised is set, under Flow.mu, when a releasing holder took the
	// waiter off the deck to pass it the lease: a handoff (nil when the
	// pass failed) is on its way and must be received.
	promised bool
}

// handoff is a lease passed from its holder to a waiter — in memory, or in
// the write that finished the holder's delivery — with the endpoint as the
// pass saw it: the waiter delivers without taking the lease itself.
type handoff struct {
	lease    Lease
	endpoint Endpoint
}

// FlowStats counts what Flow did since it was built.
type FlowStats struct {
	// Snoozes is the number of busy snoozes handed out: wake-ups that did
	// not deliver.
	Snoozes int64
	// DeckJoins is the number of waits on the deck.
	DeckJoins int64
	// DeckTimeouts is the number of waits that ended without the lease and
	// turned into a snooze (also counted in Snoozes).
	DeckTimeouts int64
	// Pulls is the number of parked deliveries the chain made available
	// early.
	Pulls int64
	// Deferred is the number of deliveries the fan-out queued straight
	// into the parking lot of an endpoint with a backlog.
	Deferred int64
	// Releases and Hold count the leases this process released and how
	// long they were held in all: Hold/Releases is the time one delivery
	// occupies an endpoint, whose inverse is the endpoint's serial rate.
	Releases int64
	Hold     time.Duration
	// Handoffs is the number of leases passed straight from a holder to a
	// waiter (promised; a pass the store refused is counted too).
	Handoffs int64
}

// NewFlow builds a Flow.
func NewFlow(opts FlowOptions) *Flow {
	return &Flow{opts: opts.withDefaults(), eps: map[uuid.UUID]*endpointFlow{}}
}

// Stats returns the counters.
func (f *Flow) Stats() FlowStats {
	return FlowStats{
		Snoozes: f.snoozes.Load(), DeckJoins: f.deckJoins.Load(), DeckTimeouts: f.deckTimeouts.Load(),
		Pulls: f.pulls.Load(), Deferred: f.deferred.Load(), Releases: f.releases.Load(), Hold: time.Duration(f.holdNanos.Load()),
		Handoffs: f.handoffs.Load(),
	}
}

// FlowGauges is what Flow holds right now, summed over endpoints.
type FlowGauges struct {
	// Endpoints is the number of endpoints Flow keeps state for.
	Endpoints int
	// InFlight is the number of lease slots this process holds.
	InFlight int
	// Waiting is the number of deliveries on the decks.
	Waiting int
	// Pulled is the number of parked deliveries made available and not yet
	// seen running.
	Pulled int
	// Parked is the number of deliveries parked here.
	Parked int
}

// Gauges returns what Flow holds now.
func (f *Flow) Gauges() FlowGauges {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := FlowGauges{Endpoints: len(f.eps), Waiting: f.waiting}
	for _, st := range f.eps {
		g.InFlight += st.inFlight
		g.Pulled += len(st.pulled)
		g.Parked += len(st.parkedSet)
	}
	return g
}

func (f *Flow) state(id uuid.UUID) *endpointFlow {
	st := f.eps[id]
	if st == nil {
		st = &endpointFlow{parkedSet: map[int64]bool{}, pulled: map[int64]time.Time{}, repulls: map[int64]int{}}
		f.eps[id] = st
	}
	return st
}

// intervalOf is the time between two deliveries of a saturated endpoint.
func (f *Flow) intervalOf(st *endpointFlow) time.Duration {
	if st.hold == 0 {
		return f.opts.DefaultInterval
	}
	return max((st.hold+st.handoff)/time.Duration(max(st.slots, 1)), time.Microsecond)
}

// capacity is how many waiters the endpoint's deck takes: DeckPerEndpoint,
// or fewer when they could not all get the lease within MaxDeckWait.
func (f *Flow) capacity(st *endpointFlow) int {
	return max(1, min(f.opts.DeckPerEndpoint, int(f.opts.MaxDeckWait/f.intervalOf(st))))
}

// census is what pull needs to know of all endpoints: how many are busy
// and how many pulled deliveries are on their way. Counting it is O(eps),
// so stalled counts once per sweep rather than once per endpoint.
type census struct {
	active, onTheWay int
}

// count takes the census. Called with f.mu held.
func (f *Flow) count() census {
	var c census
	for _, o := range f.eps {
		if o.busy() {
			c.active++
		}
		c.onTheWay += len(o.pulled)
	}
	return c
}

// target is how many deliveries of the endpoint should be on the deck or on
// their way to it: its deck capacity, but no more than its share of
// DeckTotal among the endpoints busy here (c.active), so a burst to many
// endpoints does not wake more deliveries than the decks can take.
func (f *Flow) target(st *endpointFlow, c census) int {
	return max(1, min(f.capacity(st), f.opts.DeckTotal/max(c.active, 1)))
}

// busy reports whether the endpoint has deliveries in flight, waiting, on
// their way or parked here.
func (st *endpointFlow) busy() bool {
	return st.inFlight > 0 || len(st.deck) > 0 || len(st.pulled) > 0 || len(st.parkedSet) > 0
}

// ewma folds sample into avg (weight 1/5; the first sample is taken whole).
func ewma(avg, sample time.Duration) time.Duration {
	if avg == 0 {
		return sample
	}
	return (4*avg + sample) / 5
}

// arrived records that job jobID of endpoint id runs (again): it is no
// longer parked nor on its way.
func (f *Flow) arrived(id uuid.UUID, jobID int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.eps[id]
	if st == nil {
		return
	}
	delete(st.parkedSet, jobID)
	delete(st.pulled, jobID)
	delete(st.repulls, jobID)
}

// join puts a delivery of endpoint id on the deck, or returns nil when the
// deck is full or DeckTotal deliveries already wait.
func (f *Flow) join(id uuid.UUID) *waiter {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.state(id)
	if f.waiting >= f.opts.DeckTotal || len(st.deck) >= f.capacity(st) {
		return nil
	}
	w := &waiter{ch: make(chan *handoff, 2)}
	st.deck = append(st.deck, w)
	f.waiting++
	f.deckJoins.Add(1)
	return w
}

// leave takes w off the deck. A signal w received but did not use passes to
// the next waiter, so no release is lost. It returns false when w was
// promised the lease: the caller must receive the handoff that follows.
func (f *Flow) leave(id uuid.UUID, w *waiter) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if w.promised {
		return false
	}
	st := f.eps[id]
	if st == nil {
		return true
	}
	for i, x := range st.deck {
		if x == w {
			st.deck = append(st.deck[:i], st.deck[i+1:]...)
			f.waiting--
			break
		}
	}
	select {
	case <-w.ch:
		signalFirst(st)
	default:
	}
	return true
}

// promise takes the first waiter of endpoint id off the deck for a holder
// that will pass it the lease, or returns nil when nobody waits. The
// holder must then send the waiter exactly one message: the handoff, or nil
// when the pass failed.
func (f *Flow) promise(id uuid.UUID) *waiter {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.eps[id]
	if st == nil || len(st.deck) == 0 {
		return nil
	}
	w := st.deck[0]
	st.deck = st.deck[1:]
	f.waiting--
	w.promised = true
	// Drop a pending "try again": from now on the holder's message is the
	// only one, so whoever receives next gets it.
	select {
	case <-w.ch:
	default:
	}
	f.handoffs.Add(1)
	return w
}

// signalFirst signals the first waiter without a pending signal, and
// reports whether there was one.
func signalFirst(st *endpointFlow) bool {
	for _, w := range st.deck {
		if len(w.ch) == 0 {
			w.ch <- nil
			return true
		}
	}
	return false
}

// released records that this process released a slot of endpoint id after
// holding it for hold, signals a waiter unless handed (the slot passed to
// a promised waiter, which is then in flight), and returns the parked jobs
// the chain pulls forward: the caller makes them available now (the
// store's WakeDeliveries). maxInFlight is the endpoint's slot count.
func (f *Flow) released(id uuid.UUID, hold time.Duration, maxInFlight int, handed bool) []int64 {
	f.releases.Add(1)
	f.holdNanos.Add(int64(hold))
	now := f.opts.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.state(id)
	st.inFlight = max(st.inFlight-1, 0)
	if hold > 0 {
		st.hold = ewma(st.hold, hold)
	}
	st.slots = maxInFlight
	st.lastRelease = now
	// With a backlog, the time until the next take is service time too:
	// the handoff to a waiter, or the chain's pull through River.
	if handed || signalFirst(st) || len(st.parkedSet) > 0 || len(st.pulled) > 0 {
		st.releasedAt = now
	}
	f.sweep(now)
	c := f.count()
	return f.pull(st, now, &c)
}

// pull takes the oldest parked jobs when the deck plus what is on its way
// is below three quarters of its capacity, enough to fill it. c is the
// census of all endpoints; pull keeps it current with what it changes.
// Called with f.mu held.
func (f *Flow) pull(st *endpointFlow, now time.Time, c *census) []int64 {
	wasBusy := st.busy()
	for jobID, at := range st.pulled {
		if now.Sub(at) > f.opts.PullTimeout {
			delete(st.pulled, jobID)
			c.onTheWay--
		}
	}
	if wasBusy && !st.busy() {
		c.active--
	}
	want := f.target(st, *c)
	have := len(st.deck) + len(st.pulled)
	if have*4 >= want*3 {
		return nil
	}
	// Pull no more than will find room: a free slot, or a place on the
	// deck under DeckTotal. A job pulled into a full deck would only snooze
	// again.
	free := max(0, st.slots-st.inFlight-have)
	limit := have + free + max(0, f.opts.DeckTotal-f.waiting-c.onTheWay)
	want = min(want, limit)
	var ids []int64
	for len(st.parked) > 0 && have < want {
		jobID := st.parked[0]
		st.parked = st.parked[1:]
		if !st.parkedSet[jobID] {
			continue // it woke up by itself meanwhile
		}
		delete(st.parkedSet, jobID)
		st.pulled[jobID] = now
		ids = append(ids, jobID)
		have++
	}
	c.onTheWay += len(ids)
	f.pulls.Add(int64(len(ids)))
	return ids
}

// unpulled puts back, at the head of the parking lot, pulled jobs that
// could not be woken because they were still running (about to be
// snoozed): the next release pulls them again. A job is put back at most
// maxRepulls times, so an id that never settles cannot loop.
func (f *Flow) unpulled(id uuid.UUID, jobIDs []int64) {
	if len(jobIDs) == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.eps[id]
	if st == nil {
		return
	}
	var back []int64
	for _, j := range jobIDs {
		if _, ok := st.pulled[j]; !ok {
			continue // it arrived meanwhile
		}
		delete(st.pulled, j)
		if st.repulls[j] >= maxRepulls {
			delete(st.repulls, j)
			continue
		}
		st.repulls[j]++
		st.parkedSet[j] = true
		back = append(back, j)
	}
	st.parked = append(back, st.parked...)
}

// maxRepulls bounds how often one job is put back by unpulled.
const maxRepulls = 20

// hasWaiter reports whether a delivery of endpoint id waits on the deck
// here: it will take a slot released now, so other replicas need not hear
// of the release.
func (f *Flow) hasWaiter(id uuid.UUID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.eps[id]
	return st != nil && len(st.deck) > 0
}

// Wake signals a waiter of endpoint id because a slot was released
// elsewhere (another replica's NOTIFY).
func (f *Flow) Wake(id uuid.UUID) {
	f.peerSeen.Store(f.opts.Now().UnixNano())
	f.signal(id)
}

// signal tells a waiter of endpoint id that a slot may be free.
func (f *Flow) signal(id uuid.UUID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if st := f.eps[id]; st != nil {
		signalFirst(st)
	}
}

// park records job jobID of endpoint id as parked and returns its fallback
// snooze: its position in the endpoint's queue here (deck, pulled and
// parked deliveries ahead of it) times the service interval. The chain
// normally pulls it forward sooner; the fallback only matters when the
// chain stops (the process dies, or the endpoint's holders are elsewhere).
func (f *Flow) park(id uuid.UUID, jobID int64) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.state(id)
	ahead := len(st.deck) + len(st.pulled) + len(st.parkedSet)
	if !st.parkedSet[jobID] {
		st.parkedSet[jobID] = true
		st.parked = append(st.parked, jobID)
	}
	if len(st.parked) > 2*len(st.parkedSet)+64 {
		// Drop the ids of jobs that woke up by themselves.
		kept := st.parked[:0]
		for _, j := range st.parked {
			if st.parkedSet[j] {
				kept = append(kept, j)
			}
		}
		st.parked = kept
	}
	f.snoozes.Add(1)
	return min(max(time.Duration(ahead)*f.intervalOf(st), f.opts.MinSnooze), f.opts.MaxSnooze)
}

// backlog reports whether endpoint id has a backlog here — its slots held
// and a whole deck's worth waiting or pulled, or deliveries parked —
// and if so how long a delivery queued now would wait: its position times
// the service interval, as park computes it.
//
// The bar is the endpoint's own deck, not its share of DeckTotal: with many
// endpoints busy the share is one or two, and deferring every delivery
// past that sent nearly all of a 100-endpoint fan-out through parking and
// pulls (measured: 281 deliveries/s against 1,137/s without deferral, and
// worse across replicas, whose pulls the other processes' River clients
// fetch). River fetches in id order across endpoints, so such a fan-out
// rarely finds its endpoint busy; one endpoint's burst still defers.
//
// With other replicas at work (one announced a release within peerWindow)
// nothing is deferred: a deferred delivery waits for this process's chain
// to pull it, but another replica's River client may fetch it, and a chain
// whose endpoint is held elsewhere pulls nothing (measured, W2 on 2
// replicas: 157-263 deliveries/s with deferral, 471 without).
func (f *Flow) backlog(id uuid.UUID, maxInFlight int) (time.Duration, bool) {
	if seen := f.peerSeen.Load(); seen != 0 && f.opts.Now().Sub(time.Unix(0, seen)) < peerWindow {
		return 0, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.state(id)
	onDeck := len(st.deck) + len(st.pulled)
	if st.inFlight+onDeck < max(maxInFlight, 1)+f.capacity(st) && len(st.parkedSet) == 0 {
		return 0, false
	}
	ahead := onDeck + len(st.parkedSet)
	return min(max(time.Duration(ahead)*f.intervalOf(st), f.opts.MinSnooze), f.opts.MaxSnooze), true
}

// taken records that this process took a slot of endpoint id. When a
// release with a backlog preceded it, the time since is the handoff.
func (f *Flow) taken(id uuid.UUID) {
	now := f.opts.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.state(id)
	st.inFlight++
	if !st.releasedAt.IsZero() {
		if d := now.Sub(st.releasedAt); d > 0 && d < 5*time.Second {
			st.handoff = ewma(st.handoff, d)
		}
		st.releasedAt = time.Time{}
	}
}

// parkQueued parks a delivery the fan-out queued for later because of the
// backlog: the chain pulls it like a snoozed one, and it never spent a
// wake-up.
func (f *Flow) parkQueued(id uuid.UUID, jobID int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.state(id)
	if !st.parkedSet[jobID] {
		st.parkedSet[jobID] = true
		st.parked = append(st.parked, jobID)
	}
	f.deferred.Add(1)
}

// sweep forgets idle endpoints once a minute, so the map stays as small as
// the set of busy endpoints. Called with f.mu held.
func (f *Flow) sweep(now time.Time) {
	if now.Before(f.sweepAt) {
		return
	}
	f.sweepAt = now.Add(time.Minute)
	for id, st := range f.eps {
		if !st.busy() && now.Sub(st.lastRelease) > 10*time.Minute {
			delete(f.eps, id)
		}
	}
}

// stalled returns, per endpoint, the parked deliveries to pull forward
// because nothing in this process drives the endpoint's chain: no delivery
// in flight, waiting on the deck or on its way here. The chain advances only
// on a release, so without this a parked delivery whose chain broke — its
// pull found it still running, the lease was released in another replica,
// the fan-out parked it behind a backlog that drained meanwhile — would
// wait for its fallback snooze, which can be minutes.
func (f *Flow) stalled() map[uuid.UUID][]int64 {
	now := f.opts.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	var out map[uuid.UUID][]int64
	c := f.count()
	for id, st := range f.eps {
		if len(st.parkedSet) == 0 || st.inFlight > 0 || len(st.deck) > 0 {
			continue
		}
		if ids := f.pull(st, now, &c); len(ids) > 0 {
			if out == nil {
				out = map[uuid.UUID][]int64{}
			}
			out[id] = ids
		}
	}
	return out
}
