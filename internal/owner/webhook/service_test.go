package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// memStore is an in-memory UnitOfWork for the service's unit tests (the
// PostgreSQL adapter has its own tests against a real database).
type memStore struct {
	mu        sync.Mutex
	endpoints map[uuid.UUID]Endpoint
	recorded  []recordedEvent
	queued    []queuedDelivery
	nextJob   int64
	// DeliveriesFunc and RedeliverFunc answer the delivery log calls.
	DeliveriesFunc func(endpointID uuid.UUID, q DeliveryQuery) ([]Delivery, error)
	RedeliverFunc  func(endpointID uuid.UUID) (map[string]int, error)
	// RetryFunc and RecoverFunc answer Retry and Recover.
	RetryFunc   func(endpointID uuid.UUID, jobID int64, states []string) (string, string, error)
	RecoverFunc func(ownerID, endpointID uuid.UUID, types []string, since, until time.Time, max int) (int, int, error)
	// EventDeliveriesFunc answers ListByEvent.
	EventDeliveriesFunc func(ownerID, eventID uuid.UUID, limit int) ([]EventDelivery, error)
}

type recordedEvent struct {
	OwnerID uuid.UUID
	Type    string
	Subject string
	Data    any
}

type queuedDelivery struct{ EndpointID, EventID uuid.UUID }

func newMemStore() *memStore { return &memStore{endpoints: map[uuid.UUID]Endpoint{}} }

// Do runs fn on a copy of the state and keeps it only if fn succeeds, as a
// transaction would.
func (m *memStore) Do(_ context.Context, fn func(tx Tx) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	tx := &memTx{m: m, endpoints: map[uuid.UUID]Endpoint{}}
	for k, v := range m.endpoints {
		tx.endpoints[k] = v
	}
	if err := fn(tx); err != nil {
		return err
	}
	m.endpoints = tx.endpoints
	m.recorded = append(m.recorded, tx.recorded...)
	m.queued = append(m.queued, tx.queued...)
	return nil
}

type memTx struct {
	m         *memStore
	endpoints map[uuid.UUID]Endpoint
	recorded  []recordedEvent
	queued    []queuedDelivery
}

func (t *memTx) Endpoints() EndpointStore  { return memEndpoints{t} }
func (t *memTx) Deliveries() DeliveryStore { return memDeliveries{t} }
func (t *memTx) Recorder() domain.Recorder {
	return domain.RecorderFunc(func(_ context.Context, owner uuid.UUID, typ, subject string, data any) (uuid.UUID, error) {
		t.recorded = append(t.recorded, recordedEvent{owner, typ, subject, data})
		return uuid.New(), nil
	})
}

type memEndpoints struct{ t *memTx }

func (s memEndpoints) List(_ context.Context, owner uuid.UUID, q EndpointQuery) ([]Endpoint, error) {
	less := func(a, b Endpoint) bool {
		if q.Sort == SortURL && a.URL != b.URL {
			return a.URL < b.URL
		}
		return bytes.Compare(a.ID[:], b.ID[:]) < 0
	}
	var out []Endpoint
	for _, e := range s.t.endpoints {
		switch {
		case e.OwnerID != owner:
		case q.State == "" && e.DeletedAt != nil, q.State != "" && e.State() != q.State:
		case q.EventType != "" && !domain.MatchAnyGlob(e.EventTypes, q.EventType):
		case q.URLContains != "" && !strings.Contains(strings.ToLower(e.URL), strings.ToLower(q.URLContains)):
		case q.After != nil && !(q.Desc && less(e, Endpoint{URL: q.After.URL, ID: q.After.ID}) ||
			!q.Desc && less(Endpoint{URL: q.After.URL, ID: q.After.ID}, e)):
		default:
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) != q.Desc })
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

func (s memEndpoints) Get(_ context.Context, owner, id uuid.UUID, _ bool) (Endpoint, error) {
	e, ok := s.t.endpoints[id]
	if !ok || e.OwnerID != owner {
		return Endpoint{}, domain.ErrNotFound
	}
	return e, nil
}

func (s memEndpoints) Count(_ context.Context, owner uuid.UUID) (int, error) {
	n := 0
	for _, e := range s.t.endpoints {
		if e.OwnerID == owner && e.DeletedAt == nil {
			n++
		}
	}
	return n, nil
}

func (s memEndpoints) Insert(_ context.Context, e Endpoint) error {
	s.t.endpoints[e.ID] = e
	return nil
}

func (s memEndpoints) Update(ctx context.Context, e Endpoint) error {
	if _, err := s.Get(ctx, e.OwnerID, e.ID, false); err != nil {
		return err
	}
	s.t.endpoints[e.ID] = e
	return nil
}

func (s memEndpoints) Delete(ctx context.Context, owner, id uuid.UUID, at time.Time) error {
	e, err := s.Get(ctx, owner, id, false)
	if err != nil {
		return err
	}
	if e.DeletedAt != nil {
		return domain.ErrNotFound
	}
	r := "deleted"
	e.DeletedAt, e.Enabled, e.DisabledReason = &at, false, &r
	s.t.endpoints[id] = e
	return nil
}

type memDeliveries struct{ t *memTx }

func (d memDeliveries) Enqueue(_ context.Context, endpointID, eventID uuid.UUID) (int64, error) {
	d.t.queued = append(d.t.queued, queuedDelivery{endpointID, eventID})
	d.t.m.nextJob++
	return d.t.m.nextJob, nil
}

func (d memDeliveries) List(_ context.Context, endpointID uuid.UUID, q DeliveryQuery) ([]Delivery, error) {
	if d.t.m.DeliveriesFunc == nil {
		return nil, nil
	}
	return d.t.m.DeliveriesFunc(endpointID, q)
}

func (d memDeliveries) Get(context.Context, uuid.UUID, int64) (Delivery, []Attempt, *LoggedEvent, error) {
	return Delivery{}, nil, nil, domain.NotFound(CodeDeliveryNotFound, "delivery not found")
}

func (d memDeliveries) Retry(_ context.Context, endpointID uuid.UUID, jobID int64, states []string) (string, string, error) {
	if d.t.m.RetryFunc == nil {
		return "", "", domain.NotFound(CodeDeliveryNotFound, "delivery not found")
	}
	return d.t.m.RetryFunc(endpointID, jobID, states)
}

func (d memDeliveries) Recover(_ context.Context, ownerID, endpointID uuid.UUID, types []string, since, until time.Time, max int) (int, int, error) {
	if d.t.m.RecoverFunc == nil {
		return 0, 0, nil
	}
	return d.t.m.RecoverFunc(ownerID, endpointID, types, since, until, max)
}

func (d memDeliveries) ListByEvent(_ context.Context, ownerID, eventID uuid.UUID, limit int) ([]EventDelivery, error) {
	if d.t.m.EventDeliveriesFunc == nil {
		return nil, domain.ErrNotFound
	}
	return d.t.m.EventDeliveriesFunc(ownerID, eventID, limit)
}

func (d memDeliveries) Redeliver(_ context.Context, endpointID uuid.UUID) (map[string]int, error) {
	if d.t.m.RedeliverFunc == nil {
		return nil, nil
	}
	return d.t.m.RedeliverFunc(endpointID)
}

// sealing is a fake cryptobox: it "seals" by prefixing the associated data,
// so a test can see which row a secret was sealed for.
func seal(plain, ad []byte) ([]byte, error) { return append(append([]byte{}, ad...), plain...), nil }

func unsealFor(t *testing.T, sealed []byte, id uuid.UUID) string {
	t.Helper()
	require.True(t, bytes.HasPrefix(sealed, id[:]), "sealed with the endpoint id as associated data")
	return string(sealed[len(id):])
}

// headerOf opens a stored header value (sealed with the endpoint id).
func headerOf(t *testing.T, e Endpoint, name string) string {
	t.Helper()
	v, ok := e.Headers[name]
	require.True(t, ok, "no header %s", name)
	sealed, ok := domain.OpenSealedText(v)
	require.True(t, ok, "header %s is stored sealed: %q", name, v)
	return unsealFor(t, sealed, e.ID)
}

type svcBundle struct {
	svc   *Service
	store *memStore
	owner uuid.UUID
	embed uuid.UUID
	now   time.Time
}

func setupService(t *testing.T) *svcBundle {
	t.Helper()
	b := &svcBundle{store: newMemStore(), owner: uuid.New(), embed: uuid.New(), now: time.Date(2026, 9, 27, 12, 0, 0, 0, time.UTC)}
	b.svc = NewService(Deps{
		UnitOfWork: b.store,
		Seal:       seal,
		EmbedBelongsTo: func(_ context.Context, owner, embed uuid.UUID) (bool, error) {
			return owner == b.owner && embed == b.embed, nil
		},
		Clock:        domain.ClockFunc(func() time.Time { return b.now }),
		MaxEndpoints: 3,
	})
	return b
}

func decode[T any](t *testing.T, body string) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	return v
}

func TestCreateShowsTheSecretOnceAndSealsItForItsRow(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	in := decode[CreateInput](t, `{"url":"https://r.example/h","event_types":["code.*"],"headers":{"X-Tenant":"t1"},"description":"orders"}`)
	out, err := b.svc.Create(context.Background(), b.owner, in)
	require.NoError(t, err)
	_, err = standardwebhooks.ParseSecret(out.Secret)
	require.NoError(t, err, "whsec_ + base64 of 32 bytes")
	require.True(t, out.Enabled)
	require.Equal(t, 1, out.MaxInFlight)
	require.Equal(t, map[string]string{"X-Tenant": HeaderMask}, out.Headers, "header values are never shown")

	stored := b.store.endpoints[out.ID]
	require.Equal(t, out.Secret, unsealFor(t, stored.SecretSealed, out.ID))
	require.Equal(t, "t1", headerOf(t, stored, "X-Tenant"), "header values are sealed for their endpoint")
	view, err := b.svc.Get(context.Background(), b.owner, out.ID)
	require.NoError(t, err)
	body, err := json.Marshal(view)
	require.NoError(t, err)
	require.NotContains(t, string(body), "whsec_", "the secret is never shown again")
	require.NotContains(t, string(body), "secret")

	_, err = b.svc.Get(context.Background(), uuid.New(), out.ID)
	require.ErrorIs(t, err, domain.ErrNotFound, "another owner's endpoint is not found")
}

func TestCreateValidatesWithClearCodes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body string
		code string
	}{
		{`{"url":"ftp://x","event_types":["*"]}`, CodeInvalidURL},
		{`{"url":"https://u:p@x.example","event_types":["*"]}`, CodeInvalidURL},
		{`{"url":"https://x.example","event_types":[]}`, CodeInvalidEventTypes},
		{`{"url":"https://x.example","event_types":["nope.*"]}`, CodeInvalidEventTypes},
		{`{"url":"https://x.example","event_types":["*"],"headers":{"X":1}}`, CodeInvalidHeaders},
		{`{"url":"https://x.example","event_types":["*"],"headers":["X"]}`, CodeInvalidHeaders},
		{`{"url":"https://x.example","event_types":["*"],"headers":{"webhook-id":"x"}}`, CodeInvalidHeaders},
		{`{"url":"https://x.example","event_types":["*"],"max_in_flight":9}`, CodeInvalidMaxInFlight},
		{`{"url":"https://x.example","event_types":["*"],"timeout_seconds":0}`, CodeInvalidTimeout},
		{`{"url":"https://x.example","event_types":["*"],"timeout_seconds":11}`, CodeInvalidTimeout},
		{`{"url":"https://x.example","event_types":["*"],"max_attempts":0}`, CodeInvalidMaxAttempts},
		{`{"url":"https://x.example","event_types":["*"],"max_attempts":19}`, CodeInvalidMaxAttempts},
		{`{"url":"https://x.example","event_types":["*"],"embed_id":"` + uuid.NewString() + `"}`, CodeUnknownEmbed},
	}
	for _, c := range cases {
		b := setupService(t)
		_, err := b.svc.Create(context.Background(), b.owner, decode[CreateInput](t, c.body))
		requireCode(t, err, c.code)
		require.Empty(t, b.store.endpoints, c.body)
	}
	var in CreateInput
	require.Error(t, json.Unmarshal([]byte(`{"url":"https://x.example","event_types":["*"],"secret":"mine"}`), &in),
		"unknown fields are refused: the instance makes the secret")
}

func TestCreateStopsAtTheSoftLimit(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	in := CreateInput{URL: "https://x.example", EventTypes: []string{"*"}}
	for range 3 {
		_, err := b.svc.Create(context.Background(), b.owner, in)
		require.NoError(t, err)
	}
	_, err := b.svc.Create(context.Background(), b.owner, in)
	de := domain.AsError(err)
	require.NotNil(t, de)
	require.Equal(t, CodeEndpointLimit, de.Code)
	require.Equal(t, domain.KindConflict, de.Kind)
	_, err = b.svc.Create(context.Background(), uuid.New(), in)
	require.NoError(t, err, "the limit is per owner")
}

func TestUpdateChangesOnlyWhatIsGiven(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	created, err := b.svc.Create(context.Background(), b.owner, decode[CreateInput](t,
		`{"url":"https://x.example","event_types":["code.*"],"headers":{"X-A":"1"},"embed_id":"`+b.embed.String()+`"}`))
	require.NoError(t, err)
	update := func(body string) View {
		t.Helper()
		in := decode[UpdateInput](t, body)
		in.ID = created.ID
		v, err := b.svc.Update(context.Background(), b.owner, in)
		require.NoError(t, err)
		return v
	}

	v := update(`{"description":"renamed"}`)
	require.Equal(t, "renamed", v.Description)
	require.Equal(t, []string{"code.*"}, v.EventTypes)
	require.Equal(t, map[string]string{"X-A": HeaderMask}, v.Headers)
	require.Equal(t, "1", headerOf(t, b.store.endpoints[created.ID], "X-A"))
	require.Equal(t, &b.embed, v.EmbedID)

	// The mask sent back keeps a value; a new value replaces it.
	v = update(`{"headers":{"x-a":"` + HeaderMask + `","X-B":"2"}}`)
	require.Equal(t, map[string]string{"x-a": HeaderMask, "X-B": HeaderMask}, v.Headers)
	require.Equal(t, "1", headerOf(t, b.store.endpoints[created.ID], "x-a"))
	require.Equal(t, "2", headerOf(t, b.store.endpoints[created.ID], "X-B"))
	update(`{"headers":{"X-A":"3"}}`)
	require.Equal(t, "3", headerOf(t, b.store.endpoints[created.ID], "X-A"))

	v = update(`{"headers":{},"embed_id":null}`)
	require.Empty(t, v.Headers, "{} removes the headers")
	require.Nil(t, v.EmbedID, "null detaches the embed")

	v = update(`{"enabled":false}`)
	require.False(t, v.Enabled)
	require.Equal(t, ReasonDisabledByOwner, *v.DisabledReason)

	// A failing, auto-disabled endpoint: enabled:true clears the failure.
	e := b.store.endpoints[created.ID]
	since, reason := b.now.Add(-6*24*time.Hour), "deliveries failed continuously"
	e.FailingSince, e.DisabledReason = &since, &reason
	b.store.endpoints[created.ID] = e
	v = update(`{"enabled":true}`)
	require.True(t, v.Enabled)
	require.Nil(t, v.DisabledReason)
	require.Nil(t, v.FailingSince)

	in := decode[UpdateInput](t, `{"event_types":[]}`)
	in.ID = created.ID
	_, err = b.svc.Update(context.Background(), b.owner, in)
	requireCode(t, err, CodeInvalidEventTypes)
	in = decode[UpdateInput](t, `{"description":"x"}`)
	in.ID = created.ID
	_, err = b.svc.Update(context.Background(), uuid.New(), in)
	require.ErrorIs(t, err, domain.ErrNotFound)
}

func TestRotateKeepsThePreviousSecretForADay(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	created, err := b.svc.Create(context.Background(), b.owner, CreateInput{URL: "https://x.example", EventTypes: []string{"*"}})
	require.NoError(t, err)
	rotated, err := b.svc.RotateSecret(context.Background(), b.owner, created.ID)
	require.NoError(t, err)
	require.NotEqual(t, created.Secret, rotated.Secret)
	e := b.store.endpoints[created.ID]
	require.Equal(t, rotated.Secret, unsealFor(t, e.SecretSealed, e.ID))
	require.Equal(t, created.Secret, unsealFor(t, e.PrevSecretSealed, e.ID))
	require.Equal(t, b.now.Add(SecretGrace), *e.PrevSecretUntil)
	require.Nil(t, created.RotationGraceUntil, "a new endpoint has no previous secret")
	require.Equal(t, b.now.Add(SecretGrace), *rotated.RotationGraceUntil, "the rotation says when the old secret stops")
	got, err := b.svc.Get(context.Background(), b.owner, created.ID)
	require.NoError(t, err)
	require.Equal(t, b.now.Add(SecretGrace), *got.RotationGraceUntil, "the endpoint shows the grace")
	_, err = b.svc.RotateSecret(context.Background(), uuid.New(), created.ID)
	require.ErrorIs(t, err, domain.ErrNotFound)
}

func TestSendTestRecordsAndQueuesInOneUnitOfWork(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	created, err := b.svc.Create(context.Background(), b.owner, CreateInput{URL: "https://x.example", EventTypes: []string{"code.*"}})
	require.NoError(t, err)
	out, err := b.svc.SendTest(context.Background(), b.owner, created.ID)
	require.NoError(t, err)
	require.NotZero(t, out.JobID)
	require.Len(t, b.store.recorded, 1)
	ev := b.store.recorded[0]
	require.Equal(t, domain.EventWebhookTest, ev.Type)
	require.Equal(t, testEventData{EndpointID: created.ID, Test: true}, ev.Data)
	require.Equal(t, []queuedDelivery{{created.ID, out.EventID}}, b.store.queued)

	disabled := false
	_, err = b.svc.Update(context.Background(), b.owner, UpdateInput{ID: created.ID, Enabled: &disabled})
	require.NoError(t, err)
	_, err = b.svc.SendTest(context.Background(), b.owner, created.ID)
	require.Equal(t, CodeEndpointDisabled, domain.AsError(err).Code)
	_, err = b.svc.Redeliver(context.Background(), b.owner, created.ID)
	require.Equal(t, CodeEndpointDisabled, domain.AsError(err).Code)
	require.Len(t, b.store.recorded, 1, "nothing recorded for a refused test")
}

func TestDeliveriesPageAndLinkToTheJob(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	created, err := b.svc.Create(context.Background(), b.owner, CreateInput{URL: "https://x.example", EventTypes: []string{"*"}})
	require.NoError(t, err)
	b.store.DeliveriesFunc = func(_ uuid.UUID, q DeliveryQuery) ([]Delivery, error) {
		var out []Delivery
		if q.After > 0 {
			for id := q.After + 1; id <= 10 && len(out) < q.Limit; id++ {
				out = append(out, Delivery{JobID: id, State: "completed"})
			}
			return out, nil
		}
		for id := int64(10); id > 0 && len(out) < q.Limit; id-- {
			if q.Before == 0 || id < q.Before {
				out = append(out, Delivery{JobID: id, State: "completed"})
			}
		}
		return out, nil
	}
	page, err := b.svc.Deliveries(context.Background(), b.owner, DeliveriesInput{ID: created.ID, PageInput: op.PageInput{Limit: 4}})
	require.NoError(t, err)
	require.Len(t, page.Data, 4)
	require.Equal(t, "/admin/tasks?job=10", page.Data[0].TaskURL)
	require.Equal(t, "7", *page.NextCursor)
	require.Nil(t, page.PrevCursor, "the newest page has no newer page")
	require.Equal(t, StatusDelivered, page.Data[0].Status)
	page, err = b.svc.Deliveries(context.Background(), b.owner, DeliveriesInput{ID: created.ID, PageInput: op.PageInput{Limit: 4, Cursor: *page.NextCursor}})
	require.NoError(t, err)
	require.Equal(t, int64(6), page.Data[0].JobID)
	require.Equal(t, "6", *page.PrevCursor)
	// Back up: the page newer than job 6 is 10…7 again, newest first.
	page, err = b.svc.Deliveries(context.Background(), b.owner, DeliveriesInput{ID: created.ID, PageInput: op.PageInput{Limit: 4}, Before: *page.PrevCursor})
	require.NoError(t, err)
	require.Equal(t, []int64{10, 9, 8, 7}, []int64{page.Data[0].JobID, page.Data[1].JobID, page.Data[2].JobID, page.Data[3].JobID})
	require.Nil(t, page.PrevCursor)
	require.Equal(t, "7", *page.NextCursor)
	for _, bad := range []struct {
		in   DeliveriesInput
		code string
	}{
		{DeliveriesInput{State: "bogus"}, CodeInvalidState},
		{DeliveriesInput{State: "completed"}, CodeInvalidState},
		{DeliveriesInput{EventType: "no.such"}, CodeInvalidEventType},
		{DeliveriesInput{Since: "yesterday"}, CodeInvalidTime},
		{DeliveriesInput{Since: "2026-01-02T00:00:00Z", Until: "2026-01-01T00:00:00Z"}, CodeInvalidTime},
		{DeliveriesInput{Before: "0"}, "INVALID_CURSOR"},
		{DeliveriesInput{Before: "5", PageInput: op.PageInput{Cursor: "6"}}, "INVALID_CURSOR"},
	} {
		bad.in.ID = created.ID
		_, err = b.svc.Deliveries(context.Background(), b.owner, bad.in)
		requireCode(t, err, bad.code)
	}
	_, err = b.svc.Deliveries(context.Background(), b.owner, DeliveriesInput{ID: created.ID, PageInput: op.PageInput{Cursor: "x"}})
	requireCode(t, err, "INVALID_CURSOR")
	_, err = b.svc.Deliveries(context.Background(), uuid.New(), DeliveriesInput{ID: created.ID})
	require.ErrorIs(t, err, domain.ErrNotFound)
}

func TestOpsAreTheContracts(t *testing.T) {
	t.Parallel()
	want := []string{
		"webhooks.list",
		"webhooks.get",
		"webhooks.create",
		"webhooks.update",
		"webhooks.delete",
		"webhooks.rotate_secret",
		"webhooks.send_test",
		"webhooks.deliveries",
		"webhooks.redeliver",
		"webhooks.delivery",
		"webhooks.retry_delivery",
		"webhooks.resend_delivery",
		"webhooks.recover",
		"webhooks.event_types",
		"webhooks.event_deliveries",
		"webhooks.event_fanout",
	}
	ops := setupService(t).svc.Ops()
	var got []string
	for _, d := range ops {
		m := d.Meta()
		got = append(got, m.Name)
		require.NotEmpty(t, m.Summary)
	}
	require.ElementsMatch(t, want, got)
	types := setupService(t).svc.EventTypes()
	require.Len(t, types.Data, len(domain.WebhookEventTypes()))
}

func TestEventTypesDocumentProducerSchemaAndExample(t *testing.T) {
	t.Parallel()
	types := setupService(t).svc.EventTypes()
	publishable := 0
	for _, v := range types.Data {
		require.NotEmpty(t, v.Producer.Kind, v.Name)
		require.Equal(t, v.Producer.Kind == domain.ProducedExternally, v.Publishable, v.Name)
		if v.Publishable {
			publishable++
		}
		var body struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		require.NoError(t, json.Unmarshal(v.Example, &body), v.Name)
		require.Equal(t, v.Name, body.Type)
		require.NoError(t, domain.ValidateJSON(string(v.DataSchema), body.Data), v.Name)
	}
	require.Equal(t, 18, publishable)
	raw, err := json.Marshal(types.Data[0])
	require.NoError(t, err)
	require.Contains(t, string(raw), `"data_schema":{"`, "the schema is an object, not a string")
}

func TestStoreErrorsKeepTheirKind(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	boom := errors.New("database down")
	b.store.RedeliverFunc = func(uuid.UUID) (map[string]int, error) { return nil, boom }
	created, err := b.svc.Create(context.Background(), b.owner, CreateInput{URL: "https://x.example", EventTypes: []string{"*"}})
	require.NoError(t, err)
	_, err = b.svc.Redeliver(context.Background(), b.owner, created.ID)
	require.ErrorIs(t, err, boom)
	require.Nil(t, domain.AsError(err), "an infrastructure error is no domain error (500)")
}

func TestSettingsDefaultToTheCapsAndChangeThroughUpdate(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	ctx := context.Background()
	created, err := b.svc.Create(ctx, b.owner, CreateInput{URL: "https://x.example", EventTypes: []string{"*"}})
	require.NoError(t, err)
	require.Equal(t, MaxTimeoutSeconds, created.TimeoutSeconds)
	require.Equal(t, MaxAttemptsCap, created.MaxAttempts)
	require.Equal(t, 1, created.MaxInFlight)
	require.Equal(t, StateEnabled, created.State)

	in := decode[UpdateInput](t, `{"timeout_seconds":3,"max_attempts":5,"max_in_flight":4}`)
	in.ID = created.ID
	v, err := b.svc.Update(ctx, b.owner, in)
	require.NoError(t, err)
	require.Equal(t, 3, v.TimeoutSeconds)
	require.Equal(t, 5, v.MaxAttempts)
	require.Equal(t, 4, v.MaxInFlight)
	e := b.store.endpoints[created.ID]
	require.Equal(t, 3*time.Second, e.Timeout(), "the worker reads Timeout()")
	require.Equal(t, 5, e.Attempts(), "the worker reads Attempts()")

	for body, code := range map[string]string{
		`{"timeout_seconds":0}`:  CodeInvalidTimeout,
		`{"timeout_seconds":60}`: CodeInvalidTimeout,
		`{"max_attempts":-1}`:    CodeInvalidMaxAttempts,
		`{"max_attempts":100}`:   CodeInvalidMaxAttempts,
	} {
		in := decode[UpdateInput](t, body)
		in.ID = created.ID
		_, err := b.svc.Update(ctx, b.owner, in)
		requireCode(t, err, code)
	}
	require.Equal(t, e, b.store.endpoints[created.ID], "a refused update changes nothing")
}

func TestDeleteIsSoftAndFreezesTheEndpoint(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	ctx := context.Background()
	var ids []uuid.UUID
	for range 3 {
		created, err := b.svc.Create(ctx, b.owner, CreateInput{URL: "https://x.example", EventTypes: []string{"*"}})
		require.NoError(t, err)
		ids = append(ids, created.ID)
	}
	require.NoError(t, b.svc.Delete(ctx, b.owner, ids[0]))
	v, err := b.svc.Get(ctx, b.owner, ids[0])
	require.NoError(t, err, "a deleted endpoint stays readable")
	require.Equal(t, StateDeleted, v.State)
	require.False(t, v.Enabled, "deleted implies disabled: the fan-out reads only enabled endpoints")
	require.Equal(t, b.now, *v.DeletedAt)

	in := decode[UpdateInput](t, `{"enabled":true}`)
	in.ID = ids[0]
	_, err = b.svc.Update(ctx, b.owner, in)
	requireConflict(t, err, CodeEndpointDeleted)
	_, err = b.svc.RotateSecret(ctx, b.owner, ids[0])
	requireConflict(t, err, CodeEndpointDeleted)
	_, err = b.svc.SendTest(ctx, b.owner, ids[0])
	requireConflict(t, err, CodeEndpointDeleted)
	_, err = b.svc.Redeliver(ctx, b.owner, ids[0])
	requireConflict(t, err, CodeEndpointDeleted)
	require.ErrorIs(t, b.svc.Delete(ctx, b.owner, ids[0]), domain.ErrNotFound, "deleting twice")
	_, err = b.svc.Deliveries(ctx, b.owner, DeliveriesInput{ID: ids[0]})
	require.NoError(t, err, "its delivery log stays readable")

	_, err = b.svc.Create(ctx, b.owner, CreateInput{URL: "https://x.example", EventTypes: []string{"*"}})
	require.NoError(t, err, "a deleted endpoint does not count against the limit")

	p, err := b.svc.List(ctx, b.owner, ListInput{})
	require.NoError(t, err)
	require.Len(t, p.Data, 3, "the default list leaves deleted endpoints out")
	p, err = b.svc.List(ctx, b.owner, ListInput{State: StateDeleted})
	require.NoError(t, err)
	require.Len(t, p.Data, 1)
	require.Equal(t, ids[0], p.Data[0].ID)
}

type fakeHealth map[uuid.UUID]Health

func (f fakeHealth) Health(_ context.Context, ids []uuid.UUID, _ time.Time) (map[uuid.UUID]Health, error) {
	out := map[uuid.UUID]Health{}
	for _, id := range ids {
		if h, ok := f[id]; ok {
			out[id] = h
		}
	}
	return out, nil
}

func TestListFiltersSortsPagesAndShowsHealth(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	b.svc.maxEndpoints = 10
	ctx := context.Background()
	mk := func(url string, types ...string) View {
		created, err := b.svc.Create(ctx, b.owner, CreateInput{URL: url, EventTypes: types})
		require.NoError(t, err)
		return created.View
	}
	c := mk("https://c.example/hook", "booking.*")
	a := mk("https://A.example/hook", "webhook.test")
	bb := mk("https://b.example/other", "*")
	_ = mk("https://other-owner.example", "*") // moved to another owner below
	for id, e := range b.store.endpoints {
		if e.URL == "https://other-owner.example" {
			e.OwnerID = uuid.New()
			b.store.endpoints[id] = e
		}
	}
	// b is failing, c disabled.
	e := b.store.endpoints[bb.ID]
	since := b.now.Add(-time.Hour)
	e.FailingSince = &since
	b.store.endpoints[bb.ID] = e
	e = b.store.endpoints[c.ID]
	e.Enabled = false
	b.store.endpoints[c.ID] = e
	rate := 0.5
	b.svc.health = fakeHealth{a.ID: {Attempts24h: 2, Succeeded24h: 1, SuccessRate24h: &rate}}

	ids := func(in ListInput) []uuid.UUID {
		t.Helper()
		p, err := b.svc.List(ctx, b.owner, in)
		require.NoError(t, err)
		var out []uuid.UUID
		for _, v := range p.Data {
			require.NotNil(t, v.Health, "every listed endpoint carries its health")
			out = append(out, v.ID)
		}
		return out
	}
	require.Equal(t, []uuid.UUID{c.ID, a.ID, bb.ID}, ids(ListInput{}))
	require.Equal(t, []uuid.UUID{bb.ID, a.ID, c.ID}, ids(ListInput{Sort: "-created"}))
	require.Equal(t, []uuid.UUID{a.ID, bb.ID, c.ID}, ids(ListInput{Sort: "url"}), "A < b < c: case as stored")
	require.Equal(t, []uuid.UUID{c.ID, bb.ID, a.ID}, ids(ListInput{Sort: "-url"}))
	require.Equal(t, []uuid.UUID{a.ID}, ids(ListInput{State: StateEnabled}))
	require.Equal(t, []uuid.UUID{bb.ID}, ids(ListInput{State: StateFailing}))
	require.Equal(t, []uuid.UUID{c.ID}, ids(ListInput{State: StateDisabled}))
	require.Equal(t, []uuid.UUID{c.ID, bb.ID}, ids(ListInput{EventType: "booking.created"}))
	require.Equal(t, []uuid.UUID{a.ID, bb.ID}, ids(ListInput{EventType: "webhook.test"}))
	require.Equal(t, []uuid.UUID{c.ID, a.ID}, ids(ListInput{URL: "/HOOK"}))

	p, err := b.svc.List(ctx, b.owner, ListInput{Sort: "url", PageInput: op.PageInput{Limit: 2}})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{a.ID, bb.ID}, []uuid.UUID{p.Data[0].ID, p.Data[1].ID})
	require.Equal(t, 0.5, *p.Data[0].Health.SuccessRate24h)
	require.Nil(t, p.Data[1].Health.SuccessRate24h, "no attempts: no rate")
	require.NotNil(t, p.NextCursor)
	require.Equal(t, []uuid.UUID{c.ID}, ids(ListInput{Sort: "url", PageInput: op.PageInput{Limit: 2, Cursor: *p.NextCursor}}))

	for in, code := range map[ListInput]string{
		{State: "paused"}:           CodeInvalidState,
		{EventType: "nope.nothing"}: CodeInvalidEventType,
		{EventType: "booking.*"}:    CodeInvalidEventType,
		{Sort: "health"}:            CodeInvalidSort,
		{Sort: "url", PageInput: op.PageInput{Cursor: "zzz"}}: "INVALID_CURSOR",
		{PageInput: op.PageInput{Cursor: "zzz"}}:              "INVALID_CURSOR",
	} {
		_, err := b.svc.List(ctx, b.owner, in)
		requireCode(t, err, code)
	}
}

func requireConflict(t *testing.T, err error, code string) {
	t.Helper()
	de := domain.AsError(err)
	require.NotNil(t, de, "not a domain error: %v", err)
	require.Equal(t, code, de.Code)
	require.Equal(t, domain.KindConflict, de.Kind)
}

// FuzzEndpointCursor: a cursor this list hands out reads back as the row's
// sort key, and any other text is refused with INVALID_CURSOR or read as a
// well-formed key, never a panic.
func FuzzEndpointCursor(f *testing.F) {
	f.Add("https://a.example/h?x=1", "")
	f.Add("", "~")
	f.Add("é~ü", "AAAA~0190b2c4-1c2d-7000-8000-000000000000")
	f.Fuzz(func(t *testing.T, url, raw string) {
		e := Endpoint{ID: uuid.New(), URL: url}
		for _, sort := range []string{SortCreated, SortURL} {
			c, err := parseEndpointCursor(sort, endpointCursor(sort, e))
			require.NoError(t, err)
			require.Equal(t, e.ID, c.ID)
			if sort == SortURL {
				require.Equal(t, url, c.URL)
			}
			if _, err := parseEndpointCursor(sort, raw); err != nil {
				requireCode(t, err, "INVALID_CURSOR")
			}
		}
	})
}
