package inbounddb

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/adapters/postgres/batch"
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
	begin *batch.Group[beginReq, beginRes]
	done  *batch.Group[doneReq, struct{}]
}

var _ inbound.InboxStates = (*groupStates)(nil)

func newGroupStates(db querier) *groupStates {
	s := &groupStates{inboxStore: inboxStore{db}}
	s.begin = &batch.Group[beginReq, beginRes]{Run: s.beginMany, Key: func(r beginReq) (any, bool) { return r.id, true },
		MaxBatch: maxStateBatch, MaxFlights: maxStateFlights, Timeout: stateTimeout}
	s.done = &batch.Group[doneReq, struct{}]{Run: s.doneMany, Key: func(r doneReq) (any, bool) { return r.id, true },
		MaxBatch: maxStateBatch, MaxFlights: maxStateFlights, Timeout: stateTimeout}
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
	res, err := s.begin.Do(ctx, beginReq{id: id, jobID: jobID, now: now})
	if err != nil {
		return inbound.Record{}, false, err
	}
	return res.rec, res.ok, nil
}

// MarkDone marks the message done in the next group statement.
func (s *groupStates) MarkDone(ctx context.Context, id uuid.UUID, now time.Time) error {
	_, err := s.done.Do(ctx, doneReq{id: id, now: now})
	return err
}

// beginManySQL is inboxStore.Begin for many messages: each row's change and
// returned columns are those of the single statement.
const beginManySQL = `UPDATE inbound_messages m
	SET state = 'processing', attempts = m.attempts + 1, last_attempt_at = i.now, next_attempt_at = NULL, job_id = i.job_id
	FROM unnest($1::uuid[], $2::bigint[], $3::timestamptz[]) WITH ORDINALITY AS i(id, job_id, now, ord), inbound_sources s
	WHERE m.id = i.id AND s.id = m.source_id AND m.state IN ('received', 'processing')
	RETURNING ` + recordColumns + `, EXISTS (SELECT 1 FROM supplier_connections c
		WHERE c.source_id = m.source_id AND c.activated_at IS NULL), i.ord`

func (s *groupStates) beginMany(ctx context.Context, reqs []beginReq) ([]beginRes, error) {
	ids, jobs, nows := make([]uuid.UUID, len(reqs)), make([]int64, len(reqs)), make([]time.Time, len(reqs))
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
	ids, nows := make([]uuid.UUID, len(reqs)), make([]time.Time, len(reqs))
	for i, r := range reqs {
		ids[i], nows[i] = r.id, r.now
	}
	if _, err := s.tx.Exec(ctx, doneManySQL, ids, nows); err != nil {
		return nil, fmt.Errorf("mark inbound messages done: %w", err)
	}
	return make([]struct{}, len(reqs)), nil
}
