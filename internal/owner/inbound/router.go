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
	// When, if not zero, runs the handler only for messages for which one
	// of its conditions holds. The inbox answers it when it admits a
	// message, so a message no route can want is admitted done with no
	// processing job, and again when an attempt begins (a handler with
	// nothing to do then costs nothing).
	When Condition
}

// Condition is a set of facts about a message's source that the inbox reads
// where it reads the message: in the statement that admits it and in the one
// that begins an attempt. A route can wait for them; a handler cannot ask
// for anything the inbox does not know how to read, so the admission can
// tell in its own statement whether any route wants the message.
type Condition uint8

const (
	// Unconditional: the route wants every message it matches.
	Unconditional Condition = 0
	// IfActivationPending: the source has a supplier connection not
	// activated yet (Message.ActivationPending).
	IfActivationPending Condition = 1
)

// knownConditions are the facts the inbox reads.
const knownConditions = IfActivationPending

// holds reports whether m meets one of c's conditions (always, for
// Unconditional).
func (c Condition) holds(m Message) bool {
	return c == Unconditional || (c&IfActivationPending != 0 && m.ActivationPending)
}

// Need says whether an admitted message needs processing, as far as the
// routes tell from its source kind and event type before it is stored. The
// zero Need processes every message.
type Need struct {
	// Conditional: only routes with a condition match, and the message
	// needs processing only when one of When's conditions holds as it is
	// admitted; otherwise it is admitted done, with no job. When zero, no
	// route matches and the message never needs processing.
	Conditional bool
	When        Condition
}

// Met reports whether a message whose source has the facts needs
// processing. A condition the inbox cannot read counts as met: a message is
// never left unprocessed for a fact nobody checked.
func (n Need) Met(facts Condition) bool {
	return !n.Conditional || n.When&(facts|^knownConditions) != 0
}

// NeedNone is the Need of a message no route matches.
var NeedNone = Need{Conditional: true}

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
		if r.When&^knownConditions != 0 {
			return nil, fmt.Errorf("inbound: route %q: unknown condition %#x", r.Name, uint8(r.When&^knownConditions))
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
		if rt.matches(kind, eventType) {
			out = append(out, rt)
		}
	}
	return out
}

// Need tells the admission of a message of kind with eventType whether it
// needs processing: always when a route without a condition matches, when
// one of the matching routes' conditions holds otherwise, never when no
// route matches.
func (r *Router) Need(kind, eventType string) Need {
	n := NeedNone
	for _, rt := range r.routes {
		if !rt.matches(kind, eventType) {
			continue
		}
		if rt.When == Unconditional {
			return Need{}
		}
		n.When |= rt.When
	}
	return n
}

func (rt Route) matches(kind, eventType string) bool {
	if rt.Kind != AnyKind && rt.Kind != kind {
		return false
	}
	return rt.EventType == "" || rt.EventType == "*" || domain.MatchGlob(rt.EventType, eventType)
}
