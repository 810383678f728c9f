package main

// The op fuzz harness: every declared op, on REST and on MCP, is sent
// random and hostile values for every field of its input schema (the JSON
// Schema the MCP tool list and the OpenAPI document publish). A request
// with a hostile value — a string with a NUL byte or invalid UTF-8, a value
// of the wrong JSON type, a limit out of its range, a field the op does not
// have, data after the JSON — must be answered 4xx with the contract's
// {"error":{"code","message"}} and leave the database as it was; a request
// of random values of the right types may succeed, but never with a 5xx.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/mcp"
	"github.com/standmeet/standmeet/internal/adapters/openapi/schema"
)

// invalidUTF8 stands for a string whose bytes are not UTF-8: encoding/json
// cannot write one, so the REST sender swaps the placeholder for raw bytes.
const invalidUTF8 = "\uFFFEinvalid-utf8\uFFFE"

// loneSurrogate stands for a string holding a lone UTF-16 surrogate escape
// ("\ud800"): a Go string cannot hold one, so the senders swap the
// placeholder for that escape in the JSON text.
const loneSurrogate = "\uFFFElone-surrogate\uFFFE"

// swapPlaceholders writes the bytes and escapes the placeholders stand for
// into the JSON text b.
func swapPlaceholders(b []byte) []byte {
	for placeholder, with := range map[string]string{invalidUTF8: "\xff\xfe", loneSurrogate: `\ud800`} {
		p, _ := json.Marshal(placeholder)
		b = bytes.ReplaceAll(b, p[1:len(p)-1], []byte(with))
	}
	return b
}

// fuzzTarget is a server the harness sends requests to.
type fuzzTarget struct {
	BaseURL string
	Key     string
	MCP     *sdk.ClientSession
	// Fingerprint summarises the database (nil: no database to check).
	Fingerprint func() (string, error)
}

// fuzzConfig bounds a run.
type fuzzConfig struct {
	// Random is the number of all-random requests per op and surface.
	Random int
	Seed   uint64
}

// fuzzOps runs the harness over the ops of eps, each at its route, and returns what went wrong, one line
// per failure (empty when every answer was right).
func fuzzOps(ctx context.Context, target fuzzTarget, eps httpapi.Endpoints, cfg fuzzConfig) []string {
	r := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	var failures []string
	fail := func(format string, args ...any) { failures = append(failures, fmt.Sprintf(format, args...)) }
	client := &http.Client{Timeout: 30 * time.Second}
	sorted := append(httpapi.Endpoints(nil), eps...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Op < sorted[j].Op })
	for _, ep := range sorted {
		d := ep.Descriptor
		m := d.Meta()
		s := schema.For(d.InputType(), schema.Options{Strict: true})
		fields := fieldsOf(d.InputType())
		before := ""
		if target.Fingerprint != nil {
			var err error
			if before, err = target.Fingerprint(); err != nil {
				return append(failures, "fingerprint: "+err.Error())
			}
		}
		for _, c := range gateCases(d.InputType(), s, ep.Method, fields) {
			if st, body, err := sendREST(ctx, client, target, ep, fields, c.args, false); err != nil {
				fail("%s REST %s: %v", m.Name, c.what, err)
			} else if msg := wantGate(st, body, c.field); msg != "" {
				fail("%s REST %s: %s: %s", m.Name, c.what, msg, clip(body))
			}
			if target.MCP != nil {
				if msg := callMCPGate(ctx, client, target, m.Name, c.args, c.field); msg != "" {
					fail("%s MCP %s: %s", m.Name, c.what, msg)
				}
			}
		}
		for _, c := range hostileCases(r, s, ep.Method, fields) {
			if c.mcpOnly {
				if target.MCP != nil {
					if msg := callMCP(ctx, target.MCP, m.Name, c.args, true); msg != "" {
						fail("%s MCP %s: %s", m.Name, c.what, msg)
					}
				}
				continue
			}
			if st, body, err := sendREST(ctx, client, target, ep, fields, c.args, c.trailing); err != nil {
				fail("%s REST %s: %v", m.Name, c.what, err)
			} else if msg := wantRefusal(st, body); msg != "" {
				fail("%s REST %s: %s: %s", m.Name, c.what, msg, clip(body))
			}
			if target.MCP == nil || c.trailing {
				continue
			}
			if c.restOnly {
				// Bytes no JSON encoder writes: sent as a raw JSON-RPC call.
				if msg := callMCPRaw(ctx, client, target, m.Name, c.args); msg != "" {
					fail("%s MCP %s: %s", m.Name, c.what, msg)
				}
				continue
			}
			if msg := callMCP(ctx, target.MCP, m.Name, c.args, true); msg != "" {
				fail("%s MCP %s: %s", m.Name, c.what, msg)
			}
		}
		if target.Fingerprint != nil {
			after, err := target.Fingerprint()
			if err != nil {
				return append(failures, "fingerprint: "+err.Error())
			}
			if after != before {
				fail("%s: refused requests changed the database:\n%s", m.Name, diffLines(before, after))
			}
		}
		for i := 0; i < cfg.Random; i++ {
			args, _ := randomValue(r, s, 0).(map[string]any)
			if st, body, err := sendREST(ctx, client, target, ep, fields, args, false); err != nil {
				fail("%s REST random: %v", m.Name, err)
			} else if msg := wantNo5xx(st, body); msg != "" {
				fail("%s REST random %v: %s: %s", m.Name, args, msg, clip(body))
			}
			if target.MCP != nil {
				if msg := callMCP(ctx, target.MCP, m.Name, args, false); msg != "" {
					fail("%s MCP random %v: %s", m.Name, args, msg)
				}
			}
		}
	}
	return failures
}

// fuzzCase is one request's arguments.
type fuzzCase struct {
	what     string
	args     map[string]any
	trailing bool
	restOnly bool
	mcpOnly  bool
	// field, for a case of the input gate's text rules, is the field the
	// 400 INVALID_INPUT must name.
	field string
}

// gateCases are the requests the input gate must refuse with 400
// INVALID_INPUT naming the field, one per rule and text field of the op's
// input (its Go type says which fields are single-line, multi-line, globs
// or raw JSON): a control character other than tab in a single-line
// string or map key, a glob not in its canonical form, a lone surrogate
// escape in any string of the body. The other arguments are the required
// ones with plain values, so nothing else is wrong with the request.
func gateCases(t reflect.Type, s schema.Schema, method string, fields map[string]restField) []fuzzCase {
	bodyless := method == http.MethodGet || method == http.MethodDelete
	base := func() map[string]any {
		out := map[string]any{}
		props, _ := s["properties"].(schema.Schema)
		req, _ := s["required"].([]any)
		for _, x := range req {
			name := fmt.Sprint(x)
			ps, _ := props[name].(schema.Schema)
			out[name] = plainValue(ps)
		}
		return out
	}
	controls := []hostile{{"CR LF", "a\r\nb"}, {"an escape sequence", "\x1b[2J"}, {"DEL", "a\x7f"}, {"a C1 control", "a\u0085"}}
	var out []fuzzCase
	add := func(what, field, name string, v any) {
		args := base()
		args[name] = v
		out = append(out, fuzzCase{what: what, args: args, field: field})
	}
	for _, f := range httpapi.InputFields(t) {
		name, ok := schema.FieldName(f)
		rf := fields[name]
		if !ok || !f.IsExported() || rf.path || (bodyless && !rf.query) {
			continue
		}
		query := bodyless && rf.query
		tag := f.Tag.Get("text")
		single := tag != "multiline"
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		var values []hostile
		if single {
			values = append(values, controls...)
		}
		if tag == "glob" {
			values = append(values, hostile{"two stars", "**"}, hostile{"a run of stars", "a.**"}, hostile{"a space before", " a.*"})
		}
		if !query {
			values = append(values, hostile{"a lone surrogate", "a" + loneSurrogate})
		}
		switch {
		case ft == reflect.TypeFor[json.RawMessage]() || ft == reflect.TypeFor[map[string]json.RawMessage]():
			if !query {
				add(name+"=a lone surrogate in raw JSON", name+".k", name, map[string]any{"k": loneSurrogate})
			}
		case ft.Kind() == reflect.String:
			for _, h := range values {
				add(name+"="+h.what, name, name, h.v)
			}
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.String && !query:
			for _, h := range values {
				add(name+"=an element "+h.what, name+"[1]", name, []any{"a.*", h.v})
			}
		case ft.Kind() == reflect.Map && ft.Key().Kind() == reflect.String && ft.Elem().Kind() == reflect.String && !query:
			for _, h := range values {
				add(name+"=a member "+h.what, name+".X-Gate", name, map[string]any{"X-Gate": h.v})
			}
			add(name+"=a key with CR LF", name+".X\r\n", name, map[string]any{"X\r\n": "v"})
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct && !query:
			for _, g := range stringFields(ft.Elem()) {
				gname, ok := schema.FieldName(g)
				if !ok {
					continue
				}
				add(name+"=an element's "+gname+" a lone surrogate", name+"[0]."+gname, name, []any{map[string]any{gname: loneSurrogate}})
				if g.Tag.Get("text") != "multiline" {
					add(name+"=an element's "+gname+" CR LF", name+"[0]."+gname, name, []any{map[string]any{gname: "a\r\nb"}})
				}
			}
		}
	}
	return out
}

// stringFields are the string fields of the struct t, those of embedded
// structs included.
func stringFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for _, f := range httpapi.InputFields(t) {
		if f.IsExported() && f.Type.Kind() == reflect.String {
			out = append(out, f)
		}
	}
	return out
}

// plainValue is a value of the schema's type with nothing hostile or odd
// about it.
func plainValue(s schema.Schema) any {
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	types := typesOf(s)
	switch {
	case s["format"] == "uuid":
		return "00000000-0000-7000-8000-000000000000"
	case s["format"] == "date-time":
		return "2026-12-01T09:30:00Z"
	case types["string"]:
		return "plain"
	case types["integer"], types["number"]:
		if min, ok := number(s["minimum"]); ok && min > 1 {
			return min
		}
		return 1
	case types["boolean"]:
		return false
	case types["array"]:
		return []any{}
	case types["object"]:
		return map[string]any{}
	}
	return nil
}

// wantGate checks the answer to a gate case: 400 INVALID_INPUT naming field.
func wantGate(status int, body []byte, field string) string {
	var e struct {
		Error struct {
			Code  string `json:"code"`
			Field string `json:"field"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e) // an unreadable body fails the checks below
	if status != http.StatusBadRequest || e.Error.Code != "INVALID_INPUT" || e.Error.Field != field {
		return fmt.Sprintf("status %d %s field %q, want 400 INVALID_INPUT field %q", status, e.Error.Code, e.Error.Field, field)
	}
	return ""
}

// callMCPGate sends a gate case as a raw JSON-RPC tools/call (the
// placeholders swapped) and requires the tool error INVALID_INPUT naming
// field.
func callMCPGate(ctx context.Context, c *http.Client, target fuzzTarget, opName string, args map[string]any, field string) string {
	_, raw, msg := postToolCall(ctx, c, target, opName, args)
	if msg != "" {
		return msg
	}
	var rpc struct {
		Result *sdk.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil || rpc.Result == nil {
		return "no tool result: " + clip(raw)
	}
	d := mcp.ErrorOf(rpc.Result)
	if d == nil || d.Code != "INVALID_INPUT" || d.Field != field {
		return fmt.Sprintf("want the tool error INVALID_INPUT naming %q: %s", field, clip(raw))
	}
	return ""
}

// postToolCall sends one tools/call as raw JSON-RPC (the server is
// stateless), the placeholders swapped for the bytes and escapes they stand
// for, and returns the HTTP status and body, or what went wrong on the way.
func postToolCall(ctx context.Context, c *http.Client, target fuzzTarget, opName string, args map[string]any) (int, []byte, string) {
	params, err := json.Marshal(map[string]any{"name": mcp.ToolName(opName), "arguments": args})
	if err != nil {
		return 0, nil, err.Error()
	}
	body := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`), swapPlaceholders(params)...), '}')
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.BaseURL+mcp.Path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+target.Key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, "transport: " + err.Error()
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, "transport: " + err.Error()
	}
	return resp.StatusCode, raw, ""
}

// hostileCases are the requests of an op that must each be refused: one per
// hostile value of each field (the other fields random), one naming a field
// the op does not have, and one with data after the JSON. Fields the REST
// projection takes from the path or the query string get the hostile values
// that stay hostile as text.
func hostileCases(r *rand.Rand, s schema.Schema, method string, fields map[string]restField) []fuzzCase {
	bodyless := method == http.MethodGet || method == http.MethodDelete
	props, _ := s["properties"].(schema.Schema)
	var out []fuzzCase
	base := func() map[string]any {
		m, _ := randomValue(r, s, 0).(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		return m
	}
	for _, name := range sortedKeys(props) {
		ps, _ := props[name].(schema.Schema)
		values := hostileValues(r, ps, 0)
		if f := fields[name]; f.path || (f.query && bodyless) {
			values = hostileText(r, ps)
		}
		for _, h := range values {
			args := base()
			args[name] = h.v
			out = append(out, fuzzCase{what: fmt.Sprintf("%s=%s", name, h.what), args: args, restOnly: containsInvalidUTF8(h.v)})
		}
	}
	unknown := base()
	unknown["zz_not_a_field"] = "x"
	// REST ignores query parameters it does not know, as HTTP APIs do; a
	// body must not carry a member the op does not have.
	out = append(out, fuzzCase{what: "an unknown field", args: unknown, mcpOnly: bodyless})
	if !bodyless {
		out = append(out, fuzzCase{what: "trailing data", args: base(), trailing: true, restOnly: true})
	}
	return out
}

// hostileText are the hostile values of a field sent as text (a path
// segment or a query parameter).
func hostileText(r *rand.Rand, s schema.Schema) []hostile {
	types := typesOf(s)
	var out []hostile
	switch {
	case s["format"] == "uuid":
		out = append(out, hostile{"not a uuid", "not-a-uuid"}, hostile{"a uuid with NUL", "00000000-0000-7000-8000-00000000000\x00"})
	case types["integer"]:
		out = append(out, hostile{"not a number", "abc"}, hostile{"a fraction", "1.5"})
		if max, ok := number(s["maximum"]); ok {
			out = append(out, hostile{"over the maximum", int64(max) + 1 + r.Int64N(1000)})
		}
		if min, ok := number(s["minimum"]); ok && min >= 0 {
			out = append(out, hostile{"negative", -1 - r.Int64N(1000)})
		}
	case types["boolean"]:
		out = append(out, hostile{"not a boolean", "maybe"})
	case types["string"]:
		out = append(out,
			hostile{"a NUL byte", randomString(r) + "\x00" + randomString(r)},
			hostile{"invalid UTF-8", randomString(r) + invalidUTF8},
		)
	}
	return out
}

type hostile struct {
	what string
	v    any
}

// hostileValues are values the schema s refuses (wrong JSON type, NUL,
// invalid UTF-8, out of range), nested values included.
func hostileValues(r *rand.Rand, s schema.Schema, depth int) []hostile {
	types := typesOf(s)
	var out []hostile
	has := func(t string) bool { return types[t] }
	if len(types) == 0 {
		// Any value (json.RawMessage, an interface): nothing is wrong by
		// type, but its strings are text like any other.
		return []hostile{{"a string with NUL", "a\x00"}, {"a nested NUL", map[string]any{"k": []any{"\x00"}}}}
	}
	if !has("object") {
		out = append(out, hostile{"an object", map[string]any{"a": 1}})
	}
	if !has("array") {
		out = append(out, hostile{"an array", []any{1}})
	}
	if !has("string") {
		out = append(out, hostile{"a string", "12"})
	}
	if !has("integer") && !has("number") && !has("string") {
		out = append(out, hostile{"a number", 7})
	}
	if has("integer") {
		out = append(out, hostile{"a fraction", 1.5})
		if max, ok := number(s["maximum"]); ok {
			out = append(out, hostile{"over the maximum", int64(max) + 1 + r.Int64N(1000)})
		}
		if min, ok := number(s["minimum"]); ok && min >= 0 {
			out = append(out, hostile{"negative", -1 - r.Int64N(1000)})
		}
	}
	if has("string") {
		out = append(out,
			hostile{"a NUL byte", randomString(r) + "\x00" + randomString(r)},
			hostile{"only NUL", "\x00"},
			hostile{"invalid UTF-8", randomString(r) + invalidUTF8},
		)
		if !has("integer") && !has("number") && !has("boolean") {
			out = append(out, hostile{"a boolean", true})
		}
	}
	if has("array") && depth < 3 {
		items, _ := s["items"].(schema.Schema)
		for _, h := range hostileValues(r, items, depth+1) {
			out = append(out, hostile{"an element " + h.what, []any{randomValue(r, items, depth+1), h.v}})
		}
	}
	if has("object") && depth < 3 {
		if addl, ok := s["additionalProperties"].(schema.Schema); ok {
			out = append(out, hostile{"a key with NUL", map[string]any{"k\x00": randomValue(r, addl, depth+1)}})
			for _, h := range hostileValues(r, addl, depth+1) {
				out = append(out, hostile{"a member " + h.what, map[string]any{"k": h.v}})
			}
		}
		if props, ok := s["properties"].(schema.Schema); ok {
			for _, name := range sortedKeys(props) {
				ps, _ := props[name].(schema.Schema)
				for _, h := range hostileValues(r, ps, depth+1) {
					obj, _ := randomValue(r, s, depth+1).(map[string]any)
					if obj == nil {
						obj = map[string]any{}
					}
					obj[name] = h.v
					out = append(out, hostile{name + " " + h.what, obj})
				}
			}
		}
	}
	return out
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func typesOf(s schema.Schema) map[string]bool {
	out := map[string]bool{}
	switch t := s["type"].(type) {
	case string:
		out[t] = true
	case []any:
		for _, x := range t {
			if str, ok := x.(string); ok {
				out[str] = true
			}
		}
	}
	delete(out, "null")
	return out
}

// fuzzStrings are the random strings. URLs among them are loopback only, on
// the discard port: an endpoint the random requests create must never lead
// a delivery off this machine.
var fuzzStrings = []string{
	"", " ", "a", "Zoë 🚀", "code.*", "*", "webhook.test", "../../etc/passwd", "<script>alert(1)</script>",
	"' OR 1=1 --", "%00", "\\u0000", "http://127.0.0.1:9/fuzz", "https://[::1]:9/fuzz", "http://127.1:9/", "127.1",
	"x@example.com", "whsec_AAAA", "smk_" + strings.Repeat("x", 43), strings.Repeat("long ", 2000),
	"\u202egnp.exe", "\t\n\r", "null", "{}", "0", "-1", "9999999999999999999999",
}

func randomString(r *rand.Rand) string { return fuzzStrings[r.IntN(len(fuzzStrings))] }

// randomValue is a value of the schema's type (perhaps still refused by
// the op's own rules); optional properties are left out at random.
func randomValue(r *rand.Rand, s schema.Schema, depth int) any {
	types := typesOf(s)
	if s["format"] == "uuid" {
		if r.IntN(8) == 0 {
			return "not-a-uuid"
		}
		return fmt.Sprintf("%08x-%04x-7%03x-8%03x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xfff, r.Uint32()&0xfff, r.Uint64()&0xffffffffffff)
	}
	if s["format"] == "date-time" {
		return time.Unix(r.Int64N(4e9), 0).UTC().Format(time.RFC3339)
	}
	switch {
	case types["object"] && depth < 3:
		out := map[string]any{}
		if props, ok := s["properties"].(schema.Schema); ok {
			req := map[string]bool{}
			if rl, ok := s["required"].([]any); ok {
				for _, x := range rl {
					req[fmt.Sprint(x)] = true
				}
			}
			for _, name := range sortedKeys(props) {
				if !req[name] && r.IntN(2) == 0 {
					continue
				}
				ps, _ := props[name].(schema.Schema)
				out[name] = randomValue(r, ps, depth+1)
			}
		}
		if addl, ok := s["additionalProperties"].(schema.Schema); ok {
			for i := r.IntN(3); i > 0; i-- {
				out["X-"+strconv.Itoa(r.IntN(100))] = randomValue(r, addl, depth+1)
			}
		}
		return out
	case types["array"] && depth < 3:
		items, _ := s["items"].(schema.Schema)
		out := []any{}
		for i := r.IntN(4); i > 0; i-- {
			out = append(out, randomValue(r, items, depth+1))
		}
		return out
	case types["integer"]:
		if max, ok := number(s["maximum"]); ok {
			return r.Int64N(int64(max) + 1)
		}
		return []int64{0, 1, -1, 50, 1 << 31, -(1 << 62), 1<<63 - 1}[r.IntN(7)]
	case types["number"]:
		return r.Float64() * 1e6
	case types["boolean"]:
		return r.IntN(2) == 0
	case types["string"]:
		return randomString(r)
	}
	return nil
}

// restField is how the REST projection binds a top-level input field.
type restField struct{ path, query bool }

func fieldsOf(t reflect.Type) map[string]restField {
	out := map[string]restField{}
	for _, f := range httpapi.InputFields(t) {
		name, ok := schema.FieldName(f)
		if !ok {
			continue
		}
		_, p := f.Tag.Lookup("path")
		_, q := f.Tag.Lookup("query")
		out[name] = restField{path: p, query: q}
	}
	return out
}

// sendREST sends args as the REST projection of ep takes them: path fields
// in the path, query fields in the query string of GET and DELETE, the rest
// as the JSON body.
func sendREST(ctx context.Context, c *http.Client, target fuzzTarget, ep httpapi.Endpoint, fields map[string]restField, args map[string]any, trailing bool) (int, []byte, error) {
	m := ep.Descriptor.Meta()
	p := ep.Path
	q := url.Values{}
	body := map[string]any{}
	for name, v := range args {
		f := fields[name]
		switch {
		case f.path:
			p = strings.ReplaceAll(p, "{"+name+"}", url.PathEscape(scalar(v)))
		case f.query && (ep.Method == http.MethodGet || ep.Method == http.MethodDelete):
			q.Set(name, scalar(v))
		default:
			body[name] = v
		}
	}
	// A path parameter the args left out still needs a value.
	for name, f := range fields {
		if f.path {
			p = strings.ReplaceAll(p, "{"+name+"}", "00000000-0000-7000-8000-000000000000")
		}
	}
	var raw []byte
	if ep.Method != http.MethodGet && ep.Method != http.MethodDelete {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return 0, nil, err
		}
		raw = swapPlaceholders(raw)
		if trailing {
			raw = append(raw, []byte(" {} xyz")...)
		}
	}
	u := target.BaseURL + p
	if len(q) > 0 {
		u += "?" + strings.ReplaceAll(q.Encode(), url.QueryEscape(invalidUTF8), "%FF%FE")
	}
	req, err := http.NewRequestWithContext(ctx, ep.Method, u, bytes.NewReader(raw))
	if err != nil {
		return 0, nil, err
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if !m.Public {
		req.Header.Set("Authorization", "Bearer "+target.Key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// callMCP calls the op's tool and says what is wrong with the answer ("" if
// nothing): refused must be refused with the contract's error (or by the
// protocol, as invalid params); nothing may fail as INTERNAL.
func callMCP(ctx context.Context, cs *sdk.ClientSession, opName string, args map[string]any, refused bool) string {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: mcp.ToolName(opName), Arguments: args})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "connection") {
			return "transport: " + err.Error()
		}
		if refused {
			return "" // a protocol error (invalid params): refused before the tool ran
		}
		if strings.Contains(strings.ToLower(err.Error()), "internal") {
			return "protocol error: " + err.Error()
		}
		return ""
	}
	d := mcp.ErrorOf(res)
	switch {
	case res.IsError && d == nil:
		return "a tool error without the contract's shape: " + clip([]byte(textOf(res)))
	case d != nil && (d.Code == "INTERNAL" || d.Message == ""):
		return "a tool error " + d.Code + ": " + d.Message
	case refused && !res.IsError:
		return "accepted: " + clip([]byte(textOf(res)))
	}
	return ""
}

// callMCPRaw sends one tools/call as raw JSON-RPC (the server is stateless),
// with invalidUTF8 swapped for raw bytes, and says what is wrong with the
// answer: it must be a tool error with the contract's shape, or a protocol
// refusal that is not an internal error.
func callMCPRaw(ctx context.Context, c *http.Client, target fuzzTarget, opName string, args map[string]any) string {
	status, raw, msg := postToolCall(ctx, c, target, opName, args)
	if msg != "" {
		return msg
	}
	if status >= 500 {
		return "HTTP " + strconv.Itoa(status) + ": " + clip(raw)
	}
	var rpc struct {
		Result *sdk.CallToolResult `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil {
		if status >= 400 {
			return "" // refused by the transport before the tool ran
		}
		return "unreadable answer: " + clip(raw)
	}
	switch {
	case rpc.Error != nil && rpc.Error.Code == -32603:
		return "JSON-RPC internal error: " + clip(raw)
	case rpc.Error != nil:
		return ""
	case rpc.Result == nil:
		return "no result: " + clip(raw)
	}
	d := mcp.ErrorOf(rpc.Result)
	switch {
	case !rpc.Result.IsError:
		return "accepted: " + clip(raw)
	case d == nil:
		return "a tool error without the contract's shape: " + clip(raw)
	case d.Code == "INTERNAL" || d.Message == "":
		return "a tool error " + d.Code + ": " + d.Message
	}
	return ""
}

// wantRefusal checks a refused request's answer.
func wantRefusal(status int, body []byte) string {
	if status < 400 || status >= 500 {
		return "status " + strconv.Itoa(status) + ", want 4xx"
	}
	return errorShape(body)
}

// wantNo5xx checks an answer to random values.
func wantNo5xx(status int, body []byte) string {
	if status >= 500 {
		return "status " + strconv.Itoa(status)
	}
	if status >= 400 {
		return errorShape(body)
	}
	return ""
}

func errorShape(body []byte) string {
	var e struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || e.Error.Code == "" || e.Error.Message == "" {
		return "the body is not {\"error\":{\"code\",\"message\"}}"
	}
	return ""
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func containsInvalidUTF8(v any) bool {
	b, _ := json.Marshal(v)
	placeholder, _ := json.Marshal(invalidUTF8)
	return bytes.Contains(b, placeholder[1:len(placeholder)-1])
}

func sortedKeys(m schema.Schema) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	// Sorted, so a seed replays the same run.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			out = append(out, "  "+strings.SplitN(bl[i], " ", 2)[0])
		}
	}
	return strings.Join(out, "\n")
}

// fuzzSeed is STANDMEET_OP_FUZZ_SEED, or the time (logged, to replay).
func fuzzSeed(t *testing.T) uint64 {
	if s := os.Getenv("STANDMEET_OP_FUZZ_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err == nil {
			return n
		}
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("op fuzz seed %d (STANDMEET_OP_FUZZ_SEED replays it)", seed)
	return seed
}
