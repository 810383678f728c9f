package events

import (
	"context"
	"fmt"
	"slices"
	"strings"

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

// batchSQL are the statements a Batch flushes with, built once for the
// Recorder's routes: each writes the kept events, runs every subscription's
// Owners query (over $1, the owners asked) and writes an event that no
// subscription wants already relayed, with no job, as the relay would mark
// it. notify also queues a wake-up when some event waits for the relay.
type batchSQL struct {
	notify, quiet string
	// unrouted is set when the Recorder has no routes: every event waits
	// for the relay.
	unrouted bool
	// types is how the statements treat an event of each routed type.
	types map[string]typeRoute
}

// typeRoute is what an event of one type passes to the batch statements:
// always, some subscription takes every owner's; asks, bit k set for the
// k-th Owners query among its subscriptions'. A type routed nowhere has
// neither, so its events are written relayed.
type typeRoute struct {
	always bool
	asks   int64
}

// maxOwnersQueries bounds the subscriptions with an Owners query a
// Recorder routes: an event's asks is a bigint of one bit each.
const maxOwnersQueries = 63

// newBatchSQL builds the statements for rs (nil: no routes). An event is
// settled unless it is always wanted (a subscription of its type takes every
// owner, or the Recorder has no routes) or a query it asks names its owner.
// Both CTEs are MATERIALIZED: inlined, each query would run once per event
// (twice, for the two uses of settled) instead of once per batch. ORDER BY
// keeps the ids' order, so the primary key grows append-only.
func newBatchSQL(rs routes) (batchSQL, error) {
	b := batchSQL{unrouted: rs == nil, types: map[string]typeRoute{}}
	index := map[*Subscription]int{}
	var wanted []string
	for t, subs := range rs {
		var tr typeRoute
		for _, s := range subs {
			if s.Owners == "" {
				tr.always = true
				continue
			}
			k, seen := index[s]
			if !seen {
				if len(index) == maxOwnersQueries {
					return batchSQL{}, fmt.Errorf("more than %d subscriptions with an Owners query", maxOwnersQueries)
				}
				k = len(index)
				index[s] = k
				wanted = append(wanted, fmt.Sprintf("SELECT %d, o FROM (%s) AS q%d(o)", k, s.Owners, k))
			}
			tr.asks |= 1 << k
		}
		b.types[t] = tr
	}
	// $1 is named even with no query, so that its type is known.
	wanted = append(wanted, "SELECT NULL::int, o FROM unnest($1::uuid[]) AS o WHERE false")
	rows := `WITH wanted(k, o) AS MATERIALIZED (
	` + strings.Join(wanted, "\n\tUNION ALL ") + `
), input AS MATERIALIZED (
	SELECT id, owner_id, type, subject, data,
		NOT (always OR EXISTS (SELECT 1 FROM wanted w WHERE w.o = u.owner_id AND u.asks & (1::bigint << w.k) <> 0)) AS settled
	FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::jsonb[], $7::bool[], $8::bigint[])
		AS u(id, owner_id, type, subject, data, always, asks)
), ins AS (
	INSERT INTO events (id, owner_id, type, subject, data, fanned_out_at, fanout)
	SELECT id, owner_id, type, subject, data,
		CASE WHEN settled THEN clock_timestamp() END, CASE WHEN settled THEN '[]'::jsonb END
	FROM input
	ORDER BY 1
	RETURNING fanned_out_at IS NULL AS waits
)
SELECT count(*), coalesce(bool_or(waits), false), `
	b.notify = rows + `CASE WHEN bool_or(waits) THEN pg_notify('` + Channel + `', '')::text END FROM ins`
	b.quiet = rows + `NULL::text FROM ins`
	return b, nil
}

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

// Flush writes the events kept since the last Flush in one statement, which
// also asks the subscriptions' Owners queries and writes the events nobody
// wants already relayed (see Recorder.Route); with none kept it does
// nothing. It queues a wake-up (under NotifySpacing) only when some event
// waits for the relay, and gives the spacing back when none does.
func (b *BatchRecorder) Flush(ctx context.Context) error {
	n := len(b.ids)
	if n == 0 {
		return nil
	}
	st := b.r.batch
	always, asks := make([]bool, n), make([]int64, n)
	var asked []uuid.UUID
	mayWait := false
	for i, t := range b.types {
		tr := st.types[t]
		always[i], asks[i] = st.unrouted || tr.always, tr.asks
		if asks[i] != 0 && !slices.Contains(asked, b.owners[i]) {
			asked = append(asked, b.owners[i])
		}
		mayWait = mayWait || always[i] || asks[i] != 0
	}
	q, last, at := st.quiet, int64(0), int64(0)
	if mayWait {
		var ok bool
		if last, at, ok = b.r.claimWake(); ok {
			q = st.notify
		}
	}
	var (
		written int64
		waits   bool
		ignored *string
	)
	if err := b.tx.QueryRow(ctx, q, asked, b.ids, b.owners, b.types, b.subs, b.data, always, asks).Scan(&written, &waits, &ignored); err != nil {
		return fmt.Errorf("record %d events: insert: %w", n, err)
	}
	if written != int64(n) {
		return fmt.Errorf("record %d events: %d written", n, written)
	}
	if at != 0 && !waits {
		// Nothing waits, so nothing was queued: the next writer may wake.
		b.r.notified.CompareAndSwap(at, last)
	}
	for _, t := range b.types {
		b.r.metrics.incRecorded(t)
	}
	b.ids, b.owners, b.types, b.subs, b.data = b.ids[:0], b.owners[:0], b.types[:0], b.subs[:0], b.data[:0]
	return nil
}
