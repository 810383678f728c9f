package webhook_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook"
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
	for state, want := range map[string]string{"available": "queue", "pending": "window", "scheduled": "schedule", "retryable": ""} {
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

func TestRecoverValidatesItsRangeAndBound(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	ctx := context.Background()
	created, err := b.svc.Create(ctx, b.owner, webhook.CreateInput{URL: "https://x.example", EventTypes: []string{"corpus.note.*"}})
	require.NoError(t, err)
	found := 3
	var gotTypes []string
	b.store.RecoverFunc = func(_, _ uuid.UUID, types []string, _, _ time.Time, max int) (int, int, error) {
		gotTypes = types
		if found > max {
			return max + 1, 0, nil
		}
		return found, 2, nil
	}
	out, err := b.svc.Recover(ctx, b.owner, webhook.RecoverInput{ID: created.ID, Since: "2026-01-01T00:00:00Z"})
	require.NoError(t, err)
	require.Equal(t, webhook.RecoverOutput{Events: 3, Queued: 2, Existing: 1}, out)
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
