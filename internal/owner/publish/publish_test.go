package publish_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/publish"
	"github.com/standmeet/standmeet/internal/owner/publish/publishtest"
)

// fakeLimiter grants budget events in total and records what it was asked.
type fakeLimiter struct {
	mu     sync.Mutex
	budget int
	keys   []string
	bytes  []int
}

func (l *fakeLimiter) Allow(key string, events, bytes int) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keys = append(l.keys, key)
	l.bytes = append(l.bytes, bytes)
	if events > l.budget {
		return 1500 * time.Millisecond, false
	}
	l.budget -= events
	return 0, true
}

func booking(id string) publish.Input {
	return publish.Input{Type: "booking.created", Subject: "booking://" + id,
		Data: json.RawMessage(`{"booking_id":"` + id + `","starts_at":"2026-12-08T09:30:00Z"}`)}
}

func newService(budget int) (*publish.Service, *publishtest.Memory, *fakeLimiter) {
	m := publishtest.NewMemory()
	l := &fakeLimiter{budget: budget}
	return publish.NewService(m, l), m, l
}

func requireCode(t *testing.T, err error, kind domain.Kind, code string) *domain.Error {
	t.Helper()
	de := domain.AsError(err)
	require.NotNil(t, de, "want a domain error, got %v", err)
	require.Equal(t, kind, de.Kind, de.Error())
	require.Equal(t, code, de.Code, de.Error())
	return de
}

func TestPublishRecordsTheEventInOneTransaction(t *testing.T) {
	t.Parallel()
	svc, m, l := newService(10)
	caller := op.Caller{OwnerID: uuid.New(), APIKeyID: uuid.New()}
	out, err := svc.Publish(context.Background(), caller, booking("b_1"))
	require.NoError(t, err)
	require.False(t, out.Duplicate)
	require.False(t, out.Replayed())
	evs := m.Events()
	require.Len(t, evs, 1)
	require.Equal(t, out.ID, evs[0].ID)
	require.Equal(t, caller.OwnerID, evs[0].OwnerID)
	require.Equal(t, "booking.created", evs[0].Type)
	require.Equal(t, "booking://b_1", evs[0].Subject)
	require.JSONEq(t, `{"booking_id":"b_1","starts_at":"2026-12-08T09:30:00Z"}`, string(evs[0].Data))
	require.Equal(t, []string{"api_key:" + caller.APIKeyID.String()}, l.keys, "limits count per API key")
}

func TestPublishRefusalsRecordNothing(t *testing.T) {
	t.Parallel()
	with := func(f func(*publish.Input)) publish.Input {
		in := booking("b_1")
		f(&in)
		return in
	}
	for _, tc := range []struct {
		name string
		in   publish.Input
		kind domain.Kind
		code string
	}{
		{"undeclared type", with(func(in *publish.Input) { in.Type = "booking.exploded" }), domain.KindValidation, publish.CodeUnknownType},
		{"internal type", with(func(in *publish.Input) { in.Type = domain.EventOwnerLogin; in.Data = json.RawMessage(`{}`) }), domain.KindForbidden, publish.CodeNotPublishable},
		{"trigger type", with(func(in *publish.Input) { in.Type = domain.EventCorpusNoteChanged }), domain.KindForbidden, publish.CodeNotPublishable},
		{"empty subject", with(func(in *publish.Input) { in.Subject = "" }), domain.KindValidation, publish.CodeInvalidSubject},
		{"subject without scheme", with(func(in *publish.Input) { in.Subject = "b_1" }), domain.KindValidation, publish.CodeInvalidSubject},
		{"subject with a space", with(func(in *publish.Input) { in.Subject = "booking://b 1" }), domain.KindValidation, publish.CodeInvalidSubject},
		{"subject with a bad scheme", with(func(in *publish.Input) { in.Subject = "1booking://b" }), domain.KindValidation, publish.CodeInvalidSubject},
		{"raw subject", with(func(in *publish.Input) { in.Subject = "RAW://diary/today" }), domain.KindValidation, publish.CodeInvalidSubject},
		{"subject too long", with(func(in *publish.Input) { in.Subject = "booking://" + strings.Repeat("b", publish.MaxSubjectLen) }), domain.KindValidation, publish.CodeInvalidSubject},
		{"data an array", with(func(in *publish.Input) { in.Data = json.RawMessage(`[1]`) }), domain.KindValidation, publish.CodeDataNotObject},
		{"data a string", with(func(in *publish.Input) { in.Data = json.RawMessage(`"x"`) }), domain.KindValidation, publish.CodeDataNotObject},
		{"data missing", with(func(in *publish.Input) { in.Data = nil }), domain.KindValidation, publish.CodeDataNotObject},
		{"data null", with(func(in *publish.Input) { in.Data = json.RawMessage(`null`) }), domain.KindValidation, publish.CodeDataNotObject},
		{"data oversized", with(func(in *publish.Input) {
			in.Data = json.RawMessage(`{"booking_id":"b_1","pad":"` + strings.Repeat("x", publish.MaxDataBytes) + `"}`)
		}), domain.KindTooLarge, publish.CodeDataTooLarge},
		{"data off schema", with(func(in *publish.Input) { in.Data = json.RawMessage(`{"booking_id":"b_1"}`) }), domain.KindUnprocessable, publish.CodeDataSchema},
		{"data with an undeclared field", with(func(in *publish.Input) {
			in.Data = json.RawMessage(`{"booking_id":"b_1","starts_at":"2026-12-08T09:30:00Z","email":"a@example.com"}`)
		}), domain.KindUnprocessable, publish.CodeDataSchema},
		{"idempotency key with a space", with(func(in *publish.Input) { in.IdempotencyKey = "a b" }), domain.KindValidation, publish.CodeInvalidIdempotency},
		{"idempotency key too long", with(func(in *publish.Input) { in.IdempotencyKey = strings.Repeat("k", 256) }), domain.KindValidation, publish.CodeInvalidIdempotency},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			svc, m, l := newService(10)
			_, err := svc.Publish(context.Background(), op.Caller{OwnerID: uuid.New()}, tc.in)
			requireCode(t, err, tc.kind, tc.code)
			require.Empty(t, m.Events())
			require.Empty(t, l.keys, "a refused event spends no rate")
		})
	}
}

func TestPublishRateLimitRefusesWithRetryAfterAndRecordsNothing(t *testing.T) {
	t.Parallel()
	svc, m, l := newService(1)
	owner := uuid.New()
	_, err := svc.Publish(context.Background(), op.Caller{OwnerID: owner}, booking("b_1"))
	require.NoError(t, err)
	_, err = svc.Publish(context.Background(), op.Caller{OwnerID: owner}, booking("b_2"))
	de := requireCode(t, err, domain.KindRateLimited, publish.CodeRateLimited)
	require.Equal(t, 2*time.Second, de.RetryAfter, "rounded to whole seconds")
	require.Len(t, m.Events(), 1)
	require.Equal(t, "owner:"+owner.String(), l.keys[0], "without an API key, the owner is the key")
	require.Equal(t, len(booking("b_1").Data), l.bytes[0], "bytes count the data")
}

// An idempotency key returns the first event for the same request (the
// same type, subject and data as a JSON value) and refuses another request
// with 409 IDEMPOTENCY_KEY_REUSED naming the first event.
func TestPublishIdempotencyKeyReturnsTheFirstEvent(t *testing.T) {
	t.Parallel()
	svc, m, _ := newService(20)
	owner := uuid.New()
	in := booking("b_1")
	in.IdempotencyKey = "order-1"
	first, err := svc.Publish(context.Background(), op.Caller{OwnerID: owner}, in)
	require.NoError(t, err)
	again, err := svc.Publish(context.Background(), op.Caller{OwnerID: owner}, in)
	require.NoError(t, err)
	require.Equal(t, publish.Output{ID: first.ID, Duplicate: true}, again)
	require.True(t, again.Replayed())
	reformatted := in
	reformatted.Data = json.RawMessage("{\n  \"starts_at\": \"2026-12-08T09:30:00Z\",\n  \"booking_id\": \"b_1\"\n}")
	again, err = svc.Publish(context.Background(), op.Caller{OwnerID: owner}, reformatted)
	require.NoError(t, err)
	require.Equal(t, publish.Output{ID: first.ID, Duplicate: true}, again, "white space and member order are the same request")

	for name, change := range map[string]func(*publish.Input){
		"data":    func(in *publish.Input) { in.Data = booking("b_2").Data },
		"subject": func(in *publish.Input) { in.Subject = "booking://b_2" },
		"type": func(in *publish.Input) {
			in.Type = "booking.cancelled"
			in.Data = json.RawMessage(`{"booking_id":"b_1"}`)
		},
	} {
		other := in
		change(&other)
		_, err = svc.Publish(context.Background(), op.Caller{OwnerID: owner}, other)
		de := requireCode(t, err, domain.KindConflict, publish.CodeKeyReused)
		require.Equal(t, "idempotency_key", de.Field, name)
		require.Contains(t, de.Message, first.ID.String(), "%s: the first event is named", name)
	}
	require.Len(t, m.Events(), 1, "a refused request records nothing")

	// Keys are the owner's: another owner's same key is a new event.
	theirs, err := svc.Publish(context.Background(), op.Caller{OwnerID: uuid.New()}, in)
	require.NoError(t, err)
	require.False(t, theirs.Duplicate)
	require.NotEqual(t, first.ID, theirs.ID)

	// Past the retention the event and its key are gone: the key is new.
	m.Prune(first.ID)
	later, err := svc.Publish(context.Background(), op.Caller{OwnerID: owner}, in)
	require.NoError(t, err)
	require.False(t, later.Duplicate)
}

func TestPublishKeyClaimedConcurrentlyReturnsTheWinner(t *testing.T) {
	t.Parallel()
	svc, m, _ := newService(10)
	owner := uuid.New()
	in := booking("b_1")
	in.IdempotencyKey = "race"
	var winner uuid.UUID
	once := sync.Once{}
	m.BeforeClaim = func() {
		once.Do(func() {
			// Another publish commits the key between this one's Find and Claim.
			other := publish.NewService(m, nil)
			m.BeforeClaim = nil
			out, err := other.Publish(context.Background(), op.Caller{OwnerID: owner}, in)
			require.NoError(t, err)
			winner = out.ID
		})
	}
	out, err := svc.Publish(context.Background(), op.Caller{OwnerID: owner}, in)
	require.NoError(t, err)
	require.Equal(t, publish.Output{ID: winner, Duplicate: true}, out)
	require.Len(t, m.Events(), 1, "the loser's event was rolled back")
}

func TestPublishBatchIsAllOrNothingAndNamesEveryRefusedItem(t *testing.T) {
	t.Parallel()
	svc, m, _ := newService(1000)
	owner := op.Caller{OwnerID: uuid.New()}
	good := []publish.Input{booking("b_1"), booking("b_2"), booking("b_3")}
	bad := append([]publish.Input(nil), good...)
	bad[1].Type = domain.EventIPBanAdded
	bad[2].Subject = "not a uri"
	_, err := svc.PublishBatch(context.Background(), owner, publish.BatchInput{Events: bad})
	de := requireCode(t, err, domain.KindForbidden, publish.CodeNotPublishable)
	require.Equal(t, "events[1].type", de.Field)
	require.Contains(t, de.Message, "events[1].type: EVENT_TYPE_NOT_PUBLISHABLE")
	require.Contains(t, de.Message, "events[2].subject: INVALID_SUBJECT")
	require.Empty(t, m.Events())

	out, err := svc.PublishBatch(context.Background(), owner, publish.BatchInput{Events: good})
	require.NoError(t, err)
	require.Len(t, out.Data, 3)
	require.False(t, out.Replayed())
	evs := m.Events()
	require.Len(t, evs, 3)
	for i := range evs {
		require.Equal(t, out.Data[i].ID, evs[i].ID, "ids in input order")
	}
}

func TestPublishBatchFailingInsideTheTransactionRecordsNothing(t *testing.T) {
	t.Parallel()
	m := publishtest.NewMemory()
	n := 0
	m.Recorder().Fail(func(string) error {
		if n++; n == 3 {
			return fmt.Errorf("insert event: connection lost")
		}
		return nil
	})
	svc := publish.NewService(m, nil)
	evs := []publish.Input{booking("b_1"), booking("b_2"), booking("b_3"), booking("b_4")}
	_, err := svc.PublishBatch(context.Background(), op.Caller{OwnerID: uuid.New()}, publish.BatchInput{Events: evs})
	require.Error(t, err)
	require.Equal(t, 3, n, "the batch stops at the failed Record")
	require.Empty(t, m.Events())
}

func TestPublishBatchLimitsAndKeys(t *testing.T) {
	t.Parallel()
	svc, m, l := newService(1000)
	owner := op.Caller{OwnerID: uuid.New()}
	_, err := svc.PublishBatch(context.Background(), owner, publish.BatchInput{})
	requireCode(t, err, domain.KindValidation, publish.CodeEmptyBatch)
	many := make([]publish.Input, publish.MaxBatch+1)
	for i := range many {
		many[i] = booking(fmt.Sprintf("b_%d", i))
	}
	_, err = svc.PublishBatch(context.Background(), owner, publish.BatchInput{Events: many})
	requireCode(t, err, domain.KindTooLarge, publish.CodeBatchTooLarge)
	out, err := svc.PublishBatch(context.Background(), owner, publish.BatchInput{Events: many[:publish.MaxBatch]})
	require.NoError(t, err)
	require.Len(t, out.Data, publish.MaxBatch)

	// Keys repeated inside a batch and across batches return the first;
	// one reused for another request refuses the whole batch.
	a, b := booking("k_1"), booking("k_2")
	a.IdempotencyKey, b.IdempotencyKey = "same", "same"
	_, err = svc.PublishBatch(context.Background(), owner, publish.BatchInput{Events: []publish.Input{booking("k_0"), a, b}})
	de := requireCode(t, err, domain.KindConflict, publish.CodeKeyReused)
	require.Equal(t, "events[2].idempotency_key", de.Field)
	require.Len(t, m.Events(), publish.MaxBatch, "nothing of the refused batch is recorded")
	out, err = svc.PublishBatch(context.Background(), owner, publish.BatchInput{Events: []publish.Input{a, a}})
	require.NoError(t, err)
	require.False(t, out.Data[0].Duplicate)
	require.Equal(t, publish.Output{ID: out.Data[0].ID, Duplicate: true}, out.Data[1])
	again, err := svc.PublishBatch(context.Background(), owner, publish.BatchInput{Events: []publish.Input{a}})
	require.NoError(t, err)
	require.True(t, again.Replayed(), "every item a replay")
	_, err = svc.PublishBatch(context.Background(), owner, publish.BatchInput{Events: []publish.Input{b}})
	de = requireCode(t, err, domain.KindConflict, publish.CodeKeyReused)
	require.Equal(t, "events[0].idempotency_key", de.Field)
	require.Contains(t, de.Message, out.Data[0].ID.String())
	require.Len(t, m.Events(), publish.MaxBatch+1)

	// A batch counts all its events against the rate at once.
	tight, _, _ := newService(2)
	_, err = tight.PublishBatch(context.Background(), owner, publish.BatchInput{Events: many[:3]})
	requireCode(t, err, domain.KindRateLimited, publish.CodeRateLimited)
	require.NotEmpty(t, l.keys)
}
