package bench

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/testdb"
)

// TestLastSettledReadsTheTurnsLatestDoneAtOrFannedOutAt: a W4 events turn
// ends at the latest done_at of its own messages or fanned_out_at of its
// source's events, by the database's clock; another turn's messages, an
// event before the turn and a message not done yet do not count, and a turn
// with nothing settled is an error.
func TestLastSettledReadsTheTurnsLatestDoneAtOrFannedOutAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	b := &ServerBench{Pool: pool}
	owner, source := uuid.New(), uuid.New()
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	_, err := pool.Exec(ctx, `INSERT INTO owners (id, email, password_hash, created_at, updated_at) VALUES ($1, 'w4e@bench.example.com', 'x', $2, $2)`, owner, t0)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO inbound_sources (id, owner_id, name, verifier, sealed_secret, body_limit, tolerance_seconds, created_at, updated_at)
VALUES ($1, $2, 'events on', 'standard-webhooks', '\x00', 1024, 300, $3, $3)`, source, owner, t0)
	require.NoError(t, err)
	message := func(id string, done *time.Time) {
		t.Helper()
		digest := sha256.Sum256([]byte(id))
		state := "received"
		if done != nil {
			state = "done"
		}
		_, err := pool.Exec(ctx, `INSERT INTO inbound_messages (id, owner_id, source_id, message_id, message_id_signed, payload_sha256, body, received_at, state, done_at)
VALUES ($1, $2, $3, $4, true, $5, '', $6, $7, $8)`, uuid.New(), owner, source, id, digest[:], t0, state, done)
		require.NoError(t, err)
	}
	event := func(occurred, fanned time.Time) {
		t.Helper()
		_, err := pool.Exec(ctx, `INSERT INTO events (owner_id, type, subject, occurred_at, fanned_out_at) VALUES ($1, 'inbound.message.received', $2, $3, $4)`,
			owner, "inbound:"+source.String(), occurred, fanned)
		require.NoError(t, err)
	}
	at := func(ms int) *time.Time { v := t0.Add(time.Duration(ms) * time.Millisecond); return &v }

	_, err = b.lastSettled(ctx, source.String(), "msg_w4e0_", t0)
	require.Error(t, err, "a turn with nothing settled has no end")

	message("msg_w4e0_1", at(300))
	message("msg_w4e0_2", at(700))
	message("msg_w4e0_3", nil)             // not done: no end
	message("msg_w4e1_1", at(5000))        // the next turn's
	event(t0.Add(-time.Second), *at(9000)) // an event from before the turn
	last, err := b.lastSettled(ctx, source.String(), "msg_w4e0_", t0)
	require.NoError(t, err)
	require.True(t, last.Equal(*at(700)), "the turn's last done_at: got %s", last)

	event(*at(100), *at(900)) // the turn's event, relayed after its last message
	last, err = b.lastSettled(ctx, source.String(), "msg_w4e0_", t0)
	require.NoError(t, err)
	require.True(t, last.Equal(*at(900)), "the turn's last fanned_out_at: got %s", last)
}
