package inbounddb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/standmeet/standmeet/internal/adapters/postgres/pgerr"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

var _ inbound.Admitter = (*UnitOfWork)(nil)

// admitSQL writes a batch in one statement: the inbox rows of the
// admissions without a live replay key of another payload (a stable
// provider id is never refused so: its resend is a duplicate; ON CONFLICT DO
// NOTHING skips the messages already there, whichever unique index they
// hit), then the replay keys of the rows inserted, taking over expired ones.
// A row is written received when its message needs processing — always
// ($14), or when its source has a supplier connection not activated yet
// ($15), read in the statement's snapshot — and done at its receipt
// otherwise. It returns the input's positions that were inserted, whether
// each needs a job, and those refused for a live key. Rows are written in
// key order, so two batches holding the same messages wait for each other
// instead of deadlocking.
const admitSQL = `WITH input AS (
	SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::bool[], $6::text[], $7::bytea[],
		$8::bytea[], $9::jsonb[], $10::timestamptz[], $11::timestamptz[], $12::timestamptz[], $13::bool[], $14::bool[], $15::bool[])
		WITH ORDINALITY AS t(id, owner_id, source_id, message_id, message_id_signed, event_type, payload_sha256,
			body, headers, signed_at, received_at, expires_at, stable_id, always, if_pending, ord)
), taken AS (
	SELECT i.ord FROM input i JOIN inbound_replays r ON r.source_id = i.source_id AND r.message_id = i.message_id
	WHERE r.expires_at > i.received_at AND r.payload_sha256 <> i.payload_sha256 AND NOT i.stable_id
), ins AS (
	INSERT INTO inbound_messages (id, owner_id, source_id, message_id, message_id_signed, event_type,
		payload_sha256, body, headers, signed_at, received_at, state, done_at)
	SELECT id, owner_id, source_id, message_id, message_id_signed, event_type, payload_sha256, body, headers,
		signed_at, received_at, CASE WHEN n.queued THEN 'received' ELSE 'done' END, CASE WHEN n.queued THEN NULL ELSE received_at END
	FROM input, LATERAL (SELECT always OR (if_pending AND EXISTS (SELECT 1 FROM supplier_connections c
		WHERE c.source_id = input.source_id AND c.activated_at IS NULL)) AS queued) n
	WHERE ord NOT IN (SELECT ord FROM taken)
	ORDER BY source_id, message_id
	ON CONFLICT DO NOTHING
	RETURNING id, state = 'received' AS queued
), reg AS (
	INSERT INTO inbound_replays (source_id, message_id, payload_sha256, registered_at, expires_at)
	SELECT i.source_id, i.message_id, i.payload_sha256, i.received_at, i.expires_at FROM input i JOIN ins ON ins.id = i.id
	ORDER BY i.source_id, i.message_id
	ON CONFLICT (source_id, message_id) DO UPDATE
		SET payload_sha256 = EXCLUDED.payload_sha256, registered_at = EXCLUDED.registered_at, expires_at = EXCLUDED.expires_at
		WHERE inbound_replays.expires_at <= EXCLUDED.registered_at
	RETURNING 1
)
SELECT i.ord, ins.id IS NOT NULL, coalesce(ins.queued, false), i.ord IN (SELECT ord FROM taken), (SELECT count(*) FROM reg)
FROM input i LEFT JOIN ins ON ins.id = i.id`

// existingSQL finds, in a fresh snapshot (so it sees rows that concurrent
// writers committed while the insert waited on them), the row already there
// for each admission not inserted: by message id first, else by body digest
// for an unsigned id.
const existingSQL = `SELECT DISTINCT ON (i.ord) i.ord, m.id, m.payload_sha256 = i.payload_sha256, m.message_id = i.message_id
FROM unnest($1::uuid[], $2::text[], $3::bytea[], $4::bool[]) WITH ORDINALITY AS i(source_id, message_id, payload_sha256, signed, ord)
JOIN inbound_messages m ON m.source_id = i.source_id
	AND (m.message_id = i.message_id OR (NOT i.signed AND NOT m.message_id_signed AND m.payload_sha256 = i.payload_sha256))
ORDER BY i.ord, m.message_id = i.message_id DESC`

// Admit writes a batch in one transaction: BEGIN, one statement for the
// inbox rows and replay keys, one more only when some message was there
// already, River's insert of the jobs of the messages that need processing
// (none when no message does), then's events in one statement, COMMIT.
func (u *UnitOfWork) Admit(ctx context.Context, batch []inbound.Admission, then inbound.AdmittedFunc) ([]inbound.Admitted, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	n := len(batch)
	var (
		ids, owners, sources         = make([]uuid.UUID, n), make([]uuid.UUID, n), make([]uuid.UUID, n)
		messageIDs, eventTypes       = make([]string, n), make([]string, n)
		signed, stable               = make([]bool, n), make([]bool, n)
		always, ifPending            = make([]bool, n), make([]bool, n)
		digests, bodies, headers     = make([][]byte, n), make([][]byte, n), make([][]byte, n)
		signedAt, receivedAt, expiry = make([]*time.Time, n), make([]time.Time, n), make([]time.Time, n)
	)
	for i, a := range batch {
		e := a.Envelope
		h, err := json.Marshal(e.Headers)
		if err != nil {
			return nil, fmt.Errorf("encode headers: %w", err)
		}
		ids[i], owners[i], sources[i], messageIDs[i], signed[i], eventTypes[i] = e.ID, e.OwnerID, e.SourceID, e.MessageID, e.MessageIDSigned, e.EventType
		stable[i] = e.StableID
		always[i], ifPending[i] = a.Need.Met(inbound.Unconditional), a.Need.Met(inbound.IfActivationPending)
		d := e.Digest
		digests[i], bodies[i], headers[i] = d[:], e.Body, h
		signedAt[i], receivedAt[i], expiry[i] = nullTime(e.SignedAt), e.ReceivedAt, a.ReplayExpiresAt
		if bodies[i] == nil {
			bodies[i] = []byte{}
		}
	}
	out := make([]inbound.Admitted, n)
	// Two batches may still deadlock on the body-digest index of unsigned
	// ids; PostgreSQL aborts one, which runs again.
	err := pgerr.Retry(3, func() error {
		return u.admitOnce(ctx, batch, then, out, ids, owners, sources, messageIDs, signed, eventTypes, digests, bodies, headers, signedAt, receivedAt, expiry,
			stable, always, ifPending)
	})
	if err != nil {
		return nil, unavailable(err)
	}
	return out, nil
}

func (u *UnitOfWork) admitOnce(ctx context.Context, batch []inbound.Admission, then inbound.AdmittedFunc, out []inbound.Admitted, ids, owners, sources []uuid.UUID,
	messageIDs []string, signed []bool, eventTypes []string, digests, bodies, headers [][]byte, signedAt []*time.Time, receivedAt, expiry []time.Time,
	stable, always, ifPending []bool,
) error {
	return inTx(ctx, u.db, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, admitSQL, ids, owners, sources, messageIDs, signed, eventTypes, digests,
			bodies, headers, signedAt, receivedAt, expiry, stable, always, ifPending)
		if err != nil {
			return fmt.Errorf("admit inbound messages: %w", err)
		}
		var jobs []inbound.ProcessJob
		var missing []int
		for rows.Next() {
			var ord int64
			var inserted, queued, taken bool
			var reg int64
			if err := rows.Scan(&ord, &inserted, &queued, &taken, &reg); err != nil {
				rows.Close()
				return fmt.Errorf("admit inbound messages: %w", err)
			}
			i := int(ord - 1)
			switch {
			case inserted:
				out[i] = inbound.Admitted{Status: inbound.Accepted, ID: ids[i]}
				if queued {
					jobs = append(jobs, inbound.ProcessJob{MessageID: ids[i], MaxAttempts: batch[i].MaxAttempts})
				}
			case taken:
				out[i] = inbound.Admitted{Conflict: true}
			default:
				missing = append(missing, i)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("admit inbound messages: %w", err)
		}
		if len(missing) > 0 {
			if err := existing(ctx, tx, batch, missing, out); err != nil {
				return err
			}
		}
		if err := u.jobs(tx).EnqueueProcess(ctx, jobs...); err != nil {
			return fmt.Errorf("enqueue inbound processing: %w", err)
		}
		if then == nil {
			return nil
		}
		var rec BatchRecorder
		at := admitTx{}
		if u.events != nil {
			rec = u.events(tx)
			at.rec = rec
		}
		if err := then(ctx, at, out); err != nil {
			return err
		}
		if rec == nil {
			return nil
		}
		return rec.Flush(ctx)
	})
}

// admitTx hands Admit's hook the Recorder of the admitting transaction.
type admitTx struct{ rec domain.Recorder }

func (t admitTx) Recorder() domain.Recorder { return t.rec }

// existing answers the admissions at positions idx whose message was in the
// inbox already: a duplicate, or a conflict when the same id came with
// another payload and is not a stable provider id.
func existing(ctx context.Context, tx pgx.Tx, batch []inbound.Admission, idx []int, out []inbound.Admitted) error {
	n := len(idx)
	sources, messageIDs, digests, signed := make([]uuid.UUID, n), make([]string, n), make([][]byte, n), make([]bool, n)
	for j, i := range idx {
		e := batch[i].Envelope
		d := e.Digest
		sources[j], messageIDs[j], digests[j], signed[j] = e.SourceID, e.MessageID, d[:], e.MessageIDSigned
	}
	rows, err := tx.Query(ctx, existingSQL, sources, messageIDs, digests, signed)
	if err != nil {
		return fmt.Errorf("read the inbound messages already there: %w", err)
	}
	found := 0
	for rows.Next() {
		var ord int64
		var id uuid.UUID
		var sameDigest, sameID bool
		if err := rows.Scan(&ord, &id, &sameDigest, &sameID); err != nil {
			rows.Close()
			return fmt.Errorf("read the inbound messages already there: %w", err)
		}
		i := idx[ord-1]
		if sameID && !sameDigest && !batch[i].Envelope.StableID {
			out[i] = inbound.Admitted{Conflict: true}
		} else {
			out[i] = inbound.Admitted{Status: inbound.Duplicate, ID: id}
		}
		found++
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the inbound messages already there: %w", err)
	}
	if found != n {
		return errors.New("read the inbound messages already there: a message that blocked the insert is gone")
	}
	return nil
}
