package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/mcp"
	"github.com/standmeet/standmeet/internal/adapters/openapi"
)

// surfaceOwner is an owner of the test server with a password (for the admin
// UI) and an API key (for REST and MCP).
type surfaceOwner struct {
	ID       uuid.UUID
	Email    string
	Password string
	Key      string
}

// newSurfaceOwner creates an owner the way `standmeet owner create` and
// `standmeet api-key issue` do.
func newSurfaceOwner(t *testing.T, ts *testServer) surfaceOwner {
	t.Helper()
	ctx := context.Background()
	o := surfaceOwner{Email: "owner-" + uuid.NewString()[:8] + "@example.test", Password: "correct horse battery staple"}
	created, err := ts.App.Commands.Owners.CreateOwner(ctx, o.Email, o.Password)
	require.NoError(t, err)
	o.ID = created.ID
	k, err := ts.App.Commands.Owners.IssueAPIKeyForEmail(ctx, o.Email, "surfaces e2e", nil)
	require.NoError(t, err)
	o.Key = k.Key
	return o
}

// loadOpenAPI fetches the server's document without credentials and checks
// it with kin-openapi, which validates OpenAPI 3.1 (JSON Schema 2020-12
// keywords, type arrays with "null") since v0.13x.
func loadOpenAPI(t *testing.T, ts *testServer) *openapi3.T {
	t.Helper()
	status, body := ts.do(t, http.MethodGet, openapi.Path, "", "")
	require.Equal(t, http.StatusOK, status, body)
	doc, err := openapi3.NewLoader().LoadFromData([]byte(body))
	require.NoError(t, err)
	require.Equal(t, "3.1.0", doc.OpenAPI)
	require.True(t, doc.IsOpenAPI31OrLater())
	require.NoError(t, doc.Validate(context.Background(), openapi3.EnableSchemaFormatValidation()))
	return doc
}

// adminRoutes are the routes the server registers under /api/admin/, as
// "METHOD /path/{param}".
func adminRoutes(ts *testServer) map[string]bool {
	out := map[string]bool{}
	for _, r := range ts.App.Server.Echo().Routes() {
		if !strings.HasPrefix(r.Path, "/api/admin/") {
			continue
		}
		out[r.Method+" "+openAPIPath(r.Path)] = true
	}
	return out
}

// openAPIPath turns Echo's ":id" into "{id}".
func openAPIPath(echoPath string) string {
	parts := strings.Split(echoPath, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

func TestOpenAPIDocumentCoversEveryAdminRoute(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	doc := loadOpenAPI(t, ts)

	routes := adminRoutes(ts)
	require.NotEmpty(t, routes)
	for route := range routes {
		method, path, _ := strings.Cut(route, " ")
		item := doc.Paths.Find(path)
		require.NotNil(t, item, "route %s is not in the OpenAPI document", route)
		require.NotNil(t, item.GetOperation(method), "route %s is not in the OpenAPI document", route)
	}
	// And the document promises nothing the server does not serve.
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if strings.HasPrefix(path, "/api/admin/") {
				require.True(t, routes[method+" "+path], "the document has %s %s, the server does not", method, path)
			}
		}
	}
	require.Contains(t, doc.Components.SecuritySchemes, "bearerAuth")
	require.Contains(t, doc.Components.SecuritySchemes, "sessionCookie")
}

// TestEveryDeclaredOpIsProjected: each declared op has its REST route, its
// MCP tool (owner ops) and its OpenAPI operation; no op is written twice.
func TestEveryDeclaredOpIsProjected(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	o := newSurfaceOwner(t, ts)
	doc := loadOpenAPI(t, ts)
	routes := map[string]bool{}
	for _, r := range ts.App.Server.Echo().Routes() {
		routes[r.Method+" "+r.Path] = true
	}
	cs := mcpSession(t, ts, o.Key)
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	tools := map[string]bool{}
	for _, tool := range list.Tools {
		tools[tool.Name] = true
	}

	names := map[string]bool{}
	require.Len(t, ts.App.Endpoints, len(ts.App.Ops), "every op has its route")
	for _, ep := range ts.App.Endpoints {
		m := ep.Descriptor.Meta()
		require.False(t, names[m.Name], "op %s declared twice", m.Name)
		names[m.Name] = true
		require.True(t, routes[ep.Method+" "+httpapi.EchoPath(ep.Path)], "op %s has no REST route %s %s", m.Name, ep.Method, ep.Path)
		item := doc.Paths.Find(ep.Path)
		require.NotNil(t, item, "op %s has no OpenAPI path", m.Name)
		operation := item.GetOperation(ep.Method)
		require.NotNil(t, operation, "op %s has no OpenAPI operation", m.Name)
		require.Equal(t, m.Name, operation.OperationID)
		if m.Public {
			require.False(t, tools[mcp.ToolName(m.Name)], "public op %s must not be an MCP tool", m.Name)
		} else {
			require.True(t, tools[mcp.ToolName(m.Name)], "op %s has no MCP tool", m.Name)
		}
	}
	// The contract's groups are all there.
	for _, name := range []string{"webhooks.create", "webhooks.send_test", "webhooks.deliveries", "inbound_sources.create",
		"inbound_sources.replay_dead_letter", "events.poisoned", "events.release"} {
		require.True(t, names[name], "op %s is not declared", name)
	}
}

// TestRESTAnswersMatchTheOpenAPIDocument sends real requests to the server
// and checks each request and answer against the document with kin-openapi's
// validator.
func TestRESTAnswersMatchTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.0/8"}})
	o := newSurfaceOwner(t, ts)
	doc := loadOpenAPI(t, ts)
	doc.Servers = openapi3.Servers{{URL: ts.URL}}
	router, err := legacy.NewRouter(doc)
	require.NoError(t, err)
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}

	call := func(method, path, body string, want int) map[string]any {
		t.Helper()
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, ts.URL+path, r)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+o.Key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		route, params, err := router.FindRoute(req)
		require.NoError(t, err, "%s %s", method, path)
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
		require.NoError(t, openapi3filter.ValidateRequest(context.Background(), in), "%s %s", method, path)
		if body != "" {
			req.Body = io.NopCloser(strings.NewReader(body))
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, want, resp.StatusCode, "%s %s: %s", method, path, got)
		require.NoError(t, openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Body: io.NopCloser(bytes.NewReader(got)), Options: opts,
		}), "%s %s answered %s", method, path, got)
		var out map[string]any
		if len(got) > 0 {
			require.NoError(t, json.Unmarshal(got, &out))
		}
		return out
	}

	call(http.MethodGet, "/api/admin/me", "", http.StatusOK)
	call(http.MethodGet, "/api/admin/webhooks/event-types", "", http.StatusOK)
	ep := call(http.MethodPost, "/api/admin/webhooks", `{"url":"http://127.0.0.1:9/hook","description":"d","event_types":["webhook.test","corpus.*"],"headers":{"X-A":"b"}}`, http.StatusCreated)
	id := ep["id"].(string)
	call(http.MethodGet, "/api/admin/webhooks?limit=10", "", http.StatusOK)
	call(http.MethodGet, "/api/admin/webhooks/"+id, "", http.StatusOK)
	call(http.MethodPatch, "/api/admin/webhooks/"+id, `{"enabled":false}`, http.StatusOK)
	call(http.MethodPatch, "/api/admin/webhooks/"+id, `{"enabled":true}`, http.StatusOK)
	call(http.MethodPost, "/api/admin/webhooks/"+id+"/test", "", http.StatusAccepted)
	call(http.MethodGet, "/api/admin/webhooks/"+id+"/deliveries", "", http.StatusOK)
	call(http.MethodPost, "/api/admin/webhooks/"+id+"/rotate-secret", "", http.StatusOK)
	call(http.MethodPost, "/api/admin/webhooks/"+id+"/redeliver", "", http.StatusOK)
	call(http.MethodGet, "/api/admin/webhooks/"+uuid.NewString(), "", http.StatusNotFound)
	call(http.MethodPost, "/api/admin/webhooks", `{"url":"","event_types":[]}`, http.StatusBadRequest)

	src := call(http.MethodPost, "/api/admin/inbound-sources", `{"name":"billing","verifier":"standard-webhooks"}`, http.StatusCreated)
	srcID := src["id"].(string)
	call(http.MethodGet, "/api/admin/inbound-sources", "", http.StatusOK)
	call(http.MethodGet, "/api/admin/inbound-sources/"+srcID, "", http.StatusOK)
	call(http.MethodGet, "/api/admin/inbound-sources/"+srcID+"/messages", "", http.StatusOK)
	call(http.MethodGet, "/api/admin/inbound-sources/"+srcID+"/dead-letters", "", http.StatusOK)
	call(http.MethodGet, "/api/admin/events?limit=5", "", http.StatusOK)
	call(http.MethodGet, "/api/admin/events/poisoned", "", http.StatusOK)
	call(http.MethodGet, "/api/admin/api-keys", "", http.StatusOK)
	call(http.MethodDelete, "/api/admin/webhooks/"+id, "", http.StatusNoContent)
}
