package inbounddb

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// Group execution of the processing state changes: the runs that begin (or
// finish) while a statement for others is under way wait and go together in
// the next one, so under load many messages share one statement and one
// transaction, and alone a message goes at once. Each message's change is
// the same as one statement of its own would make; a failed statement fails
// every change it carried, and each caller's run handles that error as its
// own.
const (
	// maxStateBatch bounds the messages of one statement.
	maxStateBatch = 256
	// maxStateFlights bounds the statements of one kind in flight.
	maxStateFlights = 2
	// stateTimeout bounds one statement, whatever happens to the runs
	// waiting for it.
	stateTimeout = 15 * time.Second
)

// groupStates is inbound.InboxStates with Begin and MarkDone run in groups;
// the rarer changes (retry, dead, abandon) are one statement each.
type groupStates struct {
	inboxStore
	begin *group[beginReq, beginRes]
	done  *group[doneReq, struct{}]
}

var _ inbound.InboxStates = (*groupStates)(nil)

func newGroupStates(db querier) *groupStates {
	s := &groupStates{inboxStore: inboxStore{db}}
	s.begin = &group[beginReq, beginRes]{run: s.beginMany, key: func(r beginReq) uuid.UUID { return r.id }}
	s.done = &group[doneReq, struct{}]{run: s.doneMany, key: func(r doneReq) uuid.UUID { return r.id }}
	return s
}

type beginReq struct {
	id    uuid.UUID
	jobID int64
	now   time.Time
}

type beginRes struct {
	rec inbound.Record
	ok  bool
}

type doneReq struct {
	id  uuid.UUID
	now time.Time
}

// Begin marks the message processing in the next group statement.
func (s *groupStates) Begin(ctx context.Context, id uuid.UUID, jobID int64, now time.Time) (inbound.Record, bool, error) {
	res, err := s.begin.do(ctx, beginReq{id: id, jobID: jobID, now: now})
	if err != nil {
		return inbound.Record{}, false, err
	}
	return res.rec, res.ok, nil
}

// MarkDone marks the message done in the next group statement.
func (s *groupStates) MarkDone(ctx context.Context, id uuid.UUID, now time.Time) error {
	_, err := s.done.do(ctx, doneReq{id: id, now: now})
	return err
}

// The ids go as [16]byte, which pgx writes as binary uuids; uuid.UUID would
// go through its text form.

// beginManySQL is inboxStore.Begin for many messages: each row's change and
// returned columns are those of the single statement.
const beginManySQL = `UPDATE inbound_messages m
	SET state = 'processing', attempts = m.attempts + 1, last_attempt_at = i.now, next_attempt_at = NULL, job_id = i.job_id
	FROM unnest($1::uuid[], $2::bigint[], $3::timestamptz[]) WITH ORDINALITY AS i(id, job_id, now, ord), inbound_sources s
	WHERE m.id = i.id AND s.id = m.source_id AND m.state IN ('received', 'processing')
	RETURNING ` + recordColumns + `, EXISTS (SELECT 1 FROM supplier_connections c
		WHERE c.source_id = m.source_id AND c.activated_at IS NULL), i.ord`

func (s *groupStates) beginMany(ctx context.Context, reqs []beginReq) ([]beginRes, error) {
	ids, jobs, nows := make([][16]byte, len(reqs)), make([]int64, len(reqs)), make([]time.Time, len(reqs))
	for i, r := range reqs {
		ids[i], jobs[i], nows[i] = r.id, r.jobID, r.now
	}
	rows, err := s.tx.Query(ctx, beginManySQL, ids, jobs, nows)
	if err != nil {
		return nil, fmt.Errorf("begin inbound messages: %w", err)
	}
	out := make([]beginRes, len(reqs))
	for rows.Next() {
		var pending bool
		var ord int64
		r, err := scanRecordWith(rows, &pending, &ord)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("begin inbound messages: %w", err)
		}
		r.ActivationPending = pending
		out[ord-1] = beginRes{rec: r, ok: true}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("begin inbound messages: %w", err)
	}
	return out, nil
}

// doneManySQL is inboxStore.MarkDone for many messages.
const doneManySQL = `UPDATE inbound_messages m SET state = 'done', done_at = i.now, last_error = NULL, next_attempt_at = NULL
	FROM unnest($1::uuid[], $2::timestamptz[]) AS i(id, now)
	WHERE m.id = i.id AND m.state = 'processing'`

func (s *groupStates) doneMany(ctx context.Context, reqs []doneReq) ([]struct{}, error) {
	ids, nows := make([][16]byte, len(reqs)), make([]time.Time, len(reqs))
	for i, r := range reqs {
		ids[i], nows[i] = r.id, r.now
	}
	if _, err := s.tx.Exec(ctx, doneManySQL, ids, nows); err != nil {
		return nil, fmt.Errorf("mark inbound messages done: %w", err)
	}
	return make([]struct{}, len(reqs)), nil
}

// group runs calls in groups: a call that arrives while maxStateFlights
// statements run waits and goes in the next group; a call alone goes at
// once. Two calls for the same message never share a statement (the second
// goes in a later one), so each sees the other's change as it would
// one statement after another.
type group[Req, Res any] struct {
	run func(ctx context.Context, reqs []Req) ([]Res, error)
	key func(Req) uuid.UUID

	mu     sync.Mutex
	queue  []*call[Req, Res]
	active int
}

type call[Req, Res any] struct {
	req  Req
	wake chan struct{}
	// Set under group.mu before wake is signalled.
	done, lead bool
	res        Res
	err        error
}

// do runs req in a group and returns its result once that group's statement
// has ended. The statement runs detached from ctx (bounded by stateTimeout):
// a change made for a run that stops waiting would otherwise be applied with
// no one to act on it.
func (g *group[Req, Res]) do(ctx context.Context, req Req) (Res, error) {
	c := &call[Req, Res]{req: req, wake: make(chan struct{}, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	if g.active < maxStateFlights {
		g.active++
		c.lead = true
	}
	g.mu.Unlock()
	for {
		g.mu.Lock()
		lead, done := c.lead, c.done
		c.lead = false
		if done && lead {
			g.handOffLocked()
		}
		g.mu.Unlock()
		switch {
		case done:
			return c.res, c.err
		case lead:
			g.flush(ctx)
		default:
			<-c.wake
		}
	}
}

// flush runs the next group from the queue, then hands the lead to the
// first call still waiting, or ends this flight.
func (g *group[Req, Res]) flush(ctx context.Context) {
	g.mu.Lock()
	n := min(len(g.queue), maxStateBatch)
	taken := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()

	if len(taken) > 0 {
		seen := make(map[uuid.UUID]bool, len(taken))
		var later []*call[Req, Res]
		run := taken[:0:0]
		reqs := make([]Req, 0, len(taken))
		for _, c := range taken {
			k := g.key(c.req)
			if seen[k] {
				later = append(later, c)
				continue
			}
			seen[k] = true
			run = append(run, c)
			reqs = append(reqs, c.req)
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stateTimeout)
		res, err := g.run(fctx, reqs)
		cancel()
		g.mu.Lock()
		g.queue = append(later, g.queue...)
		for i, c := range run {
			c.done, c.err = true, err
			if err == nil {
				c.res = res[i]
			}
			wake(c.wake)
		}
		g.mu.Unlock()
	}
	g.mu.Lock()
	g.handOffLocked()
	g.mu.Unlock()
}

// handOffLocked gives the lead to the first waiting call, or ends the
// flight when none waits.
func (g *group[Req, Res]) handOffLocked() {
	for _, c := range g.queue {
		if !c.done && !c.lead {
			c.lead = true
			wake(c.wake)
			return
		}
	}
	g.active--
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
