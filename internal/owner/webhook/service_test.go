package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/webhook"
	"github.com/standmeet/standmeet/internal/owner/webhook/webhooktest"
)

// sealing is a fake cryptobox: it "seals" by prefixing the associated data,
// so a test can see which row a secret was sealed for.
func seal(plain, ad []byte) ([]byte, error) { return append(append([]byte{}, ad...), plain...), nil }

func unsealFor(t *testing.T, sealed []byte, id uuid.UUID) string {
	t.Helper()
	require.True(t, bytes.HasPrefix(sealed, id[:]), "sealed with the endpoint id as associated data")
	return string(sealed[len(id):])
}

// headerOf opens a stored header value (sealed with the endpoint id).
func headerOf(t *testing.T, e webhook.Endpoint, name string) string {
	t.Helper()
	v, ok := e.Headers[name]
	require.True(t, ok, "no header %s", name)
	sealed, ok := domain.OpenSealedText(v)
	require.True(t, ok, "header %s is stored sealed: %q", name, v)
	return unsealFor(t, sealed, e.ID)
}

// requireCode asserts err is a validation error with code.
func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	require.Error(t, err)
	de := domain.AsError(err)
	require.NotNil(t, de, "not a domain error: %v", err)
	require.Equal(t, code, de.Code, err.Error())
	require.Equal(t, domain.KindValidation, de.Kind)
}

// stored returns the committed endpoint id.
func stored(t *testing.T, m *webhooktest.Memory, id uuid.UUID) webhook.Endpoint {
	t.Helper()
	e, ok := m.Endpoint(id)
	require.True(t, ok, "endpoint %s not stored", id)
	return e
}

type svcBundle struct {
	svc   *webhook.Service
	store *webhooktest.Memory
	owner uuid.UUID
	embed uuid.UUID
	now   time.Time
}

func setupService(t *testing.T) *svcBundle {
	t.Helper()
	b := &svcBundle{store: webhooktest.NewMemory(), owner: uuid.New(), embed: uuid.New(), now: time.Date(2026, 9, 27, 12, 0, 0, 0, time.UTC)}
	b.svc = webhook.NewService(webhook.Deps{
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
	in := decode[webhook.CreateInput](t, `{"url":"https://r.example/h","event_types":["code.*"],"headers":{"X-Tenant":"t1"},"description":"orders"}`)
	out, err := b.svc.Create(context.Background(), b.owner, in)
	require.NoError(t, err)
	_, err = standardwebhooks.ParseSecret(out.Secret)
	require.NoError(t, err, "whsec_ + base64 of 32 bytes")
	require.True(t, out.Enabled)
	require.Equal(t, 1, out.MaxInFlight)
	require.Equal(t, map[string]string{"X-Tenant": webhook.HeaderMask}, out.Headers, "header values are never shown")

	stored := stored(t, b.store, out.ID)
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
		{`{"url":"ftp://x","event_types":["*"]}`, webhook.CodeInvalidURL},
		{`{"url":"https://u:p@x.example","event_types":["*"]}`, webhook.CodeInvalidURL},
		{`{"url":"https://x.example","event_types":[]}`, webhook.CodeInvalidEventTypes},
		{`{"url":"https://x.example","event_types":["nope.*"]}`, webhook.CodeInvalidEventTypes},
		{`{"url":"https://x.example","event_types":["*"],"headers":{"X":1}}`, webhook.CodeInvalidHeaders},
		{`{"url":"https://x.example","event_types":["*"],"headers":["X"]}`, webhook.CodeInvalidHeaders},
		{`{"url":"https://x.example","event_types":["*"],"headers":{"webhook-id":"x"}}`, webhook.CodeInvalidHeaders},
		{`{"url":"https://x.example","event_types":["*"],"max_in_flight":9}`, webhook.CodeInvalidMaxInFlight},
		{`{"url":"https://x.example","event_types":["*"],"timeout_seconds":0}`, webhook.CodeInvalidTimeout},
		{`{"url":"https://x.example","event_types":["*"],"timeout_seconds":11}`, webhook.CodeInvalidTimeout},
		{`{"url":"https://x.example","event_types":["*"],"max_attempts":0}`, webhook.CodeInvalidMaxAttempts},
		{`{"url":"https://x.example","event_types":["*"],"max_attempts":19}`, webhook.CodeInvalidMaxAttempts},
		{`{"url":"https://x.example","event_types":["*"],"embed_id":"` + uuid.NewString() + `"}`, webhook.CodeUnknownEmbed},
	}
	for _, c := range cases {
		b := setupService(t)
		_, err := b.svc.Create(context.Background(), b.owner, decode[webhook.CreateInput](t, c.body))
		requireCode(t, err, c.code)
		require.Empty(t, b.store.Endpoints(), c.body)
	}
	var in webhook.CreateInput
	require.Error(t, json.Unmarshal([]byte(`{"url":"https://x.example","event_types":["*"],"secret":"mine"}`), &in),
		"unknown fields are refused: the instance makes the secret")
}

func TestCreateStopsAtTheSoftLimit(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	in := webhook.CreateInput{URL: "https://x.example", EventTypes: []string{"*"}}
	for range 3 {
		_, err := b.svc.Create(context.Background(), b.owner, in)
		require.NoError(t, err)
	}
	_, err := b.svc.Create(context.Background(), b.owner, in)
	de := domain.AsError(err)
	require.NotNil(t, de)
	require.Equal(t, webhook.CodeEndpointLimit, de.Code)
	require.Equal(t, domain.KindConflict, de.Kind)
	_, err = b.svc.Create(context.Background(), uuid.New(), in)
	require.NoError(t, err, "the limit is per owner")
}

func TestUpdateChangesOnlyWhatIsGiven(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	created, err := b.svc.Create(context.Background(), b.owner, decode[webhook.CreateInput](t,
		`{"url":"https://x.example","event_types":["code.*"],"headers":{"X-A":"1"},"embed_id":"`+b.embed.String()+`"}`))
	require.NoError(t, err)
	update := func(body string) webhook.View {
		t.Helper()
		in := decode[webhook.UpdateInput](t, body)
		in.ID = created.ID
		v, err := b.svc.Update(context.Background(), b.owner, in)
		require.NoError(t, err)
		return v
	}

	v := update(`{"description":"renamed"}`)
	require.Equal(t, "renamed", v.Description)
	require.Equal(t, []string{"code.*"}, v.EventTypes)
	require.Equal(t, map[string]string{"X-A": webhook.HeaderMask}, v.Headers)
	require.Equal(t, "1", headerOf(t, stored(t, b.store, created.ID), "X-A"))
	require.Equal(t, &b.embed, v.EmbedID)

	// The mask sent back keeps a value; a new value replaces it.
	v = update(`{"headers":{"x-a":"` + webhook.HeaderMask + `","X-B":"2"}}`)
	require.Equal(t, map[string]string{"x-a": webhook.HeaderMask, "X-B": webhook.HeaderMask}, v.Headers)
	require.Equal(t, "1", headerOf(t, stored(t, b.store, created.ID), "x-a"))
	require.Equal(t, "2", headerOf(t, stored(t, b.store, created.ID), "X-B"))
	update(`{"headers":{"X-A":"3"}}`)
	require.Equal(t, "3", headerOf(t, stored(t, b.store, created.ID), "X-A"))

	v = update(`{"headers":{},"embed_id":null}`)
	require.Empty(t, v.Headers, "{} removes the headers")
	require.Nil(t, v.EmbedID, "null detaches the embed")

	v = update(`{"enabled":false}`)
	require.False(t, v.Enabled)
	require.Equal(t, webhook.ReasonDisabledByOwner, *v.DisabledReason)

	// A failing, auto-disabled endpoint: enabled:true clears the failure.
	e := stored(t, b.store, created.ID)
	since, reason := b.now.Add(-6*24*time.Hour), "deliveries failed continuously"
	e.FailingSince, e.DisabledReason = &since, &reason
	b.store.PutEndpoint(e)
	v = update(`{"enabled":true}`)
	require.True(t, v.Enabled)
	require.Nil(t, v.DisabledReason)
	require.Nil(t, v.FailingSince)

	in := decode[webhook.UpdateInput](t, `{"event_types":[]}`)
	in.ID = created.ID
	_, err = b.svc.Update(context.Background(), b.owner, in)
	requireCode(t, err, webhook.CodeInvalidEventTypes)
	in = decode[webhook.UpdateInput](t, `{"description":"x"}`)
	in.ID = created.ID
	_, err = b.svc.Update(context.Background(), uuid.New(), in)
	require.ErrorIs(t, err, domain.ErrNotFound)
}

func TestRotateKeepsThePreviousSecretForADay(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	created, err := b.svc.Create(context.Background(), b.owner, webhook.CreateInput{URL: "https://x.example", EventTypes: []string{"*"}})
	require.NoError(t, err)
	rotated, err := b.svc.RotateSecret(context.Background(), b.owner, created.ID, op.ActorOwner)
	require.NoError(t, err)
	require.NotEqual(t, created.Secret, rotated.Secret)
	e := stored(t, b.store, created.ID)
	require.Equal(t, rotated.Secret, unsealFor(t, e.SecretSealed, e.ID))
	require.Equal(t, created.Secret, unsealFor(t, e.PrevSecretSealed, e.ID))
	require.Equal(t, b.now.Add(webhook.SecretGrace), *e.PrevSecretUntil)
	require.Nil(t, created.RotationGraceUntil, "a new endpoint has no previous secret")
	require.Equal(t, b.now.Add(webhook.SecretGrace), *rotated.RotationGraceUntil, "the rotation says when the old secret stops")
	got, err := b.svc.Get(context.Background(), b.owner, created.ID)
	require.NoError(t, err)
	require.Equal(t, b.now.Add(webhook.SecretGrace), *got.RotationGraceUntil, "the endpoint shows the grace")
	_, err = b.svc.RotateSecret(context.Background(), uuid.New(), created.ID, op.ActorOwner)
	require.ErrorIs(t, err, domain.ErrNotFound)
}

func TestSendTestRecordsAndQueuesInOneUnitOfWork(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	created, err := b.svc.Create(context.Background(), b.owner, webhook.CreateInput{URL: "https://x.example", EventTypes: []string{"code.*"}})
	require.NoError(t, err)
	out, err := b.svc.SendTest(context.Background(), b.owner, created.ID)
	require.NoError(t, err)
	require.NotZero(t, out.JobID)
	require.Len(t, b.store.Events(), 1)
	ev := b.store.Events()[0]
	require.Equal(t, domain.EventWebhookTest, ev.Type)
	require.Equal(t, out.EventID, ev.ID)
	require.Equal(t, webhook.TestEventData{EndpointID: created.ID, Test: true}, decode[webhook.TestEventData](t, string(ev.Data)))
	require.Equal(t, []webhooktest.Queued{{EndpointID: created.ID, EventID: out.EventID}}, b.store.Queued())

	disabled := false
	_, err = b.svc.Update(context.Background(), b.owner, webhook.UpdateInput{ID: created.ID, Enabled: &disabled})
	require.NoError(t, err)
	_, err = b.svc.SendTest(context.Background(), b.owner, created.ID)
	require.Equal(t, webhook.CodeEndpointDisabled, domain.AsError(err).Code)
	_, err = b.svc.Redeliver(context.Background(), b.owner, created.ID)
	require.Equal(t, webhook.CodeEndpointDisabled, domain.AsError(err).Code)
	require.Len(t, b.store.Events(), 1, "nothing recorded for a refused test")
}

func TestDeliveriesPageAndLinkToTheJob(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	created, err := b.svc.Create(context.Background(), b.owner, webhook.CreateInput{URL: "https://x.example", EventTypes: []string{"*"}})
	require.NoError(t, err)
	b.store.DeliveriesFunc = func(_ uuid.UUID, q webhook.DeliveryQuery) ([]webhook.Delivery, error) {
		var out []webhook.Delivery
		if q.After > 0 {
			for id := q.After + 1; id <= 10 && len(out) < q.Limit; id++ {
				out = append(out, webhook.Delivery{JobID: id, State: "completed"})
			}
			return out, nil
		}
		for id := int64(10); id > 0 && len(out) < q.Limit; id-- {
			if q.Before == 0 || id < q.Before {
				out = append(out, webhook.Delivery{JobID: id, State: "completed"})
			}
		}
		return out, nil
	}
	page, err := b.svc.Deliveries(context.Background(), b.owner, webhook.DeliveriesInput{ID: created.ID, PageInput: op.PageInput{Limit: 4}})
	require.NoError(t, err)
	require.Len(t, page.Data, 4)
	require.Equal(t, "/admin/tasks?job=10", page.Data[0].TaskURL)
	require.Equal(t, "7", *page.NextCursor)
	require.Nil(t, page.PrevCursor, "the newest page has no newer page")
	require.Equal(t, webhook.StatusDelivered, page.Data[0].Status)
	page, err = b.svc.Deliveries(context.Background(), b.owner, webhook.DeliveriesInput{ID: created.ID, PageInput: op.PageInput{Limit: 4, Cursor: *page.NextCursor}})
	require.NoError(t, err)
	require.Equal(t, int64(6), page.Data[0].JobID)
	require.Equal(t, "6", *page.PrevCursor)
	// Back up: the page newer than job 6 is 10…7 again, newest first.
	page, err = b.svc.Deliveries(context.Background(), b.owner, webhook.DeliveriesInput{ID: created.ID, PageInput: op.PageInput{Limit: 4}, Before: *page.PrevCursor})
	require.NoError(t, err)
	require.Equal(t, []int64{10, 9, 8, 7}, []int64{page.Data[0].JobID, page.Data[1].JobID, page.Data[2].JobID, page.Data[3].JobID})
	require.Nil(t, page.PrevCursor)
	require.Equal(t, "7", *page.NextCursor)
	for _, bad := range []struct {
		in   webhook.DeliveriesInput
		code string
	}{
		{webhook.DeliveriesInput{State: "bogus"}, webhook.CodeInvalidState},
		{webhook.DeliveriesInput{State: "completed"}, webhook.CodeInvalidState},
		{webhook.DeliveriesInput{EventType: "no.such"}, webhook.CodeInvalidEventType},
		{webhook.DeliveriesInput{Since: "yesterday"}, webhook.CodeInvalidTime},
		{webhook.DeliveriesInput{Since: "2026-01-02T00:00:00Z", Until: "2026-01-01T00:00:00Z"}, webhook.CodeInvalidTime},
		{webhook.DeliveriesInput{Before: "0"}, "INVALID_CURSOR"},
		{webhook.DeliveriesInput{Before: "5", PageInput: op.PageInput{Cursor: "6"}}, "INVALID_CURSOR"},
	} {
		bad.in.ID = created.ID
		_, err = b.svc.Deliveries(context.Background(), b.owner, bad.in)
		requireCode(t, err, bad.code)
	}
	_, err = b.svc.Deliveries(context.Background(), b.owner, webhook.DeliveriesInput{ID: created.ID, PageInput: op.PageInput{Cursor: "x"}})
	requireCode(t, err, "INVALID_CURSOR")
	_, err = b.svc.Deliveries(context.Background(), uuid.New(), webhook.DeliveriesInput{ID: created.ID})
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
		"webhooks.event_outcomes",
		"webhooks.stats",
		"webhooks.endpoint_stats",
		"webhooks.attention",
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
	b.store.FailedFunc = func(uuid.UUID) ([]webhook.FailedDelivery, error) { return nil, boom }
	created, err := b.svc.Create(context.Background(), b.owner, webhook.CreateInput{URL: "https://x.example", EventTypes: []string{"*"}})
	require.NoError(t, err)
	_, err = b.svc.Redeliver(context.Background(), b.owner, created.ID)
	require.ErrorIs(t, err, boom)
	require.Nil(t, domain.AsError(err), "an infrastructure error is no domain error (500)")
}

func TestSettingsDefaultToTheCapsAndChangeThroughUpdate(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	ctx := context.Background()
	created, err := b.svc.Create(ctx, b.owner, webhook.CreateInput{URL: "https://x.example", EventTypes: []string{"*"}})
	require.NoError(t, err)
	require.Equal(t, webhook.MaxTimeoutSeconds, created.TimeoutSeconds)
	require.Equal(t, webhook.MaxAttemptsCap, created.MaxAttempts)
	require.Equal(t, 1, created.MaxInFlight)
	require.Equal(t, webhook.StateEnabled, created.State)

	in := decode[webhook.UpdateInput](t, `{"timeout_seconds":3,"max_attempts":5,"max_in_flight":4}`)
	in.ID = created.ID
	v, err := b.svc.Update(ctx, b.owner, in)
	require.NoError(t, err)
	require.Equal(t, 3, v.TimeoutSeconds)
	require.Equal(t, 5, v.MaxAttempts)
	require.Equal(t, 4, v.MaxInFlight)
	e := stored(t, b.store, created.ID)
	require.Equal(t, 3*time.Second, e.Timeout(), "the worker reads Timeout()")
	require.Equal(t, 5, e.Attempts(), "the worker reads Attempts()")

	for body, code := range map[string]string{
		`{"timeout_seconds":0}`:  webhook.CodeInvalidTimeout,
		`{"timeout_seconds":60}`: webhook.CodeInvalidTimeout,
		`{"max_attempts":-1}`:    webhook.CodeInvalidMaxAttempts,
		`{"max_attempts":100}`:   webhook.CodeInvalidMaxAttempts,
	} {
		in := decode[webhook.UpdateInput](t, body)
		in.ID = created.ID
		_, err := b.svc.Update(ctx, b.owner, in)
		requireCode(t, err, code)
	}
	require.Equal(t, e, stored(t, b.store, created.ID), "a refused update changes nothing")
}

func TestDeleteIsSoftAndFreezesTheEndpoint(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	ctx := context.Background()
	var ids []uuid.UUID
	for range 3 {
		created, err := b.svc.Create(ctx, b.owner, webhook.CreateInput{URL: "https://x.example", EventTypes: []string{"*"}})
		require.NoError(t, err)
		ids = append(ids, created.ID)
	}
	require.NoError(t, b.svc.Delete(ctx, b.owner, ids[0]))
	v, err := b.svc.Get(ctx, b.owner, ids[0])
	require.NoError(t, err, "a deleted endpoint stays readable")
	require.Equal(t, webhook.StateDeleted, v.State)
	require.False(t, v.Enabled, "deleted implies disabled: the fan-out reads only enabled endpoints")
	require.Equal(t, b.now, *v.DeletedAt)

	in := decode[webhook.UpdateInput](t, `{"enabled":true}`)
	in.ID = ids[0]
	_, err = b.svc.Update(ctx, b.owner, in)
	requireConflict(t, err, webhook.CodeEndpointDeleted)
	_, err = b.svc.RotateSecret(ctx, b.owner, ids[0], op.ActorOwner)
	requireConflict(t, err, webhook.CodeEndpointDeleted)
	_, err = b.svc.SendTest(ctx, b.owner, ids[0])
	requireConflict(t, err, webhook.CodeEndpointDeleted)
	_, err = b.svc.Redeliver(ctx, b.owner, ids[0])
	requireConflict(t, err, webhook.CodeEndpointDeleted)
	require.ErrorIs(t, b.svc.Delete(ctx, b.owner, ids[0]), domain.ErrNotFound, "deleting twice")
	_, err = b.svc.Deliveries(ctx, b.owner, webhook.DeliveriesInput{ID: ids[0]})
	require.NoError(t, err, "its delivery log stays readable")

	_, err = b.svc.Create(ctx, b.owner, webhook.CreateInput{URL: "https://x.example", EventTypes: []string{"*"}})
	require.NoError(t, err, "a deleted endpoint does not count against the limit")

	p, err := b.svc.List(ctx, b.owner, webhook.ListInput{})
	require.NoError(t, err)
	require.Len(t, p.Data, 3, "the default list leaves deleted endpoints out")
	p, err = b.svc.List(ctx, b.owner, webhook.ListInput{State: webhook.StateDeleted})
	require.NoError(t, err)
	require.Len(t, p.Data, 1)
	require.Equal(t, ids[0], p.Data[0].ID)
}

type fakeHealth map[uuid.UUID]webhook.Health

func (f fakeHealth) Health(_ context.Context, ids []uuid.UUID, _ time.Time) (map[uuid.UUID]webhook.Health, error) {
	out := map[uuid.UUID]webhook.Health{}
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
	b.svc.SetMaxEndpoints(10)
	ctx := context.Background()
	mk := func(url string, types ...string) webhook.View {
		created, err := b.svc.Create(ctx, b.owner, webhook.CreateInput{URL: url, EventTypes: types})
		require.NoError(t, err)
		return created.View
	}
	c := mk("https://c.example/hook", "booking.*")
	a := mk("https://A.example/hook", "webhook.test")
	bb := mk("https://b.example/other", "*")
	_ = mk("https://other-owner.example", "*") // moved to another owner below
	for _, e := range b.store.Endpoints() {
		if e.URL == "https://other-owner.example" {
			e.OwnerID = uuid.New()
			b.store.PutEndpoint(e)
		}
	}
	// b is failing, c disabled.
	e := stored(t, b.store, bb.ID)
	since := b.now.Add(-time.Hour)
	e.FailingSince = &since
	b.store.PutEndpoint(e)
	e = stored(t, b.store, c.ID)
	e.Enabled = false
	b.store.PutEndpoint(e)
	rate := 0.5
	b.svc.SetHealth(fakeHealth{a.ID: {Attempts24h: 2, Succeeded24h: 1, SuccessRate24h: &rate}})

	ids := func(in webhook.ListInput) []uuid.UUID {
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
	require.Equal(t, []uuid.UUID{bb.ID, a.ID, c.ID}, ids(webhook.ListInput{}), "newest first by default")
	require.Equal(t, []uuid.UUID{bb.ID, a.ID, c.ID}, ids(webhook.ListInput{Sort: "-created"}))
	require.Equal(t, []uuid.UUID{c.ID, a.ID, bb.ID}, ids(webhook.ListInput{Sort: "created"}), "oldest first")
	require.Equal(t, []uuid.UUID{a.ID, bb.ID, c.ID}, ids(webhook.ListInput{Sort: "url"}), "A < b < c: case as stored")
	require.Equal(t, []uuid.UUID{c.ID, bb.ID, a.ID}, ids(webhook.ListInput{Sort: "-url"}))
	require.Equal(t, []uuid.UUID{a.ID}, ids(webhook.ListInput{State: webhook.StateEnabled}))
	require.Equal(t, []uuid.UUID{bb.ID}, ids(webhook.ListInput{State: webhook.StateFailing}))
	require.Equal(t, []uuid.UUID{c.ID}, ids(webhook.ListInput{State: webhook.StateDisabled}))
	require.Equal(t, []uuid.UUID{bb.ID, c.ID}, ids(webhook.ListInput{EventType: "booking.created"}))
	require.Equal(t, []uuid.UUID{bb.ID, a.ID}, ids(webhook.ListInput{EventType: "webhook.test"}))
	require.Equal(t, []uuid.UUID{a.ID, c.ID}, ids(webhook.ListInput{URL: "/HOOK"}))

	p, err := b.svc.List(ctx, b.owner, webhook.ListInput{Sort: "url", PageInput: op.PageInput{Limit: 2}})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{a.ID, bb.ID}, []uuid.UUID{p.Data[0].ID, p.Data[1].ID})
	require.Equal(t, 0.5, *p.Data[0].Health.SuccessRate24h)
	require.Nil(t, p.Data[1].Health.SuccessRate24h, "no attempts: no rate")
	require.NotNil(t, p.NextCursor)
	require.Equal(t, []uuid.UUID{c.ID}, ids(webhook.ListInput{Sort: "url", PageInput: op.PageInput{Limit: 2, Cursor: *p.NextCursor}}))

	for in, code := range map[webhook.ListInput]string{
		{State: "paused"}:           webhook.CodeInvalidState,
		{EventType: "nope.nothing"}: webhook.CodeInvalidEventType,
		{EventType: "booking.*"}:    webhook.CodeInvalidEventType,
		{Sort: "health"}:            webhook.CodeInvalidSort,
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
		e := webhook.Endpoint{ID: uuid.New(), URL: url}
		for _, sort := range []string{webhook.SortCreated, webhook.SortURL} {
			c, err := webhook.ParseEndpointCursor(sort, webhook.EndpointCursorOf(sort, e))
			require.NoError(t, err)
			require.Equal(t, e.ID, c.ID)
			if sort == webhook.SortURL {
				require.Equal(t, url, c.URL)
			}
			if _, err := webhook.ParseEndpointCursor(sort, raw); err != nil {
				requireCode(t, err, "INVALID_CURSOR")
			}
		}
	})
}

// TestUpdateInputBuiltInGo: an UpdateInput built in Go (as the admin UI
// calls the op through its typed handle) means what its JSON does: a nil
// EmbedID keeps the embed and DetachEmbed drops it ("embed_id": null); an
// empty Headers map removes the headers, a nil one keeps them.
func TestUpdateInputBuiltInGo(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	created, err := b.svc.Create(context.Background(), b.owner, webhook.CreateInput{URL: "https://x.example", EventTypes: []string{"code.*"},
		Headers: map[string]string{"X-A": "1"}, EmbedID: &b.embed})
	require.NoError(t, err)
	desc := "renamed"
	v, err := b.svc.Update(context.Background(), b.owner, webhook.UpdateInput{ID: created.ID, Description: &desc})
	require.NoError(t, err)
	require.Equal(t, &b.embed, v.EmbedID, "a nil EmbedID keeps the embed")
	require.Equal(t, map[string]string{"X-A": webhook.HeaderMask}, v.Headers, "nil Headers keep them")

	in := webhook.UpdateInput{ID: created.ID, Headers: map[string]string{}}
	in.DetachEmbed()
	v, err = b.svc.Update(context.Background(), b.owner, in)
	require.NoError(t, err)
	require.Nil(t, v.EmbedID, "DetachEmbed detaches the embed")
	require.Empty(t, v.Headers, "an empty map removes the headers")
}

// TestOpsRecordWhoCreatedAndChangedAnEndpoint: the ops record the caller's
// actor — an API key, a session, or the owner acting directly — as
// created_by, and as updated_by on every change of the settings or the
// secret.
func TestOpsRecordWhoCreatedAndChangedAnEndpoint(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	ctx := context.Background()
	ops := b.svc.Ops()
	create, err := op.HandleOf[webhook.CreateInput, webhook.WithSecret](ops, "webhooks.create")
	require.NoError(t, err)
	update, err := op.HandleOf[webhook.UpdateInput, webhook.View](ops, "webhooks.update")
	require.NoError(t, err)
	rotate, err := op.HandleOf[webhook.IDInput, webhook.SecretOutput](ops, "webhooks.rotate_secret")
	require.NoError(t, err)
	key, session := uuid.New(), uuid.New()
	byKey := op.Caller{OwnerID: b.owner, APIKeyID: key}
	bySession := op.Caller{OwnerID: b.owner, SessionID: session}

	created, err := create.Call(ctx, byKey, decode[webhook.CreateInput](t, `{"url":"https://r.example/h","event_types":["code.*"]}`))
	require.NoError(t, err)
	require.Equal(t, "api_key:"+key.String(), *created.CreatedBy)
	require.Equal(t, "api_key:"+key.String(), *created.UpdatedBy)

	in := decode[webhook.UpdateInput](t, `{"description":"changed"}`)
	in.ID = created.ID
	updated, err := update.Call(ctx, bySession, in)
	require.NoError(t, err)
	require.Equal(t, "api_key:"+key.String(), *updated.CreatedBy, "the creator stays")
	require.Equal(t, "session:"+session.String(), *updated.UpdatedBy)

	_, err = rotate.Call(ctx, op.Caller{OwnerID: b.owner}, webhook.IDInput{ID: created.ID})
	require.NoError(t, err)
	got, err := b.svc.Get(ctx, b.owner, created.ID)
	require.NoError(t, err)
	require.Equal(t, op.ActorOwner, *got.UpdatedBy, "a rotation is a change too; no key, no session: the owner")
	require.Equal(t, "api_key:"+key.String(), *got.CreatedBy)
}
