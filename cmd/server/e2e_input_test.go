package main

// The input gate every op shares, on REST and MCP alike (op.DecodeJSON and
// op.Check): NUL bytes and invalid UTF-8 refused with 400 naming the field,
// trailing data refused, limits out of range refused naming the range; no
// row written and nothing logged at error level.

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/mcp"
)

func TestInputGateOnRESTAndMCP(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	o := ts.newOwnerAccount(t)
	cs := mcpSession(t, ts, o.Key)
	count := func() (keys, events int) {
		t.Helper()
		require.NoError(t, ts.App.Pool.QueryRow(context.Background(),
			`SELECT (SELECT count(*) FROM api_keys WHERE owner_id = $1), (SELECT count(*) FROM events WHERE owner_id = $1)`, o.ID).Scan(&keys, &events))
		return keys, events
	}
	keys0, events0 := count()
	detail := func(t *testing.T, body string) httpapi.ErrorDetail {
		t.Helper()
		var e httpapi.ErrorBody
		require.NoError(t, json.Unmarshal([]byte(body), &e), body)
		return e.Error
	}

	rest := []struct {
		name, method, path, body, code, field, says string
	}{
		{"NUL in a key name", http.MethodPost, "/api/admin/api-keys", `{"name":"a\u0000b"}`, "INVALID_INPUT", "name", "NUL"},
		{"invalid UTF-8 in a key name", http.MethodPost, "/api/admin/api-keys", "{\"name\":\"a\xffb\"}", "INVALID_INPUT", "name", "UTF-8"},
		{"NUL in an upgrade note", http.MethodPost, "/api/admin/instance/upgrade-request", `{"note":"\u0000"}`, "INVALID_INPUT", "note", "NUL"},
		{"NUL in a vault import", http.MethodPost, "/api/admin/vault/import", `{"notes":[{"genre":"wiki","title":"t","body":"x\u0000"}]}`, "INVALID_INPUT", "notes[0].body", "NUL"},
		{"NUL in a list element", http.MethodPost, "/api/admin/webhooks", `{"url":"https://example.com/h","event_types":["code.*","\u0000"]}`, "INVALID_INPUT", "event_types[1]", "NUL"},
		{"trailing word", http.MethodPost, "/api/admin/api-keys", `{"name":"trailing"} xyz`, "INVALID_JSON", "", "trailing"},
		{"second object", http.MethodPost, "/api/admin/api-keys", `{"name":"first"}{"name":"second"}`, "INVALID_JSON", "", "trailing"},
		{"limit too large", http.MethodGet, "/api/admin/ip-bans?limit=500", "", "INVALID_RANGE", "limit", "between 1 and 200"},
		{"limit negative", http.MethodGet, "/api/admin/events/poisoned?limit=-1", "", "INVALID_RANGE", "limit", "between 1 and 200"},
		{"NUL in a query parameter", http.MethodGet, "/api/admin/ip-bans?cursor=%00", "", "INVALID_INPUT", "cursor", "NUL"},
		// The public routes share the gate.
		{"NUL in a public access request", http.MethodPost, "/api/access-requests", `{"name":"Vis\u0000itor","email":"v@example.com","message":"hi"}`, "INVALID_INPUT", "name", "NUL"},
		{"trailing data on a public route", http.MethodPost, "/api/access/redeem", `{"code":"x"}{}`, "INVALID_JSON", "", "trailing"},
		// A single-line field holds no control character but tab; raw
		// JSON holds no lone surrogate; a glob is in its one canonical form.
		{"a lone surrogate in an endpoint's description", http.MethodPost, "/api/admin/webhooks", `{"url":"https://example.com/h","event_types":["*"],"description":"a\ud800b"}`, "INVALID_INPUT", "description", "surrogate"},
		{"a lone low surrogate in a key name", http.MethodPost, "/api/admin/api-keys", `{"name":"\udc00"}`, "INVALID_INPUT", "name", "surrogate"},
		{"a lone surrogate in a multi-line field", http.MethodPost, "/api/admin/instance/upgrade-request", `{"note":"line\n\ud83d"}`, "INVALID_INPUT", "note", "surrogate"},
		{"a lone surrogate in published data", http.MethodPost, "/api/admin/events", `{"type":"booking.cancelled","subject":"booking://b_1","data":{"booking_id":"\ud800"}}`, "INVALID_INPUT", "data.booking_id", "surrogate"},
		{"CR LF after an event type", http.MethodPost, "/api/admin/webhooks", `{"url":"https://example.com/h","event_types":["webhook.test\r\n"]}`, "INVALID_INPUT", "event_types[0]", "U+000D"},
		{"a second spelling of *", http.MethodPost, "/api/admin/webhooks", `{"url":"https://example.com/h","event_types":["**"]}`, "INVALID_INPUT", "event_types[0]", "canonical"},
		{"a run of stars in a glob", http.MethodPost, "/api/admin/webhooks", `{"url":"https://example.com/h","event_types":["code.**"]}`, "INVALID_INPUT", "event_types[0]", "canonical"},
		{"space around a role's URI glob", http.MethodPost, "/api/admin/roles", `{"name":"r","uri_globs":["wiki://* "]}`, "INVALID_INPUT", "uri_globs[0]", "canonical"},
		{"an escape sequence in a description", http.MethodPost, "/api/admin/webhooks", `{"url":"https://example.com/h","event_types":["*"],"description":"\u001b[2J"}`, "INVALID_INPUT", "description", "U+001B"},
		{"CR in a query parameter", http.MethodGet, "/api/admin/ip-bans?cursor=a%0Db", "", "INVALID_INPUT", "cursor", "U+000D"},
		{"a control character in a public access request's name", http.MethodPost, "/api/access-requests", `{"name":"Vis\u0007itor","email":"v@example.com"}`, "INVALID_INPUT", "name", "U+0007"},
	}
	for _, c := range rest {
		status, body := ts.do(t, c.method, c.path, o.Key, c.body)
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", c.name, body)
		d := detail(t, body)
		require.Equal(t, c.code, d.Code, c.name)
		require.Equal(t, c.field, d.Field, c.name)
		require.Contains(t, d.Message, c.says, c.name)
	}

	tools := []struct {
		name, tool  string
		args        map[string]any
		code, field string
	}{
		{"NUL in a key name", "api_keys.issue", map[string]any{"name": "a\x00b"}, "INVALID_INPUT", "name"},
		{"NUL in an upgrade note", "instance.request_upgrade", map[string]any{"note": "\x00"}, "INVALID_INPUT", "note"},
		{"limit too large", "ip_bans.list", map[string]any{"limit": 1000}, "INVALID_RANGE", "limit"},
		{"CR LF after an event type", "webhooks.create", map[string]any{"url": "https://example.com/h", "event_types": []string{"webhook.test\r\n"}}, "INVALID_INPUT", "event_types[0]"},
		{"a second spelling of *", "webhooks.create", map[string]any{"url": "https://example.com/h", "event_types": []string{"**"}}, "INVALID_INPUT", "event_types[0]"},
		{"an escape sequence in a description", "webhooks.create", map[string]any{"url": "https://example.com/h", "event_types": []string{"*"}, "description": "\x1b[2J"}, "INVALID_INPUT", "description"},
		{"a run of stars in a role's URI glob", "roles.create", map[string]any{"name": "r", "uri_globs": []string{"wiki://**"}}, "INVALID_INPUT", "uri_globs[0]"},
	}
	for _, c := range tools {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ToolName(c.tool), Arguments: c.args})
		require.NoError(t, err, c.name)
		d := mcp.ErrorOf(res)
		require.NotNil(t, d, "%s: %s", c.name, textOf(res))
		require.Equal(t, c.code, d.Code, c.name)
		require.Equal(t, c.field, d.Field, c.name)
	}

	// A lone surrogate escape, which the SDK's client cannot send (a Go
	// string holds no surrogate), goes as raw JSON-RPC.
	for _, c := range []struct{ name, args, field string }{
		{"in an endpoint's description", `{"url":"https://example.com/h","event_types":["*"],"description":"a\ud800"}`, "description"},
		{"in published data", `{"type":"booking.cancelled","subject":"booking://b_1","data":{"booking_id":"\udfff"}}`, "data.booking_id"},
	} {
		tool := map[string]string{"description": "webhooks_create", "data.booking_id": "events_publish"}[c.field]
		d := rawToolError(t, ts, o.Key, `{"name":"`+tool+`","arguments":`+c.args+`}`)
		require.Equal(t, "INVALID_INPUT", d.Code, c.name)
		require.Equal(t, c.field, d.Field, c.name)
	}

	var endpoints, roles int
	require.NoError(t, ts.App.Pool.QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM webhook_endpoints WHERE owner_id = $1), (SELECT count(*) FROM access_roles WHERE owner_id = $1)`, o.ID).Scan(&endpoints, &roles))
	require.Zero(t, endpoints, "a refused input stored an endpoint")
	require.Zero(t, roles, "a refused input stored a role")
	keys, events := count()
	require.Equal(t, keys0, keys, "a refused input wrote an API key")
	require.Equal(t, events0, events, "a refused input recorded an event")
	require.Empty(t, ts.Logs.FilterLevelExact(zap.ErrorLevel).All(), "bad input is not an error of the server")
}

// TestMCPRefusesInvalidUTF8InArguments: raw bytes that are not UTF-8 in a
// tool's arguments (which no JSON encoder writes, so the SDK's client cannot
// send them) are refused naming the argument, as on REST.
func TestMCPRefusesInvalidUTF8InArguments(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	o := ts.newOwnerAccount(t)
	d := rawToolError(t, ts, o.Key, "{\"name\":\"api_keys_issue\",\"arguments\":{\"name\":\"a\xffb\"}}")
	require.Equal(t, "INVALID_INPUT", d.Code)
	require.Equal(t, "name", d.Field)
	var keys int
	require.NoError(t, ts.App.Pool.QueryRow(context.Background(), `SELECT count(*) FROM api_keys WHERE owner_id = $1`, o.ID).Scan(&keys))
	require.Equal(t, 1, keys, "no key was issued")
}

// rawToolError sends one tools/call as raw JSON-RPC (params as given, bytes
// no JSON encoder writes included) and returns the contract's error of the
// tool error it must answer: a tool result, never a JSON-RPC error.
func rawToolError(t *testing.T, ts *testServer, key, params string) *httpapi.ErrorDetail {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`
	req, err := http.NewRequest(http.MethodPost, ts.URL+mcp.Path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var rpc struct {
		Result *sdk.CallToolResult `json:"result"`
		Error  json.RawMessage     `json:"error"`
	}
	require.NoError(t, json.Unmarshal(raw, &rpc), string(raw))
	require.Nil(t, rpc.Error, string(raw))
	require.NotNil(t, rpc.Result, string(raw))
	d := mcp.ErrorOf(rpc.Result)
	require.NotNil(t, d, string(raw))
	return d
}

// TestAdminFormsShareTheInputGate: the endpoint form refuses what the
// REST and MCP gate refuses, naming the field, and stores nothing.
func TestAdminFormsShareTheInputGate(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	o := ts.newOwnerAccount(t)
	u := signIn(t, ts, o)
	for _, c := range []struct {
		name string
		form url.Values
		says string
	}{
		{"an escape sequence in the description", url.Values{"url": {"https://example.com/h"}, "event_types": {"webhook.test"}, "description": {"a\x1b[2Jb"}}, "description: contains the control character U+001B"},
		{"a second spelling of *", url.Values{"url": {"https://example.com/h"}, "globs": {"**"}}, "event_types[0]: the glob"},
		{"CR LF in a checkbox value", url.Values{"url": {"https://example.com/h"}, "event_types": {"webhook.test\r\n"}}, "event_types[0]: contains the control character U+000D"},
	} {
		status, body, _ := u.post(t, "/admin/webhooks", c.form)
		require.Equal(t, http.StatusBadRequest, status, c.name)
		require.Contains(t, html.UnescapeString(body), c.says, c.name)
	}
	var endpoints int
	require.NoError(t, ts.App.Pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_endpoints WHERE owner_id = $1`, o.ID).Scan(&endpoints))
	require.Zero(t, endpoints, "a refused form stored an endpoint")
}
