package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/mcp"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// bearerTransport adds an API key to every request of the MCP client.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the SDK's client to the server's /mcp with key.
func mcpSession(t *testing.T, ts *testServer, key string) *sdk.ClientSession {
	t.Helper()
	cs, err := mcpConnect(ts, key)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func mcpConnect(ts *testServer, key string) (*sdk.ClientSession, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "standmeet-e2e", Version: "v0"}, nil)
	return client.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint:             ts.URL + mcp.Path,
		HTTPClient:           &http.Client{Transport: bearerTransport{key: key}, Timeout: 30 * time.Second},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}, nil)
}

// hookSink is a loopback webhook receiver that keeps what it gets.
type hookSink struct {
	*httptest.Server
	mu  sync.Mutex
	got []sunk
}

type sunk struct {
	Header http.Header
	Body   []byte
}

func newHookSink(t *testing.T) *hookSink {
	t.Helper()
	r := &hookSink{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		r.mu.Lock()
		r.got = append(r.got, sunk{Header: req.Header.Clone(), Body: body})
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *hookSink) all() []sunk {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sunk(nil), r.got...)
}

// callTool calls a tool and decodes its JSON result; a tool error fails.
func callTool[T any](t *testing.T, cs *sdk.ClientSession, name string, args any) T {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, "tool %s: %v", name, textOf(res))
	var out T
	require.NoError(t, json.Unmarshal([]byte(textOf(res)), &out))
	return out
}

func textOf(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

type mcpDelivery struct {
	JobID      int64   `json:"job_id"`
	EventID    string  `json:"event_id"`
	EventType  string  `json:"event_type"`
	State      string  `json:"state"`
	Attempt    int     `json:"attempt"`
	StatusCode *int    `json:"status_code"`
	TaskURL    string  `json:"task_url"`
	LastError  *string `json:"last_error"`
}

func TestMCPToolsDriveWebhooks(t *testing.T) {
	t.Parallel()
	ts := startTestServer(t, testServerOptions{Env: map[string]string{"STANDMEET_EGRESS_ALLOW": "127.0.0.0/8"}})
	o := newSurfaceOwner(t, ts)
	recv := newHookSink(t)

	_, err := mcpConnect(ts, "smk_not_a_key")
	require.Error(t, err, "no tools without an API key")

	cs := mcpSession(t, ts, o.Key)
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	byName := map[string]*sdk.Tool{}
	for _, tool := range list.Tools {
		byName[tool.Name] = tool
	}
	for _, name := range []string{"webhooks_create", "webhooks_send_test", "webhooks_deliveries", "webhooks_redeliver",
		"inbound_sources_create", "inbound_sources_dead_letters", "inbound_sources_replay_dead_letter", "events_poisoned", "events_release"} {
		require.Contains(t, byName, name)
	}
	// The instructions name the tools as they are.
	instructions := cs.InitializeResult().Instructions
	require.Contains(t, instructions, "the op webhooks.list is the tool `webhooks_list`")
	for _, c := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(instructions, -1) {
		require.Contains(t, byName, c[1], "the instructions cite %s, which is no tool", c[1])
	}
	require.NotRegexp(t, "`[a-z_]+\\.[a-z_]+`", instructions, "no op name is cited as a tool")
	create := byName["webhooks_create"]
	require.Equal(t, "webhooks.create", create.Meta[mcp.MetaOp])
	props := create.InputSchema.(map[string]any)["properties"].(map[string]any)
	require.Contains(t, props, "url")
	require.Contains(t, props, "event_types")

	type endpoint struct {
		ID     string `json:"id"`
		URL    string `json:"url"`
		Secret string `json:"secret"`
	}
	ep := callTool[endpoint](t, cs, "webhooks_create", map[string]any{"url": recv.URL + "/hook", "event_types": []string{"webhook.test"}})
	require.True(t, strings.HasPrefix(ep.Secret, "whsec_"))

	type testSent struct {
		EventID string `json:"event_id"`
		JobID   int64  `json:"job_id"`
	}
	sent := callTool[testSent](t, cs, "webhooks_send_test", map[string]any{"id": ep.ID})
	require.NotZero(t, sent.JobID)

	// The delivery reaches the hookSink, signed with the endpoint's secret,
	// and the log read through MCP says so.
	var row mcpDelivery
	require.Eventually(t, func() bool {
		page := callTool[struct {
			Data []mcpDelivery `json:"data"`
		}](t, cs, "webhooks_deliveries", map[string]any{"id": ep.ID})
		for _, d := range page.Data {
			if d.JobID == sent.JobID && d.State == "completed" {
				row = d
				return true
			}
		}
		return false
	}, 30*time.Second, 100*time.Millisecond, "the test delivery never completed")
	require.Equal(t, sent.EventID, row.EventID)
	require.Equal(t, "webhook.test", row.EventType)
	require.Equal(t, "/admin/tasks?job="+decimal(sent.JobID), row.TaskURL)
	require.NotNil(t, row.StatusCode)
	require.Equal(t, http.StatusNoContent, *row.StatusCode)

	got := recv.all()
	require.NotEmpty(t, got)
	key, err := standardwebhooks.ParseSecret(ep.Secret)
	require.NoError(t, err)
	v, err := standardwebhooks.NewVerifier(5*time.Minute, key)
	require.NoError(t, err)
	msgID, _, err := v.Verify(got[0].Header, got[0].Body, time.Now())
	require.NoError(t, err)
	require.Equal(t, sent.EventID, msgID)

	// Errors are tool errors with the contract's codes.
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "webhooks_get", Arguments: map[string]any{"id": uuid.NewString()}})
	require.NoError(t, err)
	e := mcp.ErrorOf(res)
	require.NotNil(t, e, textOf(res))
	require.Equal(t, "NOT_FOUND", e.Code)
	res, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "webhooks_create", Arguments: map[string]any{"url": "ftp://x", "event_types": []string{"webhook.test"}}})
	require.NoError(t, err)
	e = mcp.ErrorOf(res)
	require.NotNil(t, e, textOf(res))
	require.Equal(t, "INVALID_URL", e.Code)

	// Another owner's key sees none of it.
	other := newSurfaceOwner(t, ts)
	ocs := mcpSession(t, ts, other.Key)
	res, err = ocs.CallTool(context.Background(), &sdk.CallToolParams{Name: "webhooks_deliveries", Arguments: map[string]any{"id": ep.ID}})
	require.NoError(t, err)
	e = mcp.ErrorOf(res)
	require.NotNil(t, e)
	require.Equal(t, "NOT_FOUND", e.Code)
}

func decimal(n int64) string { return strconv.FormatInt(n, 10) }
