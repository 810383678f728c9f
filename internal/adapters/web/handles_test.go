package web_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/alexedwards/argon2id"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/eventop"
	"github.com/standmeet/standmeet/internal/adapters/httpapi/auth"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/adapters/web"
	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/corpus/corpustest"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/inboundtest"
	"github.com/standmeet/standmeet/internal/owner/inbound/supplier"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
	"github.com/standmeet/standmeet/internal/owner/ownertest"
	"github.com/standmeet/standmeet/internal/owner/webhook"
	"github.com/standmeet/standmeet/internal/owner/webhook/webhooktest"
)

const ownerPassword = "correct horse battery"

// ownerService is the owner domain over its in-memory store, with one owner.
func ownerService(t *testing.T) (*owner.Service, owner.Owner) {
	t.Helper()
	hasher := auth.NewArgon2id(argon2id.Params{Memory: 1024, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32})
	svc, err := owner.New(owner.Deps{UoW: ownertest.NewMemory(), Hasher: hasher, Tokens: auth.RandomTokens{}})
	require.NoError(t, err)
	o, err := svc.CreateOwner(context.Background(), "owner@example.test", ownerPassword)
	require.NoError(t, err)
	return svc, o
}

// TestNewFailsWhenTheAccountPagesMissAnOp: the account and API key pages
// take typed handles on the owner's ops when the UI is built; a set with
// the account section but without one of its ops, or with one of other
// types, stops the start naming it. A set without the section builds.
func TestNewFailsWhenTheAccountPagesMissAnOp(t *testing.T) {
	t.Parallel()
	svc, _ := ownerService(t)
	without := func(name string, add ...op.Descriptor) op.Set {
		var s op.Set
		for _, d := range svc.Ops() {
			if d.Meta().Name != name {
				s = append(s, d)
			}
		}
		return append(s, add...)
	}
	_, err := web.New(web.Deps{Ops: svc.Ops()})
	require.NoError(t, err)

	_, err = web.New(web.Deps{Ops: without("owner.change_email")})
	require.ErrorContains(t, err, "op: owner.change_email is not declared")

	retyped := op.New(op.Meta{Name: "api_keys.list"}, func(context.Context, op.Caller, op.Empty) (op.Empty, error) { return op.Empty{}, nil })
	_, err = web.New(web.Deps{Ops: without("api_keys.list", retyped)})
	require.ErrorContains(t, err, "op: api_keys.list takes op.Empty and returns op.Empty, not op.Empty and op.List[")

	_, err = web.New(web.Deps{Ops: newWorld().ops()})
	require.NoError(t, err, "a set without the account section builds: the section is left out")
}

// serve mounts a UI over ops for the owner id and signs in.
func serve(t *testing.T, ops op.Set, ownerID uuid.UUID) (*bundle, string) {
	t.Helper()
	fa := &fakeAuth{sessions: map[string]uuid.UUID{}, owner: ownerID}
	h, err := web.New(web.Deps{Ops: ops, Auth: fa.auth()})
	require.NoError(t, err)
	e := echo.New()
	h.Mount(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	b := &bundle{srv: srv, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	return b, b.login(t)
}

// TestNotePagesCallTheCorpusOps drives the note pages against the corpus
// domain's own ops, and shows a notes section missing an op stops the start.
func TestNotePagesCallTheCorpusOps(t *testing.T) {
	t.Parallel()
	svc := corpus.NewService(corpustest.NewMemory())
	var partial op.Set
	for _, d := range svc.Ops() {
		if d.Meta().Name != "notes.move" {
			partial = append(partial, d)
		}
	}
	_, err := web.New(web.Deps{Ops: partial})
	require.ErrorContains(t, err, "op: notes.move is not declared")

	ownerID := uuid.New()
	b, csrf := serve(t, append(newWorld().ops(), svc.Ops()...), ownerID)
	res := b.post(t, "/admin/notes", url.Values{"csrf_token": {csrf}, "genre": {"wiki"}, "title": {"Hello handles"}, "body": {"typed"}, "tags": {"a, b"}})
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	notes, lerr := op.HandleOf[corpus.ListNotesInput, op.Page[corpus.NoteView]](svc.Ops(), "notes.list")
	require.NoError(t, lerr)
	p, lerr := notes.Call(context.Background(), op.Caller{OwnerID: ownerID}, corpus.ListNotesInput{})
	require.NoError(t, lerr)
	require.Len(t, p.Data, 1)
	n := p.Data[0]
	require.Equal(t, "/admin/notes/"+n.ID.String()+"?notice=note_saved", res.location)
	require.Equal(t, []string{"a", "b"}, n.Tags)

	page := b.get(t, "/admin/notes")
	require.Equal(t, http.StatusOK, page.status)
	require.Contains(t, page.body, "Hello handles")
	page = b.get(t, "/admin/notes/"+n.ID.String())
	require.Equal(t, http.StatusOK, page.status)
	require.Contains(t, page.body, n.URI)

	res = b.post(t, "/admin/notes/"+n.ID.String(), url.Values{"csrf_token": {csrf}, "genre": {"wiki"}, "title": {"Renamed"}, "body": {"typed"}, "published": {"on"}})
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	res = b.post(t, "/admin/notes/"+n.ID.String()+"/unpublish", url.Values{"csrf_token": {csrf}})
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	res = b.post(t, "/admin/notes/"+n.ID.String()+"/move", url.Values{"csrf_token": {csrf}, "parent_id": {"not-an-id"}})
	require.Equal(t, http.StatusBadRequest, res.status, res.body)
	got := b.get(t, "/admin/notes/"+n.ID.String())
	require.Contains(t, got.body, "Renamed")
	require.Contains(t, got.body, "Draft")

	res = b.post(t, "/admin/notes/"+n.ID.String()+"/delete", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}})
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	p, lerr = notes.Call(context.Background(), op.Caller{OwnerID: ownerID}, corpus.ListNotesInput{})
	require.NoError(t, lerr)
	require.Empty(t, p.Data)
}

// TestAccountAndAPIKeyPagesCallTheOwnerOps drives the account and API key
// pages against the owner domain's own ops.
func TestAccountAndAPIKeyPagesCallTheOwnerOps(t *testing.T) {
	t.Parallel()
	svc, o := ownerService(t)
	b, csrf := serve(t, append(newWorld().ops(), svc.Ops()...), o.ID)

	page := b.get(t, "/admin/account")
	require.Equal(t, http.StatusOK, page.status, page.body)
	require.Contains(t, page.body, "owner@example.test")

	res := b.post(t, "/admin/account/email", url.Values{"csrf_token": {csrf}, "email": {"new@example.test"}, "current_password": {ownerPassword}})
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	me, err := svc.Me(context.Background(), o.ID)
	require.NoError(t, err)
	require.Equal(t, "new@example.test", me.Email)
	res = b.post(t, "/admin/account/email", url.Values{"csrf_token": {csrf}, "email": {"other@example.test"}, "current_password": {"wrong"}})
	require.GreaterOrEqual(t, res.status, 400, "a wrong password is refused on the page")

	res = b.post(t, "/admin/api-keys", url.Values{"csrf_token": {csrf}, "name": {"ci"}})
	require.Equal(t, http.StatusCreated, res.status, res.body)
	m := secretRe.FindStringSubmatch(res.body)
	require.NotNil(t, m, res.body)
	require.True(t, strings.HasPrefix(m[1], owner.APIKeyPrefix))
	keys, err := svc.ListAPIKeys(context.Background(), o.ID)
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.Equal(t, "ci", keys[0].Name)

	res = b.post(t, "/admin/api-keys/"+keys[0].ID.String()+"/revoke", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}})
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	keys, err = svc.ListAPIKeys(context.Background(), o.ID)
	require.NoError(t, err)
	require.NotNil(t, keys[0].RevokedAt)
}

// TestNewFailsWhenTheSupplierPagesMissAnOp: a supplier section without
// supplier_connections.get stops the start; the whole section builds.
func TestNewFailsWhenTheSupplierPagesMissAnOp(t *testing.T) {
	t.Parallel()
	ops := supplier.NewService(nil, nil).Ops()
	_, err := web.New(web.Deps{Ops: ops})
	require.NoError(t, err)
	var partial op.Set
	for _, d := range ops {
		if d.Meta().Name != "supplier_connections.get" {
			partial = append(partial, d)
		}
	}
	_, err = web.New(web.Deps{Ops: partial})
	require.ErrorContains(t, err, "op: supplier_connections.get is not declared")
}

// TestNewFailsWhenTheEventPagesMissAnOp: the event log, the poisoned list,
// the event page's webhook parts, the catalog and the job page take typed
// handles on the ops that declare them (eventop's and riverjob's own); a
// group whose marking op is declared without the rest, or an op of other
// types, stops the start naming it.
func TestNewFailsWhenTheEventPagesMissAnOp(t *testing.T) {
	t.Parallel()
	ops := append(eventop.Ops(nil), riverjob.JobOps(nil, nil)...)
	_, err := web.New(web.Deps{Ops: ops})
	require.NoError(t, err)
	without := func(name string, add ...op.Descriptor) op.Set {
		var s op.Set
		for _, d := range ops {
			if d.Meta().Name != name {
				s = append(s, d)
			}
		}
		return append(s, add...)
	}
	for _, name := range []string{"events.get", "events.release"} {
		_, err = web.New(web.Deps{Ops: without(name)})
		require.ErrorContains(t, err, "op: "+name+" is not declared")
	}
	retyped := op.New(op.Meta{Name: "jobs.get"}, func(context.Context, op.Caller, op.Empty) (op.Empty, error) { return op.Empty{}, nil })
	_, err = web.New(web.Deps{Ops: without("jobs.get", retyped)})
	require.ErrorContains(t, err, "op: jobs.get takes op.Empty and returns op.Empty")
	fanout := op.New(op.Meta{Name: "webhooks.event_fanout"}, func(context.Context, op.Caller, op.Empty) (op.Empty, error) { return op.Empty{}, nil })
	_, err = web.New(web.Deps{Ops: append(ops, fanout)})
	require.ErrorContains(t, err, "op: webhooks.event_fanout takes op.Empty")
}

// TestNewFailsWhenTheInboundPagesMissAnOp: the inbound pages take typed
// handles on the inbound domain's own ops; a section without one of them,
// or with one of other types, stops the start naming it.
func TestNewFailsWhenTheInboundPagesMissAnOp(t *testing.T) {
	t.Parallel()
	ops := inbound.NewService(inbound.ServiceDeps{}).Ops()
	_, err := web.New(web.Deps{Ops: ops})
	require.NoError(t, err)
	without := func(name string, add ...op.Descriptor) op.Set {
		var s op.Set
		for _, d := range ops {
			if d.Meta().Name != name {
				s = append(s, d)
			}
		}
		return append(s, add...)
	}
	for _, name := range []string{"inbound_sources.create", "inbound_sources.delete", "inbound_sources.message", "inbound_sources.replay_dead_letters"} {
		_, err = web.New(web.Deps{Ops: without(name)})
		require.ErrorContains(t, err, "op: "+name+" is not declared")
	}
	retyped := op.New(op.Meta{Name: "inbound_sources.refusals"}, func(context.Context, op.Caller, op.Empty) (op.Empty, error) { return op.Empty{}, nil })
	_, err = web.New(web.Deps{Ops: without("inbound_sources.refusals", retyped)})
	require.ErrorContains(t, err, "op: inbound_sources.refusals takes op.Empty")
	_, err = web.New(web.Deps{Ops: without("inbound_sources.refusals")})
	require.NoError(t, err, "refusals are optional: the source page leaves them out")
}

// TestNewFailsWhenTheWebhookPagesMissAnOp: the webhook pages take typed
// handles on the webhook domain's own ops; a section without one of them,
// or with one of other types, stops the start naming it. Retry now and
// send again are optional together: without them the log offers no
// steering buttons.
func TestNewFailsWhenTheWebhookPagesMissAnOp(t *testing.T) {
	t.Parallel()
	ops := webhook.NewService(webhook.Deps{}).Ops()
	_, err := web.New(web.Deps{Ops: ops})
	require.NoError(t, err)
	without := func(name string, add ...op.Descriptor) op.Set {
		var s op.Set
		for _, d := range ops {
			if d.Meta().Name != name {
				s = append(s, d)
			}
		}
		return append(s, add...)
	}
	for _, name := range []string{"webhooks.get", "webhooks.update", "webhooks.rotate_secret", "webhooks.delivery", "webhooks.recover"} {
		_, err = web.New(web.Deps{Ops: without(name)})
		require.ErrorContains(t, err, "op: "+name+" is not declared")
	}
	retyped := op.New(op.Meta{Name: "webhooks.send_test"}, func(context.Context, op.Caller, webhook.IDInput) (op.Empty, error) { return op.Empty{}, nil })
	_, err = web.New(web.Deps{Ops: without("webhooks.send_test", retyped)})
	require.ErrorContains(t, err, "op: webhooks.send_test takes webhook.IDInput and returns op.Empty, not webhook.IDInput and webhook.TestOutput")
	retry := op.New(op.Meta{Name: "webhooks.retry_delivery"}, func(context.Context, op.Caller, webhook.IDInput) (webhook.RetryOutput, error) {
		return webhook.RetryOutput{}, nil
	})
	_, err = web.New(web.Deps{Ops: without("webhooks.retry_delivery", retry)})
	require.ErrorContains(t, err, "op: webhooks.retry_delivery takes webhook.IDInput")
}

// TestWebhookPagesCallTheWebhookOps drives the webhook pages against the
// webhook domain's own ops over webhooktest's memory store: what a form
// posts reaches the service in its own types, and what the service
// returns is what the page shows.
func TestWebhookPagesCallTheWebhookOps(t *testing.T) {
	t.Parallel()
	store := webhooktest.NewMemory()
	svc := webhook.NewService(webhook.Deps{UnitOfWork: store,
		Seal: func(plaintext, ad []byte) ([]byte, error) {
			return append(append([]byte(nil), ad...), plaintext...), nil
		}})
	ownerID := uuid.New()
	b, csrf := serve(t, svc.Ops(), ownerID)
	ctx := context.Background()

	res := b.post(t, "/admin/webhooks", url.Values{"csrf_token": {csrf}, "url": {"https://r.example/h"}, "event_types": {"webhook.test"},
		"globs": {"code.*"}, "headers": {"X-Team: payments"}, "enabled": {"1"}, "max_in_flight": {"2"}})
	require.Equal(t, http.StatusCreated, res.status, res.body)
	m := secretRe.FindStringSubmatch(res.body)
	require.NotNil(t, m, res.body)
	require.True(t, strings.HasPrefix(m[1], "whsec_"))
	list, err := svc.List(ctx, ownerID, webhook.ListInput{})
	require.NoError(t, err)
	require.Len(t, list.Data, 1)
	e := list.Data[0]
	require.Equal(t, []string{"webhook.test", "code.*"}, e.EventTypes)
	require.Equal(t, 2, e.MaxInFlight)
	require.Equal(t, map[string]string{"X-Team": webhook.HeaderMask}, e.Headers)
	page := "/admin/webhooks/" + e.ID.String()

	bad := b.post(t, "/admin/webhooks", url.Values{"csrf_token": {csrf}, "url": {"ftp://r.example"}, "event_types": {"webhook.test"}})
	require.Equal(t, http.StatusBadRequest, bad.status, "the service's own validation answers the form")

	got := b.get(t, "/admin/webhooks")
	require.Equal(t, http.StatusOK, got.status)
	require.Contains(t, got.body, "https://r.example/h")
	got = b.get(t, page)
	require.Equal(t, http.StatusOK, got.status, got.body)
	require.Contains(t, got.body, "X-Team")

	res = b.post(t, page+"/edit", url.Values{"csrf_token": {csrf}, "url": {"https://r.example/h2"}, "description": {"renamed"},
		"event_types": {"webhook.test"}, "clear_headers": {"1"}, "max_in_flight": {"3"}, "timeout_seconds": {"4"}, "max_attempts": {"6"}})
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	v, err := svc.Get(ctx, ownerID, e.ID)
	require.NoError(t, err)
	require.Equal(t, "https://r.example/h2", v.URL)
	require.Equal(t, "renamed", v.Description)
	require.Empty(t, v.Headers)
	require.Equal(t, []int{3, 4, 6}, []int{v.MaxInFlight, v.TimeoutSeconds, v.MaxAttempts})

	res = b.post(t, page+"/disable", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}})
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	v, err = svc.Get(ctx, ownerID, e.ID)
	require.NoError(t, err)
	require.Equal(t, "disabled", v.State)

	res = b.post(t, page+"/rotate", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}})
	require.Equal(t, http.StatusOK, res.status, res.body)
	m2 := secretRe.FindStringSubmatch(res.body)
	require.NotNil(t, m2, res.body)
	require.NotEqual(t, m[1], m2[1], "a new secret")

	res = b.post(t, page+"/delete", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}})
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	v, err = svc.Get(ctx, ownerID, e.ID)
	require.NoError(t, err)
	require.Equal(t, "deleted", v.State)
}

// TestInboundPagesCallTheInboundOps drives the inbound pages against the
// inbound domain's own ops over inboundtest's memory store, the kind's
// options included.
func TestInboundPagesCallTheInboundOps(t *testing.T) {
	t.Parallel()
	svc := inbound.NewService(inbound.ServiceDeps{UoW: inboundtest.NewMemory(), Verifiers: verifier.NewDefaultRegistry(),
		Seal: func(plaintext, ad []byte) ([]byte, error) {
			return append(append([]byte(nil), ad...), plaintext...), nil
		}})
	ownerID := uuid.New()
	ops := svc.Ops()
	for _, d := range newWorld().ops() {
		if !strings.HasPrefix(d.Meta().Name, "inbound_sources.") {
			ops = append(ops, d)
		}
	}
	b, csrf := serve(t, ops, ownerID)
	ctx := context.Background()
	list, err := op.HandleOf[op.PageInput, op.Page[inbound.SourceView]](svc.Ops(), "inbound_sources.list")
	require.NoError(t, err)
	get, err := op.HandleOf[inbound.SourceIDInput, inbound.SourceView](svc.Ops(), "inbound_sources.get")
	require.NoError(t, err)
	caller := op.Caller{OwnerID: ownerID}

	res := b.post(t, "/admin/inbound", url.Values{"csrf_token": {csrf}, "name": {"Shop"}, "verifier": {verifier.KindStandardWebhooks}, "enabled": {"1"}})
	require.Equal(t, http.StatusCreated, res.status, res.body)
	m := secretRe.FindStringSubmatch(res.body)
	require.NotNil(t, m, res.body)
	require.True(t, strings.HasPrefix(m[1], "whsec_"), "the generated secret is shown once")

	res = b.post(t, "/admin/inbound", url.Values{"csrf_token": {csrf}, "name": {"Shop HMAC"}, "verifier": {verifier.KindHMAC},
		"secret": {"a-provider-secret-of-some-length"}, "signature_header": {"X-Shop-Signature"}, "tolerance_seconds": {"120"}, "enabled": {"1"}})
	require.Equal(t, http.StatusCreated, res.status, res.body)
	p, err := list.Call(ctx, caller, op.PageInput{})
	require.NoError(t, err)
	require.Len(t, p.Data, 2)
	var src inbound.SourceView
	for _, s := range p.Data {
		if s.Name == "Shop HMAC" {
			src = s
		}
	}
	require.Equal(t, 120, src.ToleranceSeconds)
	require.JSONEq(t, `"X-Shop-Signature"`, string(src.Options["signature_header"]))
	page := "/admin/inbound/" + src.ID.String()

	got := b.get(t, page)
	require.Equal(t, http.StatusOK, got.status, got.body)
	got = b.get(t, page+"/edit")
	require.Equal(t, http.StatusOK, got.status, got.body)
	require.Contains(t, got.body, "X-Shop-Signature")

	res = b.post(t, page+"/edit", url.Values{"csrf_token": {csrf}, "name": {"Shop renamed"}, "signature_header": {"X-Other"},
		"body_limit_bytes": {"4096"}, "tolerance_seconds": {"120"}})
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	v, err := get.Call(ctx, caller, inbound.SourceIDInput{ID: src.ID})
	require.NoError(t, err)
	require.Equal(t, "Shop renamed", v.Name)
	require.Equal(t, int64(4096), v.BodyLimitBytes)
	require.JSONEq(t, `"X-Other"`, string(v.Options["signature_header"]))

	res = b.post(t, page+"/disable", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}})
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	v, err = get.Call(ctx, caller, inbound.SourceIDInput{ID: src.ID})
	require.NoError(t, err)
	require.False(t, v.Enabled)

	res = b.post(t, page+"/rotate", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}, "secret": {"the-providers-new-secret"}})
	require.Equal(t, http.StatusOK, res.status, res.body)
	v, err = get.Call(ctx, caller, inbound.SourceIDInput{ID: src.ID})
	require.NoError(t, err)
	require.NotNil(t, v.SecretRotatedAt)

	res = b.post(t, page+"/delete", url.Values{"csrf_token": {csrf}, "confirm": {"yes"}})
	require.Equal(t, http.StatusSeeOther, res.status, res.body)
	_, err = get.Call(ctx, caller, inbound.SourceIDInput{ID: src.ID})
	require.Error(t, err)
	require.Equal(t, domain.KindNotFound, domain.AsError(err).Kind, "the source is gone")
}
