// Package mcp projects the declared ops into MCP tools served at /mcp over the
// streamable HTTP transport of the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). One tool per owner op, generated
// from the endpoints (ops with their routes) that the REST API is generated
// from: the tool's input schema
// is derived from the op's input type (package openapi/schema), its arguments
// are decoded exactly as a REST body is (unknown fields refused), and a domain
// error comes back as a tool error (isError) whose text is the contract's
// {"error":{"code","message"}} body. Public ops are not tools: MCP clients act
// for the owner.
//
// Authentication is the REST API's: every HTTP request to /mcp goes through
// the same httpapi.Authenticator (a bearer API key, or the admin session
// cookie with its CSRF token); without credentials the answer is a 401 in the
// contract's shape before the MCP layer is reached.
//
// The handler is stateless (StreamableHTTPOptions.Stateless): every HTTP
// request is a complete MCP exchange, nothing about a client is kept in
// memory, so any replica can answer any request and the caller is simply the
// one authenticated on that request.
package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/openapi/schema"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// Path is where the MCP endpoint is served.
const Path = "/mcp"

// MetaOp is the key, in a tool's _meta, of the op name the tool projects.
const MetaOp = "standmeet/op"

// ToolName returns the tool name of an op: the op name with '.' replaced by
// '_' ("webhooks.rotate_secret" → "webhooks_rotate_secret").
//
// The MCP spec (2025-11-25) and this SDK allow [A-Za-z0-9_.-]{1,128}, dots
// included, but MCP clients hand the tool list on to model APIs whose
// function names must match ^[a-zA-Z0-9_-]{1,64}$ (OpenAI, Anthropic), and a
// dotted name is refused there. The mapping is checked to be one-to-one when
// the tools are built, and the op name stays in the tool's _meta under
// MetaOp.
func ToolName(opName string) string {
	return strings.ReplaceAll(opName, ".", "_")
}

// Options tune the MCP server.
type Options struct {
	// Version is reported as the server implementation's version.
	Version string
}

// Handler serves the MCP tools of an op set.
type Handler struct {
	server  *sdk.Server
	http    http.Handler
	auth    httpapi.Authenticator
	logger  *zap.Logger
	tools   []*sdk.Tool
	byTools map[string]op.Descriptor
}

// New builds the tools of every non-public op of eps. It fails when two ops
// map to one tool name or when an op's input is not a struct (a tool's input
// is always a JSON object).
func New(eps httpapi.Endpoints, auth httpapi.Authenticator, logger *zap.Logger, opts Options) (*Handler, error) {
	if logger == nil {
		logger = zap.NewNop()
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	slogger := slog.New(zapslog.NewHandler(logger.Named("mcp").Core()))
	server := sdk.NewServer(&sdk.Implementation{Name: "standmeet", Title: "StandMeet", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: Instructions(eps.Ops()),
		Logger:       slogger,
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	h := &Handler{server: server, auth: auth, logger: logger, byTools: map[string]op.Descriptor{}}
	sorted := append(httpapi.Endpoints(nil), eps...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Op < sorted[j].Op })
	for _, ep := range sorted {
		d := ep.Descriptor
		m := d.Meta()
		if m.Public {
			continue
		}
		tool, err := toolOf(ep)
		if err != nil {
			return nil, err
		}
		if other, dup := h.byTools[tool.Name]; dup {
			return nil, fmt.Errorf("mcp: ops %s and %s both map to tool %s", other.Meta().Name, m.Name, tool.Name)
		}
		h.byTools[tool.Name] = d
		h.tools = append(h.tools, tool)
		server.AddTool(tool, h.call(d))
	}
	server.AddReceivingMiddleware(h.scopedToolList)
	h.http = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, &sdk.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		Logger:       slogger,
		// The SDK refuses requests that reach a loopback listener with another
		// Host (DNS rebinding against unauthenticated local servers). Every
		// request here carries owner credentials, which a rebinding page
		// cannot send, and the server commonly sits behind a reverse proxy on
		// the same host, which that check would break.
		DisableLocalhostProtection: true,
	})
	return h, nil
}

// scopedToolList lists to a caller only the tools its key's scopes grant
// (a full key, every tool); a call of another is refused by the op all the
// same (op.Authorize), so the list only spares a model tools it cannot use.
func (h *Handler) scopedToolList(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		list, ok := res.(*sdk.ListToolsResult)
		if err != nil || method != "tools/list" || !ok {
			return res, err
		}
		caller, known := callerFrom(ctx)
		if !known || len(caller.Scopes) == 0 {
			return res, nil
		}
		granted := make([]*sdk.Tool, 0, len(list.Tools))
		for _, t := range list.Tools {
			if d, ok := h.byTools[t.Name]; ok && op.Authorize(d.Meta(), caller) == nil {
				granted = append(granted, t)
			}
		}
		out := *list
		out.Tools = granted
		return &out, nil
	}
}

// Tools returns the tools, sorted by name (tests and docs).
func (h *Handler) Tools() []*sdk.Tool { return h.tools }

// Mount serves /mcp behind the Authenticator.
func (h *Handler) Mount(e *echo.Echo) {
	// Browsers may not drive the tools cross-site with the owner's cookie.
	guard := http.NewCrossOriginProtection()
	handler := guard.Handler(h.http)
	e.Any(Path, func(c echo.Context) error {
		caller, err := h.auth.Authenticate(c.Request())
		if err != nil {
			if de := domain.AsError(err); de != nil && de.Kind == domain.KindUnauthorized {
				c.Response().Header().Set("WWW-Authenticate", `Bearer realm="standmeet"`)
			}
			return httpapi.WriteError(c, h.logger, err)
		}
		req := c.Request()
		handler.ServeHTTP(c.Response(), req.WithContext(withCaller(req.Context(), caller)))
		return nil
	})
}

var _ httpapi.Mounter = (*Handler)(nil)

type callerKey struct{}

func withCaller(ctx context.Context, c op.Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// callerFrom returns the caller authenticated on the HTTP request. The
// stateless transport runs each request's session on that request's context,
// so the value set by Mount reaches the tool handler; a test covers it.
func callerFrom(ctx context.Context) (op.Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(op.Caller)
	return c, ok
}

func toolOf(ep httpapi.Endpoint) (*sdk.Tool, error) {
	d := ep.Descriptor
	m := d.Meta()
	in := d.InputType()
	if in.Kind() != reflect.Struct {
		return nil, fmt.Errorf("mcp: op %s: input %s is not a struct", m.Name, in)
	}
	desc := m.Summary
	if m.Description != "" {
		desc += "\n\n" + m.Description
	}
	desc += fmt.Sprintf("\n\nOp: %s. REST: %s %s", m.Name, ep.Method, ep.Path)
	tool := &sdk.Tool{
		Name:        ToolName(m.Name),
		Title:       m.Summary,
		Description: desc,
		InputSchema: schema.For(in, schema.Options{Strict: true}),
		Meta:        sdk.Meta{MetaOp: m.Name},
		Annotations: annotations(m, ep.Method),
	}
	if d.OutputType() != reflect.TypeFor[op.Empty]() {
		if out := schema.For(d.OutputType(), schema.Options{}); out["type"] == "object" {
			tool.OutputSchema = out
		}
	}
	return tool, nil
}

// annotations give clients the REST method's promises: GET reads, PUT and
// DELETE may be repeated, DELETE destroys; nothing reaches outside the
// instance except what sends webhooks, which the summary says.
func annotations(m op.Meta, method string) *sdk.ToolAnnotations {
	no, yes := false, true
	a := &sdk.ToolAnnotations{Title: m.Summary, OpenWorldHint: &no}
	switch method {
	case http.MethodGet, http.MethodHead:
		a.ReadOnlyHint = true
	case http.MethodDelete:
		a.IdempotentHint = true
		a.DestructiveHint = &yes
	case http.MethodPut:
		a.IdempotentHint = true
		a.DestructiveHint = &yes
	default:
		a.DestructiveHint = &no
	}
	return a
}

// call returns the tool handler of an op: decode, call with the request's
// caller, encode. Errors of the op are tool results (the model sees them),
// never protocol errors.
func (h *Handler) call(d op.Descriptor) sdk.ToolHandler {
	name := d.Meta().Name
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		caller, ok := callerFrom(ctx)
		if !ok {
			return h.toolError(ctx, name, domain.Unauthorized("UNAUTHORIZED", "no credentials")), nil
		}
		in := d.NewInput()
		if err := decodeArguments(req.Params.Arguments, in); err != nil {
			return h.toolError(ctx, name, err), nil
		}
		out, err := d.Call(ctx, caller, in)
		if err != nil {
			return h.toolError(ctx, name, err), nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return h.toolError(ctx, name, fmt.Errorf("encode result of %s: %w", name, err)), nil
		}
		res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
		if bytes.HasPrefix(b, []byte("{")) {
			res.StructuredContent = json.RawMessage(b)
		}
		return res, nil
	}
}

// decodeArguments decodes tool arguments through the gate httpapi.BindInput
// uses for a REST body (op.DecodeJSON); absent arguments are an empty object.
func decodeArguments(raw json.RawMessage, in any) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil
	}
	err := op.DecodeJSON(trimmed, in)
	if de := domain.AsError(err); de != nil && de.Code == op.CodeInvalidJSON {
		// MCP's name for JSON that does not fit the tool's arguments.
		return domain.Validation("INVALID_ARGUMENTS", de.Message).WithField(de.Field)
	}
	return err
}

// toolError turns an op error into a tool error carrying the contract's body.
// An error that is not a domain error is answered without its text, as the
// REST API does, and reported to the request logger (httpapi.Fail), which
// logs it once with the request's fields and the op.
func (h *Handler) toolError(ctx context.Context, tool string, err error) *sdk.CallToolResult {
	body := httpapi.ErrorBody{Error: httpapi.ErrorDetail{Code: "INTERNAL", Message: "internal error; see the server log"}}
	if de := domain.AsError(err); de != nil && de.Kind != domain.KindInternal {
		body.Error = httpapi.ErrorDetail{Code: de.Code, Message: de.Message, Field: de.Field}
	} else {
		httpapi.Fail(ctx, h.logger, err, zap.String("op", tool))
	}
	// A struct of strings always encodes; there is no error to handle.
	b, _ := json.Marshal(body)
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}}
	res.SetError(err)
	return res
}

// ErrorOf reads the contract's error back from a tool error result (for
// clients and tests). It returns nil when res is not an error.
func ErrorOf(res *sdk.CallToolResult) *httpapi.ErrorDetail {
	if res == nil || !res.IsError || len(res.Content) == 0 {
		return nil
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		return nil
	}
	var body httpapi.ErrorBody
	if err := json.Unmarshal([]byte(tc.Text), &body); err != nil || body.Error.Code == "" {
		return nil
	}
	return &body.Error
}

// Instructions are the server's instructions to clients. They name the
// tools as they are: each op's name with '_' for '.', grouped by the op
// groups this server declares, with one op and its tool as the example.
func Instructions(ops op.Set) string {
	var groups []string
	seen := map[string]bool{}
	example := ""
	for _, d := range ops.Sorted() {
		m := d.Meta()
		if m.Public {
			continue
		}
		if example == "" || m.Name == "webhooks.list" {
			example = m.Name
		}
		if g := m.Group(); !seen[g] {
			seen[g] = true
			groups = append(groups, "`"+ToolName(g)+"_*`")
		}
	}
	var b strings.Builder
	b.WriteString("Tools of a StandMeet instance, acting for its owner (outbound webhooks and their deliveries, " +
		"inbound webhook sources and dead letters, events, notes, access, the account). ")
	if len(groups) > 0 {
		b.WriteString("Tool groups: " + strings.Join(groups, ", ") + ". ")
	}
	b.WriteString("Each tool is one op of the admin REST API (OpenAPI document at /api/openapi.json); a tool's name is " +
		"its op's name with '_' in place of '.'")
	if example != "" {
		b.WriteString(": the op " + example + " is the tool `" + ToolName(example) + "`")
	}
	b.WriteString(". Each tool's description names its op and REST route. Errors carry the API's codes.")
	return b.String()
}
