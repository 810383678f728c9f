package inbounddb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

type replayStore struct{ tx querier }

// Register inserts the key, or takes over a key that expired, in one
// statement; concurrent registrations of one key serialize on its unique
// index, so exactly one of them sees a row come back.
func (s replayStore) Register(ctx context.Context, key inbound.ReplayKey, digest inbound.Digest, now, expiresAt time.Time) (inbound.ReplayOutcome, error) {
	for range 2 {
		var registered bool
		err := s.tx.QueryRow(ctx, `INSERT INTO inbound_replays (source_id, message_id, payload_sha256, registered_at, expires_at)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (source_id, message_id) DO UPDATE
				SET payload_sha256 = EXCLUDED.payload_sha256, registered_at = EXCLUDED.registered_at, expires_at = EXCLUDED.expires_at
				WHERE inbound_replays.expires_at <= EXCLUDED.registered_at
			RETURNING true`, key.SourceID, key.MessageID, digest[:], now, expiresAt).Scan(&registered)
		if err == nil {
			return inbound.ReplayNew, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return 0, fmt.Errorf("register replay key: %w", err)
		}
		var existing []byte
		err = s.tx.QueryRow(ctx, `SELECT payload_sha256 FROM inbound_replays WHERE source_id = $1 AND message_id = $2`,
			key.SourceID, key.MessageID).Scan(&existing)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // purged between the two statements: register again
		}
		if err != nil {
			return 0, fmt.Errorf("read replay key: %w", err)
		}
		if bytes.Equal(existing, digest[:]) {
			return inbound.ReplayDuplicate, nil
		}
		return inbound.ReplayConflict, nil
	}
	return 0, errors.New("register replay key: the key keeps disappearing")
}

func (s replayStore) PurgeExpired(ctx context.Context, now time.Time, limit int) (int64, error) {
	tag, err := s.tx.Exec(ctx, `DELETE FROM inbound_replays WHERE (source_id, message_id) IN (
		SELECT source_id, message_id FROM inbound_replays WHERE expires_at < $1 LIMIT $2)`, now, limit)
	if err != nil {
		return 0, fmt.Errorf("purge replay keys: %w", err)
	}
	return tag.RowsAffected(), nil
}

type inboxStore struct{ tx querier }

func (s inboxStore) Insert(ctx context.Context, e inbound.Envelope) (inbound.InsertOutcome, error) {
	headers, err := json.Marshal(e.Headers)
	if err != nil {
		return inbound.InsertOutcome{}, fmt.Errorf("encode headers: %w", err)
	}
	var id uuid.UUID
	err = s.tx.QueryRow(ctx, `INSERT INTO inbound_messages (id, owner_id, source_id, message_id, message_id_signed, event_type,
			payload_sha256, body, headers, signed_at, received_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT DO NOTHING
		RETURNING id`,
		e.ID, e.OwnerID, e.SourceID, e.MessageID, e.MessageIDSigned, e.EventType,
		e.Digest[:], e.Body, headers, nullTime(e.SignedAt), e.ReceivedAt).Scan(&id)
	if err == nil {
		return inbound.InsertOutcome{Inserted: true}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return inbound.InsertOutcome{}, fmt.Errorf("insert inbound message: %w", err)
	}
	// ON CONFLICT DO NOTHING waited for any concurrent inserter of the same
	// key to commit, so this statement (a fresh snapshot) sees its row.
	var out inbound.InsertOutcome
	var digest []byte
	err = s.tx.QueryRow(ctx, `SELECT id, payload_sha256, message_id = $2 FROM inbound_messages
		WHERE source_id = $1 AND (message_id = $2 OR (NOT $4 AND NOT message_id_signed AND payload_sha256 = $3))
		ORDER BY message_id = $2 DESC LIMIT 1`,
		e.SourceID, e.MessageID, e.Digest[:], e.MessageIDSigned).Scan(&out.ExistingID, &digest, &out.SameMessageID)
	if err != nil {
		return inbound.InsertOutcome{}, fmt.Errorf("read the inbound message already there: %w", err)
	}
	copy(out.ExistingDigest[:], digest)
	return out, nil
}

// recordColumns are an inbox row's columns and its source's kind, for the
// queries that join inbound_sources as s.
const recordColumns = `m.id, m.owner_id, m.source_id, m.message_id, m.message_id_signed, m.event_type, m.payload_sha256,
	m.body, m.headers, m.signed_at, m.received_at, m.state, m.attempts, m.last_error, m.last_attempt_at,
	m.next_attempt_at, m.done_at, m.dead_at, m.replays, m.job_id, s.verifier`

// listColumns are recordColumns without the body and headers.
const listColumns = `m.id, m.owner_id, m.source_id, m.message_id, m.message_id_signed, m.event_type, m.payload_sha256,
	NULL::bytea, NULL::jsonb, m.signed_at, m.received_at, m.state, m.attempts, m.last_error, m.last_attempt_at,
	m.next_attempt_at, m.done_at, m.dead_at, m.replays, m.job_id, s.verifier`

func scanRecord(row pgx.Row) (inbound.Record, error) {
	return scanRecordWith(row)
}

// scanRecordWith scans the recordColumns, then extra destinations.
func scanRecordWith(row pgx.Row, extra ...any) (inbound.Record, error) {
	var r inbound.Record
	var digest, headers []byte
	var signedAt, lastAttempt, nextAttempt, doneAt, deadAt *time.Time
	var lastError *string
	var jobID *int64
	var state string
	dest := []any{&r.ID, &r.OwnerID, &r.SourceID, &r.MessageID, &r.MessageIDSigned, &r.EventType, &digest,
		&r.Body, &headers, &signedAt, &r.ReceivedAt, &state, &r.Attempts, &lastError, &lastAttempt,
		&nextAttempt, &doneAt, &deadAt, &r.Replays, &jobID, &r.SourceKind}
	err := row.Scan(append(dest, extra...)...)
	if err != nil {
		return inbound.Record{}, err
	}
	copy(r.Digest[:], digest)
	r.State = inbound.State(state)
	if len(headers) > 0 {
		if err := json.Unmarshal(headers, &r.Headers); err != nil {
			return inbound.Record{}, fmt.Errorf("decode headers: %w", err)
		}
	}
	if r.Headers == nil {
		r.Headers = domain.Header{}
	}
	r.SignedAt, r.LastAttemptAt, r.NextAttemptAt = deref(signedAt), deref(lastAttempt), deref(nextAttempt)
	r.DoneAt, r.DeadAt = deref(doneAt), deref(deadAt)
	if lastError != nil {
		r.LastError = *lastError
	}
	if jobID != nil {
		r.JobID = *jobID
	}
	return r, nil
}

func (s inboxStore) Begin(ctx context.Context, id uuid.UUID, jobID int64, now time.Time) (inbound.Record, bool, error) {
	var pending bool
	r, err := scanRecordWith(s.tx.QueryRow(ctx, `UPDATE inbound_messages m
		SET state = 'processing', attempts = m.attempts + 1, last_attempt_at = $3, next_attempt_at = NULL, job_id = $2
		FROM inbound_sources s
		WHERE m.id = $1 AND s.id = m.source_id AND m.state IN ('received', 'processing')
		RETURNING `+recordColumns+`, EXISTS (SELECT 1 FROM supplier_connections c
			WHERE c.source_id = m.source_id AND c.activated_at IS NULL)`, id, jobID, now), &pending)
	if errors.Is(err, pgx.ErrNoRows) {
		return inbound.Record{}, false, nil
	}
	if err != nil {
		return inbound.Record{}, false, fmt.Errorf("begin inbound message: %w", err)
	}
	r.ActivationPending = pending
	return r, true, nil
}

func (s inboxStore) Abandon(ctx context.Context, id uuid.UUID) error {
	_, err := s.tx.Exec(ctx, `UPDATE inbound_messages SET state = 'received', attempts = greatest(attempts - 1, 0)
		WHERE id = $1 AND state = 'processing'`, id)
	if err != nil {
		return fmt.Errorf("abandon inbound message: %w", err)
	}
	return nil
}

func (s inboxStore) MarkDone(ctx context.Context, id uuid.UUID, now time.Time) error {
	_, err := s.tx.Exec(ctx, `UPDATE inbound_messages SET state = 'done', done_at = $2, last_error = NULL, next_attempt_at = NULL
		WHERE id = $1 AND state = 'processing'`, id, now)
	if err != nil {
		return fmt.Errorf("mark inbound message done: %w", err)
	}
	return nil
}

func (s inboxStore) MarkRetry(ctx context.Context, id uuid.UUID, lastError string, now, next time.Time) error {
	_, err := s.tx.Exec(ctx, `UPDATE inbound_messages SET state = 'received', last_error = $2, next_attempt_at = $3
		WHERE id = $1 AND state = 'processing'`, id, lastError, next)
	if err != nil {
		return fmt.Errorf("mark inbound message for retry: %w", err)
	}
	return nil
}

func (s inboxStore) MarkDead(ctx context.Context, id uuid.UUID, lastError string, now time.Time) error {
	_, err := s.tx.Exec(ctx, `UPDATE inbound_messages SET state = 'dead', last_error = $2, dead_at = $3, next_attempt_at = NULL
		WHERE id = $1 AND state = 'processing'`, id, lastError, now)
	if err != nil {
		return fmt.Errorf("mark inbound message dead: %w", err)
	}
	return nil
}

func (s inboxStore) Get(ctx context.Context, ownerID, id uuid.UUID) (inbound.Record, error) {
	r, err := scanRecord(s.tx.QueryRow(ctx, `SELECT `+recordColumns+`
		FROM inbound_messages m JOIN inbound_sources s ON s.id = m.source_id
		WHERE m.owner_id = $1 AND m.id = $2`, ownerID, id))
	if err != nil {
		return inbound.Record{}, notFound(err, "get inbound message")
	}
	return r, nil
}

func (s inboxStore) List(ctx context.Context, ownerID, sourceID uuid.UUID, state inbound.State, q inbound.PageQuery) ([]inbound.Record, error) {
	at, id := cursorArgs(q.After)
	// The dead branch is spelled out so the planner can use the partial
	// dead-letter index (dead_at is set exactly when state is 'dead').
	filter := `($3 = '' OR m.state = $3)`
	if state == inbound.StateDead {
		filter = `m.dead_at IS NOT NULL AND m.state = 'dead' AND $3 = 'dead'`
	}
	rows, err := s.tx.Query(ctx, `SELECT `+listColumns+`
		FROM inbound_messages m JOIN inbound_sources s ON s.id = m.source_id
		WHERE m.owner_id = $1 AND m.source_id = $2 AND `+filter+`
			AND ($4::timestamptz IS NULL OR (m.received_at, m.id) < ($4, $5))
		ORDER BY m.received_at DESC, m.id DESC LIMIT $6`, ownerID, sourceID, string(state), at, id, q.Limit+1)
	if err != nil {
		return nil, fmt.Errorf("list inbound messages: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (inbound.Record, error) { return scanRecord(r) })
	if err != nil {
		return nil, fmt.Errorf("list inbound messages: %w", err)
	}
	return out, nil
}

func (s inboxStore) Revive(ctx context.Context, ownerID, sourceID, id uuid.UUID, resetAttempts bool, maxAttempts int, now time.Time) ([]inbound.Revived, error) {
	var only *uuid.UUID
	if id != uuid.Nil {
		only = &id
	}
	rows, err := s.tx.Query(ctx, `UPDATE inbound_messages
		SET state = 'received', attempts = CASE WHEN $4 THEN 0 ELSE attempts END, replays = replays + 1,
			dead_at = NULL, done_at = NULL, next_attempt_at = $5, job_id = NULL
		WHERE owner_id = $1 AND source_id = $2 AND state = 'dead' AND ($3::uuid IS NULL OR id = $3)
		RETURNING id, attempts`, ownerID, sourceID, only, resetAttempts, now)
	if err != nil {
		return nil, fmt.Errorf("revive dead letters: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (inbound.Revived, error) {
		var rv inbound.Revived
		var attempts int
		if err := r.Scan(&rv.ID, &attempts); err != nil {
			return rv, err
		}
		rv.MaxAttempts = max(maxAttempts-attempts, 1)
		return rv, nil
	})
	if err != nil {
		return nil, fmt.Errorf("revive dead letters: %w", err)
	}
	return out, nil
}

// PurgeDone walks the messages that are not dead letters in the order they
// were received (a message is received before it is done), so no index
// names state or done_at and processing's changes stay heap-only.
func (s inboxStore) PurgeDone(ctx context.Context, before time.Time, limit int) (int64, error) {
	tag, err := s.tx.Exec(ctx, `DELETE FROM inbound_messages WHERE id IN (
  SELECT id FROM inbound_messages WHERE dead_at IS NULL AND received_at < $1 AND state = 'done' AND done_at < $1
  ORDER BY received_at LIMIT $2)`, before, limit)
	if err != nil {
		return 0, fmt.Errorf("purge processed inbound messages: %w", err)
	}
	return tag.RowsAffected(), nil
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
