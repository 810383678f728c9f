package inbound

import (
	"context"
	"fmt"

	"github.com/standmeet/standmeet/internal/domain"
)

// Handler processes inbox messages. Delivery is at least once, so a handler
// must be idempotent. Its error is a transient failure unless built with
// Permanent; RetryAfter adds a hint.
type Handler interface {
	HandleInbound(ctx context.Context, m Message) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, m Message) error

// HandleInbound calls f.
func (f HandlerFunc) HandleInbound(ctx context.Context, m Message) error { return f(ctx, m) }

// AnyKind routes a handler to every source kind.
const AnyKind = "*"

// Route sends the messages of one source kind (or AnyKind) whose event type
// matches a glob to a handler. Domains declare their routes; the composition
// root hands them all to NewRouter.
type Route struct {
	// Name identifies the handler in logs and errors ("supplier.activate").
	Name string
	// Kind is a verifier kind, or AnyKind.
	Kind string
	// EventType is a glob over the message's event type (domain.MatchGlob;
	// "*" or empty matches every type, including none).
	EventType string
	Handler   Handler
	// When, if set, skips the handler for a message it returns false for
	// (a handler with nothing to do then costs nothing).
	When func(m Message) bool
}

// Router finds the handlers of a message. It is built once and read-only, so
// it is safe for concurrent use.
type Router struct {
	routes []Route
}

// NewRouter checks and keeps routes, in order.
func NewRouter(routes ...Route) (*Router, error) {
	seen := map[string]bool{}
	for i, r := range routes {
		if r.Name == "" || r.Kind == "" || r.Handler == nil {
			return nil, fmt.Errorf("inbound: route %d: name, kind and handler are required", i)
		}
		if seen[r.Name] {
			return nil, fmt.Errorf("inbound: route %q declared twice", r.Name)
		}
		seen[r.Name] = true
	}
	return &Router{routes: append([]Route(nil), routes...)}, nil
}

// Match returns the routes for a message of kind with eventType, in
// declaration order.
func (r *Router) Match(kind, eventType string) []Route {
	var out []Route
	for _, rt := range r.routes {
		if rt.Kind != AnyKind && rt.Kind != kind {
			continue
		}
		if rt.EventType != "" && rt.EventType != "*" && !domain.MatchGlob(rt.EventType, eventType) {
			continue
		}
		out = append(out, rt)
	}
	return out
}
