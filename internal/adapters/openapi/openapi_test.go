package openapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/openapi"
	"github.com/standmeet/standmeet/internal/adapters/openapi/optest"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/publish"
)

func loadDoc(t *testing.T, eps httpapi.Endpoints) *openapi3.T {
	t.Helper()
	h, err := openapi.NewHandler(eps, openapi.Options{SessionCookie: "standmeet_session"})
	require.NoError(t, err)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(h.Bytes())
	require.NoError(t, err)
	require.True(t, doc.IsOpenAPI31OrLater())
	require.NoError(t, doc.Validate(context.Background(), openapi3.EnableSchemaFormatValidation()))
	return doc
}

func TestDocumentIsValidOpenAPI31(t *testing.T) {
	t.Parallel()
	doc := loadDoc(t, optest.Endpoints())
	require.Equal(t, "3.1.0", doc.OpenAPI)
	require.Contains(t, doc.Components.SecuritySchemes, "bearerAuth")
	require.Contains(t, doc.Components.Schemas, "Error")
}

func TestEveryOpIsAnOperation(t *testing.T) {
	t.Parallel()
	eps := optest.Endpoints()
	doc := loadDoc(t, eps)
	count := 0
	for _, item := range doc.Paths.Map() {
		count += len(item.Operations())
	}
	require.Equal(t, len(eps), count, "one operation per op, no others")
	for _, ep := range eps {
		m := ep.Descriptor.Meta()
		item := doc.Paths.Find(ep.Path)
		require.NotNil(t, item, m.Name)
		o := item.GetOperation(ep.Method)
		require.NotNil(t, o, m.Name)
		require.Equal(t, m.Name, o.OperationID)
		require.Equal(t, m.Summary, o.Summary)
		if m.Public {
			require.NotNil(t, o.Security)
			require.Empty(t, *o.Security, "public ops need no credentials")
		}
	}
	list := doc.Paths.Find("/api/admin/things").Get
	var names []string
	for _, p := range list.Parameters {
		names = append(names, p.Value.In+":"+p.Value.Name)
	}
	require.ElementsMatch(t, []string{"query:limit", "query:cursor", "query:prefix"}, names)
	create := doc.Paths.Find("/api/admin/things").Post
	require.NotNil(t, create.RequestBody)
	body := create.RequestBody.Value.Content.Get("application/json").Schema.Value
	require.ElementsMatch(t, []string{"name"}, body.Required)
	require.NotNil(t, create.Responses.Status(http.StatusCreated))
	del := doc.Paths.Find("/api/admin/things/{id}").Delete
	require.NotNil(t, del.Responses.Status(http.StatusNoContent))
	require.Nil(t, del.RequestBody)
	patch := doc.Paths.Find("/api/admin/things/{id}").Patch
	props := patch.RequestBody.Value.Content.Get("application/json").Schema.Value.Properties
	require.Contains(t, props, "name")
	require.NotContains(t, props, "id", "path parameters are not body fields")
}

func TestDocumentRefusesInconsistentOps(t *testing.T) {
	t.Parallel()
	noop := func(context.Context, op.Caller, op.Empty) (op.Empty, error) { return op.Empty{}, nil }
	at := func(method, path, name string) httpapi.Endpoint {
		return httpapi.Endpoint{Route: httpapi.Route{Method: method, Path: path, Op: name}, Descriptor: op.New(op.Meta{Name: name}, noop)}
	}
	cases := []struct {
		name string
		ops  httpapi.Endpoints
		want string
	}{
		{"unbound path parameter", httpapi.Endpoints{at(http.MethodGet, "/api/admin/a/{id}", "a.b")}, "path parameter {id}"},
		{"two ops on one route", httpapi.Endpoints{
			at(http.MethodGet, "/api/admin/a", "a.one"),
			at(http.MethodGet, "/api/admin/a", "a.two"),
		}, "declared by two ops"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := openapi.Document(c.ops, openapi.Options{})
			require.ErrorContains(t, err, c.want)
		})
	}
}

// TestDocumentDescribesTheRESTProjection sends real requests through
// httpapi.MountOps and checks each request and response against the document
// with kin-openapi's validator: the document says what the server does.
func TestDocumentDescribesTheRESTProjection(t *testing.T) {
	t.Parallel()
	eps := optest.Endpoints()
	doc := loadDoc(t, eps)
	doc.Servers = openapi3.Servers{{URL: "http://example.test"}}
	router, err := legacy.NewRouter(doc)
	require.NoError(t, err)

	e := echo.New()
	owner := uuid.New()
	auth := httpapi.AuthenticatorFunc(func(r *http.Request) (op.Caller, error) {
		if r.Header.Get("Authorization") != "Bearer k" {
			return op.Caller{}, domain.Unauthorized("UNAUTHORIZED", "no credentials")
		}
		return op.Caller{OwnerID: owner}, nil
	})
	httpapi.MountOps(e, eps, auth, zap.NewNop())
	h, err := openapi.NewHandler(eps, openapi.Options{})
	require.NoError(t, err)
	h.Mount(e)

	opts := &openapi3filter.Options{
		AuthenticationFunc:                openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus:             true,
		RejectWhenRequestBodyNotSpecified: true,
		MultiError:                        true,
	}
	send := func(method, path, body string, wantStatus int) string {
		t.Helper()
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req := httptest.NewRequest(method, "http://example.test"+path, r)
		req.Header.Set("Authorization", "Bearer k")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		route, params, err := router.FindRoute(req)
		require.NoError(t, err, "%s %s", method, path)
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
		require.NoError(t, openapi3filter.ValidateRequest(context.Background(), in), "%s %s", method, path)
		// ValidateRequest consumed the body; hand the server a fresh one.
		if body != "" {
			req.Body = io.NopCloser(strings.NewReader(body))
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		require.Equal(t, wantStatus, rec.Code, "%s %s: %s", method, path, rec.Body.String())
		out := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in,
			Status:                 rec.Code,
			Header:                 rec.Header(),
			Body:                   io.NopCloser(bytes.NewReader(rec.Body.Bytes())),
			Options:                opts,
		}
		require.NoError(t, openapi3filter.ValidateResponse(context.Background(), out), "%s %s: %s", method, path, rec.Body.String())
		return rec.Body.String()
	}

	send(http.MethodGet, "/api/admin/things?limit=5", "", http.StatusOK)
	created := send(http.MethodPost, "/api/admin/things", `{"name":"a","tags":["x"],"labels":{"k":"v"}}`, http.StatusCreated)
	var th optest.Thing
	require.NoError(t, json.Unmarshal([]byte(created), &th))
	send(http.MethodPost, "/api/admin/things", `{"name":"b"}`, http.StatusCreated)
	send(http.MethodPost, "/api/admin/things", `{"name":""}`, http.StatusBadRequest)
	send(http.MethodGet, "/api/admin/things?limit=1&prefix=a", "", http.StatusOK)
	send(http.MethodGet, "/api/admin/things?limit=1", "", http.StatusOK)
	send(http.MethodGet, "/api/admin/things/"+th.ID.String(), "", http.StatusOK)
	send(http.MethodPatch, "/api/admin/things/"+th.ID.String(), `{"name":"c"}`, http.StatusOK)
	send(http.MethodDelete, "/api/admin/things/"+th.ID.String(), "", http.StatusNoContent)
	send(http.MethodGet, "/api/admin/things/"+th.ID.String(), "", http.StatusNotFound)
	send(http.MethodGet, "/api/status", "", http.StatusOK)
	send(http.MethodPost, "/api/admin/things/fail", "", http.StatusInternalServerError)

	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, openapi.Path, nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	// The served document is the built one, naming the origin it was
	// fetched from as its server.
	var built, served map[string]any
	require.NoError(t, json.Unmarshal(h.Bytes(), &built))
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &served))
	require.Equal(t, []any{map[string]any{"url": openapi.DefaultServer, "description": "this StandMeet instance"}}, built["servers"])
	require.Equal(t, []any{map[string]any{"url": "http://example.com", "description": "this StandMeet instance"}}, served["servers"])
	delete(built, "servers")
	delete(served, "servers")
	require.Equal(t, built, served)
}

func TestWebhooksSectionDescribesEveryTypeWithItsSchemaAndHeaders(t *testing.T) {
	t.Parallel()
	h, err := openapi.NewHandler(optest.Endpoints(), openapi.Options{Webhooks: domain.WebhookEventTypes()})
	require.NoError(t, err)
	doc, err := openapi3.NewLoader().LoadFromData(h.Bytes())
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background(), openapi3.EnableSchemaFormatValidation()))
	require.Len(t, doc.Webhooks, len(domain.WebhookEventTypes()))
	for _, et := range domain.WebhookEventTypes() {
		item := doc.Webhooks[et.Name]
		require.NotNil(t, item, et.Name)
		post := item.Post
		require.NotNil(t, post, et.Name)
		var headers []string
		for _, p := range post.Parameters {
			require.Equal(t, "header", p.Value.In)
			require.True(t, p.Value.Required)
			headers = append(headers, p.Value.Name)
		}
		require.ElementsMatch(t, []string{"webhook-id", "webhook-timestamp", "webhook-signature"}, headers, et.Name)
		media := post.RequestBody.Value.Content.Get("application/json")
		require.NotNil(t, media, et.Name)
		// The example validates against the body schema, as a receiver's
		// generated code would check it.
		require.NoError(t, media.Schema.Value.VisitJSON(media.Example), et.Name)
		require.Contains(t, media.Schema.Value.Properties, "data")
		require.Contains(t, post.Responses.Map(), "2XX")
	}
	var raw map[string]any
	require.NoError(t, json.Unmarshal(h.Bytes(), &raw))
	require.Contains(t, raw, "webhooks")
	// Without types the section is left out.
	plain, err := openapi.NewHandler(optest.Endpoints(), openapi.Options{})
	require.NoError(t, err)
	require.NotContains(t, string(plain.Bytes()), `"webhooks"`)
}

func TestReplayerOutputsDocumentTheReplayStatus(t *testing.T) {
	t.Parallel()
	ops := op.Set{op.New(op.Meta{Name: "events.publish", Summary: "publish"},
		func(context.Context, op.Caller, publish.Input) (publish.Output, error) { return publish.Output{}, nil })}
	eps, err := httpapi.Bind(ops, []httpapi.Route{{Method: http.MethodPost, Path: "/api/admin/events", Op: "events.publish", Status: http.StatusAccepted}})
	require.NoError(t, err)
	doc := loadDoc(t, eps)
	post := doc.Paths.Find("/api/admin/events").Post
	require.NotNil(t, post.Responses.Status(http.StatusAccepted))
	require.NotNil(t, post.Responses.Status(http.StatusOK), "a repeated idempotency key answers 200")
}
