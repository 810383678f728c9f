package events

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Batch binds the Recorder to the caller's transaction for a batch of
// events written together: Record checks and keeps each event, Flush writes
// all of them in one statement. The result satisfies domain.Recorder.
func (r *Recorder) Batch(tx pgx.Tx) *BatchRecorder {
	return &BatchRecorder{r: r, tx: tx}
}

// BatchRecorder records events in one transaction, written by Flush. An event
// Record returned an id for exists only if Flush succeeds and the transaction
// commits; the caller flushes before committing.
type BatchRecorder struct {
	r      *Recorder
	tx     pgx.Tx
	ids    []uuid.UUID
	owners []uuid.UUID
	types  []string
	subs   []string
	data   [][]byte
}

// insertEvents writes the kept events and queues one wake-up in one round
// trip (ORDER BY keeps the ids' order, so the primary key grows append-only);
// insertEventsQuiet writes them alone. An event settled ($6) is written
// relayed, with no job, as the relay would mark it.
const (
	insertEventsRows = `WITH ins AS (
	INSERT INTO events (id, owner_id, type, subject, data, fanned_out_at, fanout)
	SELECT id, owner_id, type, subject, data,
		CASE WHEN settled THEN clock_timestamp() END, CASE WHEN settled THEN '[]'::jsonb END
	FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::jsonb[], $6::bool[])
		AS i(id, owner_id, type, subject, data, settled)
	ORDER BY 1
	RETURNING 1
)
`
	insertEvents      = insertEventsRows + `SELECT count(*), pg_notify('` + Channel + `', '')::text FROM ins`
	insertEventsQuiet = insertEventsRows + `SELECT count(*), ''::text FROM ins`
)

// Record checks the event as TxRecorder.Record does (ErrUndeclaredType,
// ErrDataNotObject, nothing kept) and keeps it for Flush; it returns the id
// the event gets.
func (b *BatchRecorder) Record(_ context.Context, ownerID uuid.UUID, eventType, subject string, data any) (uuid.UUID, error) {
	id, raw, err := b.r.prepare(eventType, data)
	if err != nil {
		return uuid.Nil, err
	}
	b.ids, b.owners, b.types, b.subs, b.data = append(b.ids, id), append(b.owners, ownerID), append(b.types, eventType),
		append(b.subs, subject), append(b.data, raw)
	return id, nil
}

// Flush writes the events kept since the last Flush in one statement; with
// none kept it does nothing.
func (b *BatchRecorder) Flush(ctx context.Context) error {
	n := len(b.ids)
	if n == 0 {
		return nil
	}
	settled, err := b.settled(ctx)
	if err != nil {
		return fmt.Errorf("record %d events: %w", n, err)
	}
	q := insertEventsQuiet
	if slices.Contains(settled, false) && b.r.wake() {
		q = insertEvents
	}
	var written int64
	var ignored string
	if err := b.tx.QueryRow(ctx, q, b.ids, b.owners, b.types, b.subs, b.data, settled).Scan(&written, &ignored); err != nil {
		return fmt.Errorf("record %d events: insert: %w", n, err)
	}
	if written != int64(n) {
		return fmt.Errorf("record %d events: %d written", n, written)
	}
	for _, t := range b.types {
		b.r.metrics.incRecorded(t)
	}
	b.ids, b.owners, b.types, b.subs, b.data = b.ids[:0], b.owners[:0], b.types[:0], b.subs[:0], b.data[:0]
	return nil
}

// settled reports, per kept event, whether no subscription wants it (see
// Recorder.Route): its type has no subscriber, or each has an Owners function
// (asked once per batch, as the relay asks) that leaves its owner out. None is
// settled when the Recorder was not routed.
func (b *BatchRecorder) settled(ctx context.Context) ([]bool, error) {
	out := make([]bool, len(b.ids))
	if b.r.routes == nil {
		return out, nil
	}
	evs := make([]claimed, len(b.ids))
	for i := range b.ids {
		evs[i] = claimed{ID: b.ids[i], OwnerID: b.owners[i], Type: b.types[i]}
	}
	wanted, err := b.r.routes.ownersWanted(ctx, b.tx, evs)
	if err != nil {
		return nil, err
	}
	for i, ev := range evs {
		out[i] = !slices.ContainsFunc(b.r.routes[ev.Type], func(s *Subscription) bool {
			return s.Owners == nil || wanted[s][ev.OwnerID]
		})
	}
	return out, nil
}
