// Package openapi projects the declared ops into an OpenAPI 3.1 document of
// the admin REST API and serves it at GET /api/openapi.json. Nothing in the
// document is written by hand: paths, methods and success statuses come from
// each op's route (httpapi.Routes), parameters from the `path` and `query`
// tags of its input type, the request body from the input's remaining JSON
// fields, the response from its output type (package schema derives both),
// errors from httpapi.ErrorBody.
package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/openapi/schema"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// Path is where the document is served.
const Path = "/api/openapi.json"

// Version is the OpenAPI version the document declares.
const Version = "3.1.0"

// Options tune the document.
type Options struct {
	// Title and APIVersion fill the info object.
	Title      string
	APIVersion string
	// Server is the URL the document names as the API's server; empty =
	// DefaultServer. The served document names the origin it was fetched
	// from instead.
	Server string
	// SessionCookie names the admin session cookie; when set, the document
	// declares it as a second way to authenticate besides the bearer key.
	SessionCookie string
	// Webhooks are the event types the instance sends as webhooks; the
	// document describes each in its webhooks section (AddWebhooks).
	Webhooks []domain.EventType
}

// Document builds the OpenAPI document of the ops of eps. It fails when an
// op's path names a parameter that its input type does not bind, or when two
// ops claim the same method and path: the REST projection would be wrong too.
func Document(eps httpapi.Endpoints, opts Options) (map[string]any, error) {
	if opts.Title == "" {
		opts.Title = "StandMeet admin API"
	}
	if opts.APIVersion == "" {
		opts.APIVersion = "dev"
	}
	errorSchema := schema.For(reflect.TypeFor[httpapi.ErrorBody](), schema.Options{})
	security := []any{map[string]any{"bearerAuth": []any{}}}
	schemes := map[string]any{
		"bearerAuth": map[string]any{"type": "http", "scheme": "bearer", "description": "an API key issued by `standmeet api-key issue`"},
	}
	if opts.SessionCookie != "" {
		schemes["sessionCookie"] = map[string]any{"type": "apiKey", "in": "cookie", "name": opts.SessionCookie,
			"description": "the admin UI's session; unsafe methods also need the CSRF token"}
		security = append(security, map[string]any{"sessionCookie": []any{}})
	}
	paths := map[string]any{}
	tags := map[string]bool{}
	sorted := append(httpapi.Endpoints(nil), eps...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Op < sorted[j].Op })
	for _, ep := range sorted {
		m := ep.Descriptor.Meta()
		item, _ := paths[ep.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[ep.Path] = item
		}
		method := strings.ToLower(ep.Method)
		if _, dup := item[method]; dup {
			return nil, fmt.Errorf("openapi: %s %s is declared by two ops", ep.Method, ep.Path)
		}
		operation, err := operationOf(ep)
		if err != nil {
			return nil, err
		}
		if m.Public {
			operation["security"] = []any{}
		}
		item[method] = operation
		tags[m.Group()] = true
	}
	var tagList []any
	for _, name := range sortedKeys(tags) {
		tagList = append(tagList, map[string]any{"name": name, "description": tagDescription(name)})
	}
	if tags["inbound_sources"] {
		paths["/hooks/{id}"] = hooksPath()
	}
	doc := map[string]any{
		"openapi": Version,
		"info": map[string]any{
			"title":   opts.Title,
			"version": opts.APIVersion,
			"description": "The admin REST API of a StandMeet instance. Every operation is a projection of an op " +
				"declared once in its domain; the MCP tools at /mcp are the same ops. Errors are " +
				"{\"error\":{\"code\",\"message\"}}; collections are {\"data\":[…]}, paged ones add next_cursor.",
		},
		"servers":  servers(opts.Server),
		"paths":    paths,
		"security": security,
		"components": map[string]any{
			"securitySchemes": schemes,
			"schemas":         map[string]any{"Error": errorSchema},
			"responses": map[string]any{
				"Error": map[string]any{
					"description": "an error in the contract's shape",
					"content":     map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}},
				},
			},
		},
	}
	if len(tagList) > 0 {
		doc["tags"] = tagList
	}
	if err := AddWebhooks(doc, opts.Webhooks); err != nil {
		return nil, err
	}
	return doc, nil
}

// operationOf describes one op at its route.
func operationOf(ep httpapi.Endpoint) (map[string]any, error) {
	d := ep.Descriptor
	m := d.Meta()
	in := d.InputType()
	for in.Kind() == reflect.Pointer {
		in = in.Elem()
	}
	var params []any
	bound := map[string]bool{}
	for _, f := range httpapi.InputFields(in) {
		if name, ok := f.Tag.Lookup("path"); ok {
			bound[name] = true
			params = append(params, parameter(name, "path", f, true))
		} else if name, ok := f.Tag.Lookup("query"); ok {
			params = append(params, parameter(name, "query", f, false))
		}
	}
	for _, name := range pathParams(ep.Path) {
		if !bound[name] {
			return nil, fmt.Errorf("openapi: op %s: path parameter {%s} has no input field tagged path:%q", m.Name, name, name)
		}
	}
	o := map[string]any{
		"operationId": m.Name,
		"summary":     m.Summary,
		"tags":        []any{m.Group()},
	}
	if m.Description != "" {
		o["description"] = m.Description
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	if hasBody(ep.Method) && in.Kind() == reflect.Struct {
		body := schema.For(in, schema.Options{Strict: true, Skip: func(f reflect.StructField) bool {
			_, p := f.Tag.Lookup("path")
			_, q := f.Tag.Lookup("query")
			return p || q
		}})
		if props, _ := body["properties"].(schema.Schema); len(props) > 0 {
			_, required := body["required"]
			o["requestBody"] = map[string]any{
				"required": required,
				"content":  map[string]any{"application/json": map[string]any{"schema": body}},
			}
		}
	}
	responses := map[string]any{}
	status := ep.SuccessStatus()
	if d.OutputType() == reflect.TypeFor[op.Empty]() {
		if status == http.StatusOK {
			status = http.StatusNoContent
		}
		responses[fmt.Sprint(status)] = map[string]any{"description": http.StatusText(status)}
	} else {
		responses[fmt.Sprint(status)] = map[string]any{
			"description": http.StatusText(status),
			"content":     map[string]any{"application/json": map[string]any{"schema": schema.For(d.OutputType(), schema.Options{})}},
		}
		// An output that chooses its status answers 200 for the replay of
		// an idempotent request (op.Replayer).
		if d.OutputType().Implements(reflect.TypeFor[op.Replayer]()) && status != http.StatusOK {
			responses["200"] = map[string]any{
				"description": "the replay of an earlier request: the first result",
				"content":     map[string]any{"application/json": map[string]any{"schema": schema.For(d.OutputType(), schema.Options{})}},
			}
		}
	}
	errRef := map[string]any{"$ref": "#/components/responses/Error"}
	responses["400"] = errRef
	if !m.Public {
		responses["401"] = errRef
	}
	if len(bound) > 0 {
		responses["404"] = errRef
	}
	responses["default"] = errRef
	o["responses"] = responses
	return o, nil
}

func parameter(name, in string, f reflect.StructField, required bool) map[string]any {
	s := schema.For(f.Type, schema.Options{})
	if !required {
		// A missing query parameter is absent, not null.
		if t, ok := s["type"].([]any); ok && len(t) == 2 && t[1] == "null" {
			s = copySchema(s)
			s["type"] = t[0]
		}
	}
	p := map[string]any{"name": name, "in": in, "required": required, "schema": s}
	if doc := f.Tag.Get("doc"); doc != "" {
		p["description"] = doc
	}
	return p
}

func copySchema(s schema.Schema) schema.Schema {
	c := make(schema.Schema, len(s))
	for k, v := range s {
		c[k] = v
	}
	return c
}

// pathParams returns the {names} of an op path.
func pathParams(p string) []string {
	var out []string
	for {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(p[i:], '}')
		if j < 0 {
			return out
		}
		out = append(out, p[i+1:i+j])
		p = p[i+j+1:]
	}
}

// hasBody mirrors httpapi.BindInput: GET and DELETE bodies are not read.
func hasBody(method string) bool {
	switch method {
	case http.MethodGet, http.MethodDelete, http.MethodHead:
		return false
	}
	return true
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Handler serves the document. It is built once at start: the op set does
// not change while the server runs.
type Handler struct {
	doc []byte
	// tree is the document before encoding, to name each request's origin
	// in servers.
	tree map[string]any
}

// NewHandler builds the document of the ops of eps and a handler serving it.
func NewHandler(eps httpapi.Endpoints, opts Options) (*Handler, error) {
	doc, err := Document(eps, opts)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("openapi: encode: %w", err)
	}
	return &Handler{doc: b, tree: doc}, nil
}

// Bytes returns the encoded document.
func (h *Handler) Bytes() []byte { return h.doc }

// Mount serves GET /api/openapi.json. The document describes the API, not
// anyone's data, so it needs no credentials (tools fetch it before they have
// a key).
func (h *Handler) Mount(e *echo.Echo) {
	e.GET(Path, func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-cache")
		origin := requestOrigin(c.Request())
		if origin == "" {
			return c.Blob(http.StatusOK, "application/json", h.doc)
		}
		doc := make(map[string]any, len(h.tree))
		for k, v := range h.tree {
			doc[k] = v
		}
		doc["servers"] = servers(origin)
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return fmt.Errorf("openapi: encode: %w", err)
		}
		return c.Blob(http.StatusOK, "application/json", b)
	})
}

var _ httpapi.Mounter = (*Handler)(nil)
