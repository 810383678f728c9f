package webhook_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// requireDomainCode asserts err is a domain error with code, of any kind.
func requireDomainCode(t *testing.T, err error, code string) {
	t.Helper()
	require.Error(t, err)
	de := domain.AsError(err)
	require.NotNil(t, de, "not a domain error: %v", err)
	require.Equal(t, code, de.Code, err.Error())
}

func TestStatusOfNamesEveryRiverState(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		state  string
		failed bool
		want   string
	}{
		{"completed", true, webhook.StatusDelivered}, {"running", false, webhook.StatusSending}, {"available", false, webhook.StatusWaiting},
		{"pending", false, webhook.StatusWaiting}, {"scheduled", false, webhook.StatusWaiting}, {"scheduled", true, webhook.StatusRetrying},
		{"retryable", true, webhook.StatusRetrying}, {"discarded", true, webhook.StatusFailed}, {"cancelled", false, webhook.StatusCancelled},
	} {
		require.Equal(t, c.want, webhook.StatusOf(c.state, c.failed), c.state)
	}
}

func TestAWaitingRowSaysWhatItWaitsFor(t *testing.T) {
	t.Parallel()
	for state, want := range map[string]string{"available": "queue", "pending": "queue", "scheduled": "schedule", "retryable": ""} {
		d := webhook.Delivery{State: state, FailedBefore: state == "retryable"}
		webhook.FinishDelivery(&d)
		require.Equal(t, want, d.WaitingFor, state)
	}
}

func TestADeliveredRowShowsNoOldError(t *testing.T) {
	t.Parallel()
	msg := "500 Internal Server Error"
	d := webhook.Delivery{JobID: 1, State: "completed", FailedBefore: true, LastError: &msg}
	webhook.FinishDelivery(&d)
	require.Nil(t, d.LastError)
	require.Equal(t, webhook.StatusDelivered, d.Status)
}

func TestRetryNowAndSendAgainTakeTheirStatesOnly(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	ctx := context.Background()
	created, err := b.svc.Create(ctx, b.owner, webhook.CreateInput{URL: "https://x.example", EventTypes: []string{"*"}})
	require.NoError(t, err)
	state := "completed"
	b.store.RetryFunc = func(_ uuid.UUID, _ int64, states []string) (string, string, error) {
		for _, s := range states {
			if s == state {
				return state, "available", nil
			}
		}
		return state, "", nil
	}
	_, err = b.svc.RetryNow(ctx, b.owner, webhook.DeliveryIDInput{ID: created.ID, JobID: 7})
	requireDomainCode(t, err, webhook.CodeWrongState)
	out, err := b.svc.SendAgain(ctx, b.owner, webhook.DeliveryIDInput{ID: created.ID, JobID: 7})
	require.NoError(t, err)
	require.Equal(t, webhook.RetryOutput{JobID: 7, From: "completed", State: "available"}, out)
	state = "retryable"
	_, err = b.svc.SendAgain(ctx, b.owner, webhook.DeliveryIDInput{ID: created.ID, JobID: 7})
	requireDomainCode(t, err, webhook.CodeWrongState)
	_, err = b.svc.RetryNow(ctx, b.owner, webhook.DeliveryIDInput{ID: created.ID, JobID: 7})
	require.NoError(t, err)
	_, err = b.svc.RetryNow(ctx, uuid.New(), webhook.DeliveryIDInput{ID: created.ID, JobID: 7})
	require.ErrorIs(t, err, domain.ErrNotFound)
}

// Recover applies the fan-out's rules: another endpoint's webhook.test, an
// unpublished note's event (a standalone endpoint's scope), a raw:// one,
// an event the payload filter refuses and an event about the endpoint
// itself are skipped with their reasons, and only the rest is queued.
func TestRecoverQueuesOnlyWhatTheFanoutWouldSend(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	ctx := context.Background()
	created, err := b.svc.Create(ctx, b.owner, webhook.CreateInput{URL: "https://x.example", EventTypes: []string{"*"},
		Filter: json.RawMessage(`{"data.op":{"$neq":"deleted"}}`)})
	require.NoError(t, err)
	other := uuid.New()
	ev := func(typ, subject, data string) delivery.Event {
		return delivery.Event{ID: uuid.New(), OwnerID: b.owner, Type: typ, Subject: subject, Data: json.RawMessage(data)}
	}
	ownTest := ev(domain.EventWebhookTest, "webhook:x", `{"endpoint_id":"`+created.ID.String()+`","test":true}`)
	othersTest := ev(domain.EventWebhookTest, "webhook:y", `{"endpoint_id":"`+other.String()+`","test":true}`)
	published := ev(domain.EventCorpusNoteChanged, "wiki://a", `{"op":"updated","published":true}`)
	unpublished := ev(domain.EventCorpusNoteChanged, "wiki://b", `{"op":"updated","published":false,"was_published":false}`)
	raw := ev(domain.EventCorpusNoteChanged, "raw://c", `{"op":"updated","published":true}`)
	filtered := ev(domain.EventCorpusNoteChanged, "wiki://d", `{"op":"deleted","published":false,"was_published":true}`)
	aboutItself := ev(domain.EventWebhookEndpointFailing, "webhook:"+created.ID.String(), `{"endpoint_id":"`+created.ID.String()+`","failing_since":"2026-01-01T00:00:00Z"}`)
	b.store.RangeEventsFunc = func(uuid.UUID, []string, time.Time, time.Time, int) ([]delivery.Event, error) {
		return []delivery.Event{ownTest, othersTest, published, unpublished, raw, filtered, aboutItself}, nil
	}
	var queued []uuid.UUID
	b.store.QueueRecoveredFunc = func(_ uuid.UUID, ids []uuid.UUID) (int, error) { queued = ids; return len(ids), nil }
	out, err := b.svc.Recover(ctx, b.owner, webhook.RecoverInput{ID: created.ID, Since: "2026-01-01T00:00:00Z"})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{ownTest.ID, published.ID}, queued)
	require.Equal(t, 7, out.Events)
	require.Equal(t, 2, out.Queued)
	reasons := map[uuid.UUID]string{}
	for _, s := range out.Skipped {
		reasons[s.EventID] = s.Reason
		require.NotEmpty(t, s.Text)
	}
	require.Equal(t, map[uuid.UUID]string{
		othersTest.ID:  webhook.ReasonNotSubscribed,
		unpublished.ID: webhook.ReasonUnpublished,
		raw.ID:         webhook.ReasonRaw,
		filtered.ID:    webhook.ReasonFilteredOut,
		aboutItself.ID: webhook.ReasonNotSubscribed,
	}, reasons)
}

// Redeliver queues again only the failed deliveries the fan-out's rules
// still send: one cancelled by rule (another endpoint's webhook.test) and
// one whose event was pruned stay, with their reasons.
func TestRedeliverNeverRequeuesWhatTheRulesKeepOut(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	ctx := context.Background()
	created, err := b.svc.Create(ctx, b.owner, webhook.CreateInput{URL: "https://x.example", EventTypes: []string{"*"}})
	require.NoError(t, err)
	ok := delivery.Event{ID: uuid.New(), Type: "booking.created", Subject: "booking://b_1", Data: json.RawMessage(`{"booking_id":"b_1"}`)}
	othersTest := delivery.Event{ID: uuid.New(), Type: domain.EventWebhookTest, Subject: "webhook:y", Data: json.RawMessage(`{"endpoint_id":"` + uuid.NewString() + `","test":true}`)}
	b.store.FailedFunc = func(uuid.UUID) ([]webhook.FailedDelivery, error) {
		return []webhook.FailedDelivery{{JobID: 1, State: "discarded", Event: &ok}, {JobID: 2, State: "cancelled", Event: &othersTest}, {JobID: 3, State: "cancelled"}}, nil
	}
	var requeued []int64
	b.store.RequeueFunc = func(_ uuid.UUID, ids []int64) error { requeued = ids; return nil }
	out, err := b.svc.Redeliver(ctx, b.owner, created.ID)
	require.NoError(t, err)
	require.Equal(t, []int64{1}, requeued)
	require.Equal(t, 1, out.Count)
	require.Equal(t, map[string]int{"discarded": 1, "cancelled": 0}, out.ByState)
	require.Len(t, out.Skipped, 2)
	require.Equal(t, webhook.SkippedEvent{EventID: othersTest.ID, EventType: domain.EventWebhookTest, JobID: 2, Reason: webhook.ReasonNotSubscribed,
		Text: webhook.FanoutReasonText(webhook.ReasonNotSubscribed, nil)}, out.Skipped[0])
	require.Equal(t, int64(3), out.Skipped[1].JobID)
	require.Equal(t, webhook.ReasonEventGone, out.Skipped[1].Reason)
}

func TestRecoverValidatesItsRangeAndBound(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	ctx := context.Background()
	created, err := b.svc.Create(ctx, b.owner, webhook.CreateInput{URL: "https://x.example", EventTypes: []string{"corpus.note.*"}})
	require.NoError(t, err)
	found := 3
	var gotTypes []string
	published := json.RawMessage(`{"published":true}`)
	b.store.RangeEventsFunc = func(_ uuid.UUID, types []string, _, _ time.Time, max int) ([]delivery.Event, error) {
		gotTypes = types
		evs := make([]delivery.Event, min(found, max+1))
		for i := range evs {
			evs[i] = delivery.Event{ID: uuid.New(), Type: domain.EventCorpusNoteChanged, Subject: "wiki://a", Data: published}
		}
		return evs, nil
	}
	b.store.QueueRecoveredFunc = func(_ uuid.UUID, ids []uuid.UUID) (int, error) { return len(ids) - 1, nil }
	out, err := b.svc.Recover(ctx, b.owner, webhook.RecoverInput{ID: created.ID, Since: "2026-01-01T00:00:00Z"})
	require.NoError(t, err)
	require.Equal(t, webhook.RecoverOutput{Events: 3, Queued: 2, Existing: 1, Skipped: []webhook.SkippedEvent{}}, out)
	require.NotEmpty(t, gotTypes)
	for _, ty := range gotTypes {
		require.Regexp(t, `^corpus\.note\.`, ty)
	}
	found = webhook.MaxRecoverEvents + 5
	_, err = b.svc.Recover(ctx, b.owner, webhook.RecoverInput{ID: created.ID, Since: "2026-01-01T00:00:00Z"})
	requireCode(t, err, webhook.CodeRangeTooLarge)
	for _, in := range []webhook.RecoverInput{{}, {Since: "x"}, {Since: "2026-01-02T00:00:00Z", Until: "2026-01-01T00:00:00Z"}} {
		in.ID = created.ID
		_, err = b.svc.Recover(ctx, b.owner, in)
		requireCode(t, err, webhook.CodeInvalidTime)
	}
}
