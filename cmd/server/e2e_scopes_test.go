package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/adapters/mcp"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// Grants as the pin table writes them.
var (
	fullOnly                      = op.Scopes(nil)
	reads                         = op.Reads
	webhooksReads, webhooksWrites = op.ReadsIn(op.ScopeWebhooks), op.WritesIn(op.ScopeWebhooks)
	inboundReads, inboundWrites   = op.ReadsIn(op.ScopeInbound), op.WritesIn(op.ScopeInbound)
	notesReads, notesWrites       = op.ReadsIn(op.ScopeNotes), op.WritesIn(op.ScopeNotes)
	publishes                     = op.WritesIn(op.ScopePublish)
)

// opScopes pins which API key scopes grant every declared op. A new op
// needs its row here: TestEveryOpDeclaresItsScope fails on an op without
// one, so no op gets its grant by accident.
var opScopes = map[string]op.Scopes{
	// The account's own ops: never a scoped key's, so no key climbs to more.
	"owner.me": fullOnly, "owner.change_email": fullOnly, "owner.change_password": fullOnly, "owner.end_sessions": fullOnly,
	"owner.sessions": fullOnly, "owner.end_session": fullOnly, "api_keys.list": fullOnly, "api_keys.issue": fullOnly,
	"api_keys.revoke": fullOnly, "ip_bans.list": fullOnly, "ip_bans.lift": fullOnly, "instance.request_upgrade": fullOnly,

	"webhooks.list": webhooksReads, "webhooks.get": webhooksReads, "webhooks.deliveries": webhooksReads,
	"webhooks.delivery": webhooksReads, "webhooks.endpoint_stats": webhooksReads, "webhooks.event_deliveries": webhooksReads,
	"webhooks.event_fanout": webhooksReads, "webhooks.event_outcomes": webhooksReads, "webhooks.event_types": webhooksReads,
	"webhooks.stats":     webhooksReads,
	"webhooks.attention": webhooksReads,
	"webhooks.create":    webhooksWrites, "webhooks.update": webhooksWrites, "webhooks.delete": webhooksWrites,
	"webhooks.rotate_secret": webhooksWrites, "webhooks.send_test": webhooksWrites, "webhooks.retry_delivery": webhooksWrites,
	"webhooks.resend_delivery": webhooksWrites, "webhooks.redeliver": webhooksWrites, "webhooks.recover": webhooksWrites,

	"inbound_sources.list": inboundReads, "inbound_sources.get": inboundReads, "inbound_sources.stats": inboundReads,
	"inbound_sources.source_stats": inboundReads, "inbound_sources.refusals": inboundReads, "inbound_sources.messages": inboundReads,
	"inbound_sources.message": inboundReads, "inbound_sources.dead_letters": inboundReads,
	"inbound_sources.create": inboundWrites, "inbound_sources.update": inboundWrites, "inbound_sources.delete": inboundWrites,
	"inbound_sources.rotate_secret": inboundWrites, "inbound_sources.replay_dead_letter": inboundWrites,
	"inbound_sources.replay_dead_letters": inboundWrites,
	"supplier_connections.list":           inboundReads, "supplier_connections.get": inboundReads,
	"supplier_connections.create": inboundWrites, "supplier_connections.delete": inboundWrites,

	"notes.list": notesReads, "notes.get": notesReads, "search.admin": notesReads,
	"notes.create": notesWrites, "notes.update": notesWrites, "notes.delete": notesWrites, "notes.publish": notesWrites,
	"notes.unpublish": notesWrites, "notes.move": notesWrites, "vault.import": notesWrites,

	"events.publish": publishes, "events.publish_batch": publishes,
	"events.list": reads, "events.get": reads, "events.poisoned": reads, "jobs.get": reads,
	// Releasing a poisoned event redrives the whole bus, no one area's.
	"events.release": fullOnly,

	// Access decides who sees notes: its reads are read's, its changes a
	// full key's.
	"roles.list": reads, "codes.list": reads, "codes.get": reads, "codes.check": reads, "embeds.list": reads,
	"access_requests.list": reads,
	"roles.create":         fullOnly, "roles.update": fullOnly, "roles.delete": fullOnly, "codes.issue": fullOnly,
	"codes.revoke": fullOnly, "embeds.create": fullOnly, "embeds.delete": fullOnly, "access_requests.approve": fullOnly,
	"access_requests.reject": fullOnly,
	// a new op's scope goes above this line
}

// accountGroups are the op groups no scoped key reaches.
var accountGroups = []string{"owner", "api_keys", "ip_bans", "instance"}

// readsOutsideGET are the ops that only read although their route is not
// a GET (the input is a body).
var readsOutsideGET = []string{"codes.check"}

// TestEveryOpDeclaresItsScope pins every declared op's grant to opScopes,
// and checks the grants against what the routes say: an op granted to
// read is a GET (or listed in readsOutsideGET), every GET outside the
// account is granted to read, an area scope grants exactly its groups'
// ops, and the account's ops no scope at all.
func TestEveryOpDeclaresItsScope(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	area := map[string]op.Scope{"webhooks": op.ScopeWebhooks, "inbound_sources": op.ScopeInbound,
		"supplier_connections": op.ScopeInbound, "notes": op.ScopeNotes, "search": op.ScopeNotes, "vault": op.ScopeNotes}
	seen := map[string]bool{}
	for _, ep := range ts.App.Endpoints {
		m := ep.Descriptor.Meta()
		seen[m.Name] = true
		want, ok := opScopes[m.Name]
		require.True(t, ok, "op %s has no row in opScopes (cmd/server/e2e_scopes_test.go): decide which scopes grant it (op.Meta.Scopes) and pin it there", m.Name)
		require.Equal(t, want, m.Scopes, "op %s's Meta.Scopes", m.Name)
		if slices.Contains(accountGroups, m.Group()) {
			require.Nil(t, m.Scopes, "account op %s must need a full key", m.Name)
			continue
		}
		reads := slices.Contains(m.Scopes, op.ScopeRead)
		readOnly := ep.Method == http.MethodGet || slices.Contains(readsOutsideGET, m.Name)
		require.Equal(t, readOnly, reads, "op %s (%s %s): the read scope grants exactly the ops that only read", m.Name, ep.Method, ep.Path)
		if a, ok := area[m.Group()]; ok {
			require.Contains(t, m.Scopes, a, "op %s belongs to the %s scope", m.Name, a)
		}
		for _, s := range m.Scopes {
			switch s {
			case op.ScopeRead:
			case op.ScopePublish:
				require.Contains(t, []string{"events.publish", "events.publish_batch"}, m.Name, "publish grants only publishing")
			default:
				require.Equal(t, s, area[m.Group()], "op %s is outside the %s scope's groups", m.Name, s)
			}
		}
	}
	for name := range opScopes {
		require.True(t, seen[name], "opScopes pins %s, which no longer exists", name)
	}
}

// scopedKey issues a key with scopes through the REST API with the owner's
// full key and returns the new key.
func scopedKey(t *testing.T, ts *testServer, fullKey string, scopes ...op.Scope) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"name": "scoped " + uuid.NewString()[:6], "scopes": scopes})
	require.NoError(t, err)
	status, resp := ts.do(t, http.MethodPost, "/api/admin/api-keys", fullKey, string(body))
	require.Equal(t, http.StatusCreated, status, resp)
	var k struct {
		Key    string     `json:"key"`
		Scopes []op.Scope `json:"scopes"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp), &k))
	require.ElementsMatch(t, scopes, k.Scopes)
	return k.Key
}

// ownerFootprint counts what an owner holds, so a refused call is seen to
// change nothing.
func ownerFootprint(t *testing.T, ts *testServer, owner uuid.UUID) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"events", "api_keys", "webhook_endpoints", "inbound_sources"} {
		var n int
		require.NoError(t, ts.App.Pool.QueryRow(context.Background(),
			`SELECT count(*) FROM `+table+` WHERE owner_id = $1`, owner).Scan(&n))
		out[table] = n
	}
	return out
}

// toolRefusal calls an MCP tool that must be refused and returns the
// contract error it answers.
func toolRefusal(t *testing.T, cs *sdk.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ToolName(name), Arguments: args})
	require.NoError(t, err)
	d := mcp.ErrorOf(res)
	require.NotNil(t, d, "tool %s must be refused: %s", name, textOf(res))
	require.Contains(t, d.Message, name, "the refusal names the op")
	return d.Code
}

// TestScopedKeysOnRESTAndMCP: an inbound key reads and changes inbound
// sources and nothing else, a read key reads webhooks but changes none, a
// full key does everything, on REST and MCP alike, and every refused call
// is 403 FORBIDDEN_SCOPE and changes nothing.
func TestScopedKeysOnRESTAndMCP(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	owner, full := ts.newOwner(t)
	src := createInboundSource(t, ts, full, "")
	c := &http.Client{Timeout: 30 * time.Second}
	status, resp := send(t, c, hookRequest(t, ts, src, src.key, "msg-1", time.Now(), []byte(`{"type":"hello"}`)))
	require.Equal(t, http.StatusAccepted, status, resp)
	waitAllDone(t, ts, src.ID, 1)
	status, resp = ts.do(t, http.MethodGet, "/api/admin/inbound-sources/"+src.ID+"/messages", full, "")
	require.Equal(t, http.StatusOK, status, resp)
	var msgs struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp), &msgs))
	require.Len(t, msgs.Data, 1)
	msgID := msgs.Data[0].ID

	inbound := scopedKey(t, ts, full, op.ScopeInbound)
	read := scopedKey(t, ts, full, op.ScopeRead)
	before := ownerFootprint(t, ts, owner)

	// The inbound key reads its area on REST…
	status, resp = ts.do(t, http.MethodGet, "/api/admin/inbound-sources", inbound, "")
	require.Equal(t, http.StatusOK, status, resp)
	require.Contains(t, resp, src.ID)
	status, resp = ts.do(t, http.MethodGet, "/api/admin/inbound-sources/"+src.ID+"/messages/"+msgID, inbound, "")
	require.Equal(t, http.StatusOK, status, resp)
	require.Contains(t, resp, msgID)
	// …and is refused outside it, naming the scope it would need.
	refusals := []struct{ method, path, body, op, needs string }{
		{http.MethodGet, "/api/admin/webhooks", "", "webhooks.list", "read or webhooks"},
		{http.MethodPost, "/api/admin/events", publishBody("b_scope", ""), "events.publish", "publish"},
		{http.MethodPost, "/api/admin/api-keys", `{"name":"escalate"}`, "api_keys.issue", "full API key"},
		{http.MethodPost, "/api/admin/webhooks", `{"url":"https://example.com/h","event_types":["*"]}`, "webhooks.create", "webhooks"},
	}
	for _, r := range refusals {
		status, resp := ts.do(t, r.method, r.path, inbound, r.body)
		require.Equal(t, http.StatusForbidden, status, "%s: %s", r.op, resp)
		require.Equal(t, op.CodeForbiddenScope, errCode(t, resp), r.op)
		require.Contains(t, resp, r.op, "the message names the op")
		require.Contains(t, resp, r.needs, "the message names the scope needed")
	}

	// The same on MCP, whose tool list shows a scoped key only its tools.
	cs := mcpSession(t, ts, inbound)
	toolNames := func(cs *sdk.ClientSession) []string {
		t.Helper()
		res, err := cs.ListTools(t.Context(), nil)
		require.NoError(t, err)
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		return names
	}
	inboundTools := toolNames(cs)
	require.Contains(t, inboundTools, mcp.ToolName("inbound_sources.list"))
	require.Contains(t, inboundTools, mcp.ToolName("inbound_sources.message"))
	require.NotContains(t, inboundTools, mcp.ToolName("webhooks.list"))
	require.NotContains(t, inboundTools, mcp.ToolName("api_keys.issue"))
	type listed struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	list := callTool[listed](t, cs, mcp.ToolName("inbound_sources.list"), map[string]any{})
	require.Len(t, list.Data, 1)
	require.Equal(t, src.ID, list.Data[0].ID)
	got := callTool[struct {
		ID string `json:"id"`
	}](t, cs, mcp.ToolName("inbound_sources.message"), map[string]any{"id": src.ID, "message_id": msgID})
	require.Equal(t, msgID, got.ID)
	require.Equal(t, op.CodeForbiddenScope, toolRefusal(t, cs, "webhooks.list", map[string]any{}))
	require.Equal(t, op.CodeForbiddenScope, toolRefusal(t, cs, "events.publish",
		map[string]any{"type": "booking.created", "subject": "booking://b_mcp", "data": map[string]any{"booking_id": "b_mcp", "starts_at": "2026-12-08T09:30:00Z"}}))
	require.Equal(t, op.CodeForbiddenScope, toolRefusal(t, cs, "api_keys.issue", map[string]any{"name": "escalate"}))

	// The read key lists webhooks but creates none, on both surfaces.
	status, resp = ts.do(t, http.MethodGet, "/api/admin/webhooks", read, "")
	require.Equal(t, http.StatusOK, status, resp)
	status, resp = ts.do(t, http.MethodPost, "/api/admin/webhooks", read, `{"url":"https://example.com/h","event_types":["*"]}`)
	require.Equal(t, http.StatusForbidden, status, resp)
	require.Equal(t, op.CodeForbiddenScope, errCode(t, resp))
	status, resp = ts.do(t, http.MethodGet, "/api/admin/api-keys", read, "")
	require.Equal(t, http.StatusForbidden, status, "the read scope does not reach the account's own reads: %s", resp)
	readMCP := mcpSession(t, ts, read)
	callTool[json.RawMessage](t, readMCP, mcp.ToolName("webhooks.list"), map[string]any{})
	require.Equal(t, op.CodeForbiddenScope, toolRefusal(t, readMCP, "webhooks.create",
		map[string]any{"url": "https://example.com/h", "event_types": []string{"*"}}))

	require.Equal(t, before, ownerFootprint(t, ts, owner), "no refused call stored or recorded anything")

	// The full key does all of it.
	status, resp = ts.do(t, http.MethodPost, "/api/admin/events", full, publishBody("b_full", ""))
	require.Equal(t, http.StatusAccepted, status, resp)
	status, resp = ts.do(t, http.MethodPost, "/api/admin/webhooks", full, `{"url":"https://example.com/h","event_types":["*"]}`)
	require.Equal(t, http.StatusCreated, status, resp)
	status, resp = ts.do(t, http.MethodGet, "/api/admin/webhooks", full, "")
	require.Equal(t, http.StatusOK, status, resp)
	fullMCP := mcpSession(t, ts, full)
	fullTools := toolNames(fullMCP)
	require.Contains(t, fullTools, mcp.ToolName("webhooks.list"))
	require.Contains(t, fullTools, mcp.ToolName("api_keys.issue"))
	require.Greater(t, len(fullTools), len(inboundTools), "a full key lists every tool")
	callTool[json.RawMessage](t, fullMCP, mcp.ToolName("inbound_sources.message"), map[string]any{"id": src.ID, "message_id": msgID})
	issued := callTool[struct {
		Key string `json:"key"`
	}](t, fullMCP, mcp.ToolName("api_keys.issue"), map[string]any{"name": "from mcp", "scopes": []string{"publish"}})
	require.True(t, strings.HasPrefix(issued.Key, "smk_"))
	after := ownerFootprint(t, ts, owner)
	require.Equal(t, before["webhook_endpoints"]+1, after["webhook_endpoints"])
	require.Equal(t, before["api_keys"]+1, after["api_keys"])

	// The list shows each key's scopes, null for a full one.
	status, resp = ts.do(t, http.MethodGet, "/api/admin/api-keys", full, "")
	require.Equal(t, http.StatusOK, status, resp)
	var keys struct {
		Data []struct {
			Name   string          `json:"name"`
			Scopes json.RawMessage `json:"scopes"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp), &keys))
	byName := map[string]string{}
	for _, k := range keys.Data {
		byName[k.Name] = string(k.Scopes)
	}
	require.Equal(t, "null", byName["e2e"], "the full key: %s", resp)
	require.Equal(t, `["publish"]`, byName["from mcp"], resp)
}

// TestAPIKeyIssueRefusesBadScopes: unknown, repeated and empty scopes are
// 400 INVALID_SCOPES naming the field, and store no key.
func TestAPIKeyIssueRefusesBadScopes(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	owner, full := ts.newOwner(t)
	before := ownerFootprint(t, ts, owner)
	for body, field := range map[string]string{
		`{"name":"x","scopes":[]}`:                   "scopes",
		`{"name":"x","scopes":["admin"]}`:            "scopes[0]",
		`{"name":"x","scopes":["read","read"]}`:      "scopes[1]",
		`{"name":"x","scopes":["notes","Webhooks"]}`: "scopes[1]",
	} {
		status, resp := ts.do(t, http.MethodPost, "/api/admin/api-keys", full, body)
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", body, resp)
		var e struct {
			Error struct{ Code, Field string } `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(resp), &e))
		require.Equal(t, "INVALID_SCOPES", e.Error.Code, body)
		require.Equal(t, field, e.Error.Field, body)
	}
	require.Equal(t, before, ownerFootprint(t, ts, owner))
}

// TestScopedKeysOnTheRoutesBesideTheOps: the vault import's own handler,
// River's UI and /metrics apply the same rule as the ops.
func TestScopedKeysOnTheRoutesBesideTheOps(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	_, full := ts.newOwner(t)
	webhooks := scopedKey(t, ts, full, op.ScopeWebhooks)
	notes := scopedKey(t, ts, full, op.ScopeNotes)
	body := `{"notes":[{"genre":"wiki","title":"Scoped import"}]}`
	status, resp := ts.do(t, http.MethodPost, "/api/admin/vault/import", webhooks, body)
	require.Equal(t, http.StatusForbidden, status, resp)
	require.Equal(t, op.CodeForbiddenScope, errCode(t, resp))
	status, resp = ts.do(t, http.MethodPost, "/api/admin/vault/import", notes, body)
	require.Equal(t, http.StatusCreated, status, resp)

	status, resp = ts.do(t, http.MethodGet, "/admin/tasks", webhooks, "")
	require.Equal(t, http.StatusForbidden, status, resp)
	require.Equal(t, op.CodeForbiddenScope, errCode(t, resp))
}

// TestAdminAPIKeysPageIssuesScopedKeys: the API keys page offers the scopes
// as checkboxes, issues a key limited to the ticked ones (a full key when
// none is ticked), lists each key's scopes, keeps the ticks when the form
// comes back with an error, and the issued key is limited on REST.
func TestAdminAPIKeysPageIssuesScopedKeys(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	o := ts.newOwnerAccount(t)
	ui := signIn(t, ts, o)

	status, body, _ := ui.get(t, "/admin/api-keys")
	require.Equal(t, http.StatusOK, status, body)
	for _, s := range op.AllScopes {
		require.Contains(t, body, `<input type="checkbox" name="scopes" value="`+string(s)+`">`, "a checkbox per scope, none ticked")
	}
	require.Contains(t, body, "Full access")

	status, body, _ = ui.post(t, "/admin/api-keys", url.Values{"name": {"inbox bot"}, "scopes": {"inbound", "read"}})
	require.Equal(t, http.StatusCreated, status, body)
	require.Contains(t, body, "Scopes: <strong>read</strong>, <strong>inbound</strong>.")
	m := regexp.MustCompile(`value="(smk_[^"]+)"`).FindStringSubmatch(body)
	require.NotNil(t, m, body)
	scoped := m[1]
	status, resp := ts.do(t, http.MethodGet, "/api/admin/inbound-sources", scoped, "")
	require.Equal(t, http.StatusOK, status, resp)
	status, resp = ts.do(t, http.MethodPost, "/api/admin/webhooks", scoped, `{"url":"https://example.com/h","event_types":["*"]}`)
	require.Equal(t, http.StatusForbidden, status, resp)
	require.Equal(t, op.CodeForbiddenScope, errCode(t, resp))

	status, body, _ = ui.post(t, "/admin/api-keys", url.Values{"name": {"everything"}})
	require.Equal(t, http.StatusCreated, status, body)
	require.Contains(t, body, "Scopes: <strong>full access</strong>.")

	status, body, _ = ui.post(t, "/admin/api-keys", url.Values{"name": {"typo"}, "scopes": {"notes", "admin"}})
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, `unknown scope &#34;admin&#34;`)
	require.Contains(t, body, `value="notes" checked>`, "the ticks come back with the error")

	status, body, _ = ui.get(t, "/admin/api-keys")
	require.Equal(t, http.StatusOK, status, body)
	rows := regexp.MustCompile(`(?s)<tr class="api-key".*?</tr>`).FindAllString(body, -1)
	scopesOf := map[string]string{}
	for _, r := range rows {
		name := regexp.MustCompile(`data-label="Name" class="break">([^<]+)<`).FindStringSubmatch(r)
		cell := regexp.MustCompile(`(?s)data-label="Scopes" class="scopes">(.*?)</td>`).FindStringSubmatch(r)
		require.NotNil(t, name, r)
		require.NotNil(t, cell, r)
		scopesOf[name[1]] = regexp.MustCompile(`<[^>]+>`).ReplaceAllString(cell[1], "")
	}
	require.Equal(t, map[string]string{"inbox bot": "read, inbound", "everything": "Full access", "e2e": "Full access"}, scopesOf)
}

// TestScopedOperatorKeysOnMetricsAndTasks: the operator's key with read
// scrapes /metrics, one without read is refused, and no scoped key of the
// operator reaches River's UI, which changes every owner's jobs.
func TestScopedOperatorKeysOnMetricsAndTasks(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{})
	full := ts.operatorKey(t)
	read := scopedKey(t, ts, full, op.ScopeRead)
	publish := scopedKey(t, ts, full, op.ScopePublish)

	status, body := ts.do(t, http.MethodGet, "/metrics", read, "")
	require.Equal(t, http.StatusOK, status, body)
	status, body = ts.do(t, http.MethodGet, "/metrics", publish, "")
	require.Equal(t, http.StatusForbidden, status, body)
	require.Equal(t, op.CodeForbiddenScope, errCode(t, body))

	status, body = ts.do(t, http.MethodGet, "/admin/tasks/api/queues", read, "")
	require.Equal(t, http.StatusForbidden, status, body)
	require.Equal(t, op.CodeForbiddenScope, errCode(t, body))
	status, body = ts.do(t, http.MethodGet, "/admin/tasks/api/queues", full, "")
	require.Equal(t, http.StatusOK, status, "the operator's full key still reaches River's UI: %s", body)
}
