package inbound_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/domaintest"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// deadUnit is a fake DeadLetterUnit: the dead-letter change reaches the
// inbox only when fn returns nil, as a transaction's would.
type deadUnit struct {
	inbox inbound.InboxStates
	rec   *domaintest.Recorder
}

type deadTx struct {
	pending *[]func() error
	inbox   inbound.InboxStates
	rec     domain.Recorder
}

func (t deadTx) Inbox() inbound.InboxStates { return deferred{t} }
func (t deadTx) Recorder() domain.Recorder  { return t.rec }

// deferred queues MarkDead until the fake transaction commits.
type deferred struct{ t deadTx }

func (d deferred) Begin(ctx context.Context, id uuid.UUID, jobID int64, now time.Time) (inbound.Record, bool, error) {
	return d.t.inbox.Begin(ctx, id, jobID, now)
}
func (d deferred) MarkDone(ctx context.Context, id uuid.UUID, now time.Time) error {
	return d.t.inbox.MarkDone(ctx, id, now)
}
func (d deferred) MarkRetry(ctx context.Context, id uuid.UUID, e string, now, next time.Time) error {
	return d.t.inbox.MarkRetry(ctx, id, e, now, next)
}
func (d deferred) Abandon(ctx context.Context, id uuid.UUID) error { return d.t.inbox.Abandon(ctx, id) }
func (d deferred) MarkDead(ctx context.Context, id uuid.UUID, e string, now time.Time) error {
	*d.t.pending = append(*d.t.pending, func() error { return d.t.inbox.MarkDead(ctx, id, e, now) })
	return nil
}

func (u deadUnit) Do(_ context.Context, fn func(tx inbound.DeadLetterTx) error) error {
	var pending []func() error
	if err := fn(deadTx{pending: &pending, inbox: u.inbox, rec: u.rec}); err != nil {
		return err
	}
	for _, p := range pending {
		if err := p(); err != nil {
			return err
		}
	}
	return nil
}

func TestADeadLetterRecordsItsEventWithTheChange(t *testing.T) {
	t.Parallel()
	h := &failing{resultFunc: func(inbound.Message) error { return inbound.Permanent(errors.New("unknown product")) }}
	b := setup(t, inbound.Route{Name: "h", Kind: "standard-webhooks", EventType: "order.*", Handler: h})
	src, key := b.swSource(t)
	id := b.accept(t, key, src.ID, "msg_1", `{"type":"order.created"}`)
	rec := domaintest.NewRecorder()
	router, err := inbound.NewRouter(inbound.Route{Name: "h", Kind: "standard-webhooks", EventType: "order.*", Handler: h})
	require.NoError(t, err)
	proc := inbound.NewProcessor(inbound.ProcessorDeps{Inbox: b.mem.States(), Router: router, Clock: b.clock,
		DeadLetters: deadUnit{inbox: b.mem.States(), rec: rec}})

	out, err := proc.Process(context.Background(), id, inbound.Job{ID: 1, Attempt: 1, MaxAttempts: 5})
	require.NoError(t, err)
	require.Equal(t, inbound.OutcomeDead, out.Kind)
	m, _ := b.mem.Message(id)
	require.Equal(t, inbound.StateDead, m.State)
	evs := rec.Events()
	require.Len(t, evs, 1)
	require.Equal(t, domain.EventInboundMessageDeadLettered, evs[0].Type)
	require.Equal(t, b.owner, evs[0].OwnerID)
	var data map[string]any
	require.NoError(t, json.Unmarshal(evs[0].Data, &data))
	require.Equal(t, map[string]any{"source_id": src.ID.String(), "message_id": id.String(), "attempts": float64(1)}, data)
}

func TestADeadLetterWhoseEventFailsStaysProcessing(t *testing.T) {
	t.Parallel()
	h := &failing{resultFunc: func(inbound.Message) error { return inbound.Permanent(errors.New("unknown product")) }}
	b := setup(t, inbound.Route{Name: "h", Kind: "standard-webhooks", EventType: "order.*", Handler: h})
	src, key := b.swSource(t)
	id := b.accept(t, key, src.ID, "msg_1", `{"type":"order.created"}`)
	rec := domaintest.NewRecorder()
	rec.Fail(func(string) error { return errors.New("events table gone") })
	router, err := inbound.NewRouter(inbound.Route{Name: "h", Kind: "standard-webhooks", EventType: "order.*", Handler: h})
	require.NoError(t, err)
	proc := inbound.NewProcessor(inbound.ProcessorDeps{Inbox: b.mem.States(), Router: router, Clock: b.clock,
		DeadLetters: deadUnit{inbox: b.mem.States(), rec: rec}})

	_, err = proc.Process(context.Background(), id, inbound.Job{ID: 1, Attempt: 1, MaxAttempts: 5})
	require.ErrorContains(t, err, "events table gone")
	m, _ := b.mem.Message(id)
	require.NotEqual(t, inbound.StateDead, m.State, "no dead letter without its event")
	require.Empty(t, rec.Events())
}
