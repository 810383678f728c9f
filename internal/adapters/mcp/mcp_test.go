package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/mcp"
	"github.com/standmeet/standmeet/internal/adapters/openapi/optest"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

type bundle struct {
	url     string
	handler *mcp.Handler
	ops     op.Set
}

// setup serves the test op set at /mcp with an authenticator that knows two
// keys, one per owner.
func setup(t *testing.T) bundle {
	t.Helper()
	owners := map[string]uuid.UUID{"key-a": uuid.New(), "key-b": uuid.New()}
	auth := httpapi.AuthenticatorFunc(func(r *http.Request) (op.Caller, error) {
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if id, known := owners[key]; ok && known {
			return op.Caller{OwnerID: id}, nil
		}
		return op.Caller{}, domain.Unauthorized("UNAUTHORIZED", "no or bad credentials")
	})
	eps := optest.Endpoints()
	ops := eps.Ops()
	h, err := mcp.New(eps, auth, zap.NewNop(), mcp.Options{Version: "test"})
	require.NoError(t, err)
	e := echo.New()
	h.Mount(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return bundle{url: srv.URL + mcp.Path, handler: h, ops: ops}
}

type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(r)
}

func connect(t *testing.T, url, key string) (*sdk.ClientSession, error) {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil)
	transport := &sdk.StreamableClientTransport{
		Endpoint:             url,
		HTTPClient:           &http.Client{Transport: bearer{key: key, base: http.DefaultTransport}},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}
	cs, err := client.Connect(context.Background(), transport, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func call(t *testing.T, cs *sdk.ClientSession, tool string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
	return res
}

func decode[T any](t *testing.T, res *sdk.CallToolResult) T {
	t.Helper()
	require.False(t, res.IsError, "tool error: %v", res.Content)
	var v T
	require.Len(t, res.Content, 1)
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &v))
	return v
}

func TestToolName(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"webhooks.create":        "webhooks_create",
		"webhooks.rotate_secret": "webhooks_rotate_secret",
		"events.poisoned":        "events_poisoned",
		"plain":                  "plain",
	}
	for in, want := range cases {
		require.Equal(t, want, mcp.ToolName(in))
	}
}

func TestOneToolPerOwnerOp(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs, err := connect(t, b.url, "key-a")
	require.NoError(t, err)
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	got := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool
	}
	for _, d := range b.ops {
		m := d.Meta()
		tool, ok := got[mcp.ToolName(m.Name)]
		if m.Public {
			require.False(t, ok, "public op %s must not be a tool", m.Name)
			continue
		}
		require.True(t, ok, "op %s has no tool", m.Name)
		require.Equal(t, m.Name, tool.Meta[mcp.MetaOp])
		require.Contains(t, tool.Description, m.Summary)
		schema := tool.InputSchema.(map[string]any)
		require.Equal(t, "object", schema["type"])
	}
	require.Len(t, res.Tools, len(b.ops)-1)
	create := got["things_create"].InputSchema.(map[string]any)
	require.Equal(t, []any{"name"}, create["required"])
	require.Equal(t, false, create["additionalProperties"])
	require.Contains(t, got["things_get"].InputSchema.(map[string]any)["properties"], "id")
	require.True(t, got["things_list"].Annotations.ReadOnlyHint)
	require.NotNil(t, got["things_get"].OutputSchema)
	require.Nil(t, got["things_delete"].OutputSchema)
}

func TestToolsCallTheOpsAsTheCaller(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a, err := connect(t, b.url, "key-a")
	require.NoError(t, err)
	other, err := connect(t, b.url, "key-b")
	require.NoError(t, err)

	created := decode[optest.Thing](t, call(t, a, "things_create", map[string]any{"name": "alpha", "labels": map[string]string{"k": "v"}}))
	require.Equal(t, "alpha", created.Name)
	require.Equal(t, map[string]string{"k": "v"}, created.Labels)

	res := call(t, a, "things_get", map[string]any{"id": created.ID})
	require.NotNil(t, res.StructuredContent)
	require.Equal(t, created.ID, decode[optest.Thing](t, res).ID)

	page := decode[op.Page[optest.Thing]](t, call(t, a, "things_list", map[string]any{"limit": 10}))
	require.Len(t, page.Data, 1)

	// The other owner's key sees nothing of it: the caller is the one
	// authenticated on the request.
	require.Empty(t, decode[op.Page[optest.Thing]](t, call(t, other, "things_list", nil)).Data)
	e := mcp.ErrorOf(call(t, other, "things_get", map[string]any{"id": created.ID}))
	require.NotNil(t, e)
	require.Equal(t, "THING_NOT_FOUND", e.Code)

	renamed := decode[optest.Thing](t, call(t, a, "things_update", map[string]any{"id": created.ID, "name": "beta"}))
	require.Equal(t, "beta", renamed.Name)
	require.False(t, call(t, a, "things_delete", map[string]any{"id": created.ID}).IsError)
}

func TestToolErrorsCarryTheContractCodes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs, err := connect(t, b.url, "key-a")
	require.NoError(t, err)
	cases := []struct {
		name  string
		tool  string
		args  any
		code  string
		field string
	}{
		{"domain validation", "things_create", map[string]any{"name": ""}, "NAME_REQUIRED", "name"},
		{"missing argument", "things_create", nil, "NAME_REQUIRED", "name"},
		{"unknown argument", "things_create", map[string]any{"name": "x", "nope": 1}, "INVALID_ARGUMENTS", ""},
		{"wrong type", "things_create", map[string]any{"name": 5}, "INVALID_ARGUMENTS", "name"},
		{"malformed id", "things_get", map[string]any{"id": "nope"}, "INVALID_ARGUMENTS", ""},
		{"not found", "things_get", map[string]any{"id": uuid.New()}, "THING_NOT_FOUND", ""},
		{"internal error hides its text", "things_fail", nil, "INTERNAL", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := call(t, cs, c.tool, c.args)
			require.True(t, res.IsError)
			e := mcp.ErrorOf(res)
			require.NotNil(t, e, "content %v", res.Content)
			require.Equal(t, c.code, e.Code)
			require.Equal(t, c.field, e.Field)
			require.NotContains(t, e.Message, "10.1.2.3")
		})
	}
}

func TestMCPNeedsCredentials(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := connect(t, b.url, "wrong")
	require.Error(t, err)

	req, err := http.NewRequest(http.MethodPost, b.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
	var body httpapi.ErrorBody
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, "UNAUTHORIZED", body.Error.Code)
}

func TestNewRefusesCollidingToolNames(t *testing.T) {
	t.Parallel()
	noop := func(context.Context, op.Caller, op.Empty) (op.Empty, error) { return op.Empty{}, nil }
	ops := op.Set{
		op.New(op.Meta{Name: "a.b_c"}, noop),
		op.New(op.Meta{Name: "a_b.c"}, noop),
	}
	eps, err := httpapi.Bind(ops, []httpapi.Route{
		{Method: http.MethodPost, Path: "/x", Op: "a.b_c"},
		{Method: http.MethodPost, Path: "/y", Op: "a_b.c"},
	})
	require.NoError(t, err)
	_, err = mcp.New(eps, nil, nil, mcp.Options{})
	require.ErrorContains(t, err, "both map to tool a_b_c")
}

// TestInstructionsNameTheToolsAsTheyAre: every tool or tool group the
// server's instructions cite (in backticks) exists, and the op the example
// names is the tool it pairs it with.
func TestInstructionsNameTheToolsAsTheyAre(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cs, err := connect(t, b.url, "key-a")
	require.NoError(t, err)
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	requireInstructionsCiteTools(t, cs.InitializeResult().Instructions, list.Tools)
	require.Contains(t, cs.InitializeResult().Instructions, "the op things.create is the tool `things_create`")
}

func requireInstructionsCiteTools(t *testing.T, instructions string, tools []*sdk.Tool) {
	t.Helper()
	names := map[string]bool{}
	for _, tool := range tools {
		names[tool.Name] = true
		require.Contains(t, tool.Description, "Op: "+tool.Meta[mcp.MetaOp].(string)+".", "the tool's description names its op")
	}
	cited := regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(instructions, -1)
	require.NotEmpty(t, cited, instructions)
	for _, c := range cited {
		name := c[1]
		if prefix, ok := strings.CutSuffix(name, "*"); ok {
			found := false
			for n := range names {
				found = found || strings.HasPrefix(n, prefix)
			}
			require.True(t, found, "the instructions cite the group %s, which has no tool", name)
			continue
		}
		require.True(t, names[name], "the instructions cite %s, which is no tool", name)
	}
	for _, m := range regexp.MustCompile("the op ([a-z_.]+) is the tool `([^`]+)`").FindAllStringSubmatch(instructions, -1) {
		require.Equal(t, mcp.ToolName(m[1]), m[2])
	}
}
