// Package op declares the operations of a domain once, so that every surface
// — the admin REST API, the MCP tools, the OpenAPI document and the admin
// UI — is a projection of the same declaration and no op is written twice.
//
// An op is a name ("webhooks.create"), a summary, typed input and output, and
// a handler; the surfaces decide how to reach it (the REST adapter declares
// each op's method and path in its route table). Input structs carry a
// `json` tag on every field (MCP arguments and REST bodies decode by it);
// fields also taken from the URL carry `path:"id"` or `query:"limit"`, and
// may carry `doc:"…"` for generated schemas. Handlers return domain errors
// (domain.Error) that each surface maps to its own status once.
package op

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"

	"github.com/google/uuid"
)

// Caller is who invokes an op. Every row belongs to one owner, and handlers
// scope every read and write by Caller.OwnerID.
type Caller struct {
	OwnerID uuid.UUID
	// APIKeyID is the API key the request authenticated with; zero for a
	// session or an internal caller. Per-key limits count by it.
	APIKeyID uuid.UUID
	// SessionID is the owner session the request came with; zero for an
	// API key or an internal caller.
	SessionID uuid.UUID
	// Scopes are the scopes of the API key the request authenticated with;
	// nil for a full key, a session or an internal caller, who may call
	// every op. Authorize refuses a scoped caller the ops none of them
	// grants.
	Scopes Scopes
}

// ActorOwner is the Actor of a caller with neither an API key nor a
// session: the owner acting directly (the CLI, the server itself).
const ActorOwner = "owner"

// Actor names who acts for the caller, as the records of a change keep it:
// "api_key:<id>" for an API key, "session:<id>" for a signed-in session,
// ActorOwner otherwise.
func (c Caller) Actor() string {
	switch {
	case c.APIKeyID != uuid.Nil:
		return "api_key:" + c.APIKeyID.String()
	case c.SessionID != uuid.Nil:
		return "session:" + c.SessionID.String()
	}
	return ActorOwner
}

// Meta describes an op for its projections.
type Meta struct {
	// Name is the op's stable name, "<group>.<verb>", e.g. "webhooks.create".
	// MCP tools are named after it.
	Name string
	// Summary is one line for tool lists, OpenAPI and UI.
	Summary string
	// Description is optional longer text.
	Description string
	// Public ops need no owner credentials (Caller is zero).
	Public bool
	// MaxBodyBytes, when positive, caps the request body the REST
	// projection reads; a longer one is refused with 413.
	MaxBodyBytes int64
	// Scopes are the API key scopes that grant the op (Reads, ReadsIn,
	// WritesIn); nil: only a full key, since the account's own ops (keys,
	// sessions, bans, the owner) must never be reachable by a key limited
	// to less. Every op's grant is pinned by a test in cmd/server.
	Scopes Scopes
}

// Group returns the part of the name before the first dot.
func (m Meta) Group() string {
	for i := 0; i < len(m.Name); i++ {
		if m.Name[i] == '.' {
			return m.Name[:i]
		}
	}
	return m.Name
}

// Descriptor is the type-erased view of an op that projections use.
type Descriptor interface {
	// Meta describes the op.
	Meta() Meta
	// NewInput returns a pointer to a zero input value to decode into.
	NewInput() any
	// InputType and OutputType are the (non-pointer) input and output types.
	InputType() reflect.Type
	OutputType() reflect.Type
	// Call runs the op with in, a pointer returned by NewInput.
	Call(ctx context.Context, caller Caller, in any) (any, error)
}

// Op is a typed op declaration.
type Op[In, Out any] struct {
	M      Meta
	Handle func(ctx context.Context, caller Caller, in In) (Out, error)
}

// New declares an op.
func New[In, Out any](m Meta, handle func(ctx context.Context, caller Caller, in In) (Out, error)) *Op[In, Out] {
	return &Op[In, Out]{M: m, Handle: handle}
}

// Meta implements Descriptor.
func (o *Op[In, Out]) Meta() Meta { return o.M }

// NewInput implements Descriptor.
func (o *Op[In, Out]) NewInput() any { return new(In) }

// InputType implements Descriptor.
func (o *Op[In, Out]) InputType() reflect.Type { return reflect.TypeFor[In]() }

// OutputType implements Descriptor.
func (o *Op[In, Out]) OutputType() reflect.Type { return reflect.TypeFor[Out]() }

// ErrInputType is the error of a call whose input is not the op's: a bug of
// the surface that made the call, never the client's, so it is a plain error
// (surfaces answer it as an internal error) and the handler does not run.
var ErrInputType = errors.New("op: input of the wrong type")

// Call implements Descriptor. A caller whose API key's scopes do not grant
// the op is refused first (Authorize), so REST, MCP and the admin UI refuse
// it alike and the handler does not run. The input then passes the gate
// (Check), so no handler on any surface sees a NUL byte, invalid UTF-8 or a
// limit out of its range. An input that is not a non-nil *In fails with
// ErrInputType.
func (o *Op[In, Out]) Call(ctx context.Context, caller Caller, in any) (any, error) {
	p, ok := in.(*In)
	if !ok || p == nil {
		return nil, fmt.Errorf("%w: %s takes *%v, got %T", ErrInputType, o.M.Name, reflect.TypeFor[In](), in)
	}
	if err := Authorize(o.M, caller); err != nil {
		return nil, err
	}
	if err := Check(p); err != nil {
		return nil, err
	}
	return o.Handle(ctx, caller, *p)
}

// Set is a list of ops, as a domain exports them and the composition root
// combines them.
type Set []Descriptor

// Find returns the op with that name.
func (s Set) Find(name string) (Descriptor, bool) {
	for _, d := range s {
		if d.Meta().Name == name {
			return d, true
		}
	}
	return nil, false
}

// Sorted returns the ops sorted by name.
func (s Set) Sorted() Set {
	out := append(Set(nil), s...)
	sort.Slice(out, func(i, j int) bool { return out[i].Meta().Name < out[j].Meta().Name })
	return out
}

// Replayer is an output that may be the replay of an earlier request (an
// idempotency key used again) rather than a new effect. The REST projection
// answers a replay with 200 instead of the route's status; the OpenAPI
// document lists both.
type Replayer interface {
	Replayed() bool
}

// Empty is the input or output of an op that takes or returns nothing. A
// REST projection answers an Empty output with no body (204 by convention).
type Empty struct{}
