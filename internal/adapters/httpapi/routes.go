package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/standmeet/standmeet/internal/domain/op"
)

// Route is the REST projection of one op: its method, its path (a {name}
// segment binds the input field tagged `path:"name"`), the op's name and
// the status of a success (200 when zero; an op.Empty output is answered
// with 204 then).
type Route struct {
	Method string
	Path   string
	Op     string
	Status int
}

// SuccessStatus returns Status, or 200 when unset.
func (r Route) SuccessStatus() int {
	if r.Status == 0 {
		return http.StatusOK
	}
	return r.Status
}

// Routes is the REST route of every op the server declares, one line per op,
// in the order of the contract's table (docs/contract.md) and then by domain. The
// server does not start when an op has no line here or a line names no op
// (Bind). A generator adds a line just above the marker that ends the table.
func Routes() []Route {
	return []Route{
		{"GET", "/api/admin/webhooks", "webhooks.list", 0},
		{"POST", "/api/admin/webhooks", "webhooks.create", http.StatusCreated},
		{"GET", "/api/admin/webhooks/{id}", "webhooks.get", 0},
		{"PATCH", "/api/admin/webhooks/{id}", "webhooks.update", 0},
		{"DELETE", "/api/admin/webhooks/{id}", "webhooks.delete", 0},
		{"POST", "/api/admin/webhooks/{id}/rotate-secret", "webhooks.rotate_secret", 0},
		{"POST", "/api/admin/webhooks/{id}/test", "webhooks.send_test", http.StatusAccepted},
		{"GET", "/api/admin/webhooks/{id}/deliveries", "webhooks.deliveries", 0},
		{"POST", "/api/admin/webhooks/{id}/redeliver", "webhooks.redeliver", 0},
		{"GET", "/api/admin/webhooks/event-types", "webhooks.event_types", 0},
		{"POST", "/api/admin/events", "events.publish", http.StatusAccepted},
		{"POST", "/api/admin/events/batch", "events.publish_batch", http.StatusAccepted},
		{"GET", "/api/admin/webhooks/{id}/deliveries/{job_id}", "webhooks.delivery", 0},
		{"POST", "/api/admin/webhooks/{id}/deliveries/{job_id}/retry", "webhooks.retry_delivery", 0},
		{"POST", "/api/admin/webhooks/{id}/deliveries/{job_id}/resend", "webhooks.resend_delivery", 0},
		{"POST", "/api/admin/webhooks/{id}/recover", "webhooks.recover", http.StatusAccepted},
		{"GET", "/api/admin/events/{id}/deliveries", "webhooks.event_deliveries", 0},
		{"GET", "/api/admin/events/{id}/fanout", "webhooks.event_fanout", 0},
		{"GET", "/api/admin/events/outcomes", "webhooks.event_outcomes", 0},
		{"GET", "/api/admin/webhooks/stats", "webhooks.stats", 0},
		{"GET", "/api/admin/webhooks/{id}/stats", "webhooks.endpoint_stats", 0},
		{"GET", "/api/admin/webhooks/attention", "webhooks.attention", 0},
		{"GET", "/api/admin/events", "events.list", 0},
		{"GET", "/api/admin/events/poisoned", "events.poisoned", 0},
		{"GET", "/api/admin/events/{id}", "events.get", 0},
		{"POST", "/api/admin/events/{id}/release", "events.release", 0},
		{"GET", "/api/admin/jobs/{id}", "jobs.get", 0},
		{"POST", "/api/admin/notes", "notes.create", http.StatusCreated},
		{"GET", "/api/admin/notes/{id}", "notes.get", 0},
		{"PATCH", "/api/admin/notes/{id}", "notes.update", 0},
		{"DELETE", "/api/admin/notes/{id}", "notes.delete", 0},
		{"GET", "/api/admin/notes", "notes.list", 0},
		{"POST", "/api/admin/notes/{id}/publish", "notes.publish", 0},
		{"POST", "/api/admin/notes/{id}/unpublish", "notes.unpublish", 0},
		{"POST", "/api/admin/notes/{id}/move", "notes.move", 0},
		{"POST", "/api/admin/vault/import", "vault.import", http.StatusCreated},
		{"GET", "/api/admin/search", "search.admin", 0},
		{"GET", "/api/admin/inbound-sources", "inbound_sources.list", 0},
		{"GET", "/api/admin/inbound-sources/stats", "inbound_sources.stats", 0},
		{"GET", "/api/admin/inbound-sources/{id}/stats", "inbound_sources.source_stats", 0},
		{"POST", "/api/admin/inbound-sources", "inbound_sources.create", http.StatusCreated},
		{"GET", "/api/admin/inbound-sources/{id}", "inbound_sources.get", 0},
		{"PATCH", "/api/admin/inbound-sources/{id}", "inbound_sources.update", 0},
		{"DELETE", "/api/admin/inbound-sources/{id}", "inbound_sources.delete", 0},
		{"POST", "/api/admin/inbound-sources/{id}/rotate-secret", "inbound_sources.rotate_secret", 0},
		{"GET", "/api/admin/inbound-sources/{id}/refusals", "inbound_sources.refusals", 0},
		{"GET", "/api/admin/inbound-sources/{id}/messages", "inbound_sources.messages", 0},
		{"GET", "/api/admin/inbound-sources/{id}/messages/{message_id}", "inbound_sources.message", 0},
		{"GET", "/api/admin/inbound-sources/{id}/dead-letters", "inbound_sources.dead_letters", 0},
		{"POST", "/api/admin/inbound-sources/{id}/dead-letters/{message_id}/replay", "inbound_sources.replay_dead_letter", 0},
		{"POST", "/api/admin/inbound-sources/{id}/dead-letters/replay", "inbound_sources.replay_dead_letters", 0},
		{"GET", "/api/admin/supplier-connections", "supplier_connections.list", 0},
		{"POST", "/api/admin/supplier-connections", "supplier_connections.create", http.StatusCreated},
		{"GET", "/api/admin/supplier-connections/{id}", "supplier_connections.get", 0},
		{"DELETE", "/api/admin/supplier-connections/{id}", "supplier_connections.delete", 0},
		{"GET", "/api/admin/me", "owner.me", 0},
		{"POST", "/api/admin/me/email", "owner.change_email", 0},
		{"POST", "/api/admin/me/password", "owner.change_password", 0},
		{"POST", "/api/admin/me/sessions/end", "owner.end_sessions", 0},
		{"GET", "/api/admin/me/sessions", "owner.sessions", 0},
		{"DELETE", "/api/admin/me/sessions/{id}", "owner.end_session", 0},
		{"GET", "/api/admin/api-keys", "api_keys.list", 0},
		{"POST", "/api/admin/api-keys", "api_keys.issue", http.StatusCreated},
		{"DELETE", "/api/admin/api-keys/{id}", "api_keys.revoke", 0},
		{"GET", "/api/admin/ip-bans", "ip_bans.list", 0},
		{"DELETE", "/api/admin/ip-bans/{id}", "ip_bans.lift", 0},
		{"POST", "/api/admin/instance/upgrade-request", "instance.request_upgrade", http.StatusAccepted},
		{"GET", "/api/admin/roles", "roles.list", 0},
		{"POST", "/api/admin/roles", "roles.create", http.StatusCreated},
		{"PATCH", "/api/admin/roles/{id}", "roles.update", 0},
		{"DELETE", "/api/admin/roles/{id}", "roles.delete", 0},
		{"GET", "/api/admin/codes", "codes.list", 0},
		{"POST", "/api/admin/codes", "codes.issue", http.StatusCreated},
		{"GET", "/api/admin/codes/{id}", "codes.get", 0},
		{"POST", "/api/admin/codes/{id}/revoke", "codes.revoke", 0},
		{"POST", "/api/admin/codes/{id}/check", "codes.check", 0},
		{"GET", "/api/admin/embeds", "embeds.list", 0},
		{"POST", "/api/admin/embeds", "embeds.create", http.StatusCreated},
		{"DELETE", "/api/admin/embeds/{id}", "embeds.delete", 0},
		{"GET", "/api/admin/access-requests", "access_requests.list", 0},
		{"POST", "/api/admin/access-requests/{id}/approve", "access_requests.approve", 0},
		{"POST", "/api/admin/access-requests/{id}/reject", "access_requests.reject", 0},
		// new routes go above this line
	}
}

// Endpoint is an op with its REST route.
type Endpoint struct {
	Route
	Descriptor op.Descriptor
}

// Endpoints are the REST projection of an op set, as Bind returns it.
type Endpoints []Endpoint

// Find returns the endpoint of the op with that name.
func (es Endpoints) Find(name string) (Endpoint, bool) {
	for _, e := range es {
		if e.Op == name {
			return e, true
		}
	}
	return Endpoint{}, false
}

// Ops returns the ops of the endpoints.
func (es Endpoints) Ops() op.Set {
	out := make(op.Set, len(es))
	for i, e := range es {
		out[i] = e.Descriptor
	}
	return out
}

// Bind pairs every op of ops with its route, in the order of routes. It
// fails, naming the op or the route, when an op has no route, a route names
// no op of ops, an op has two routes or two routes share a method and path.
func Bind(ops op.Set, routes []Route) (Endpoints, error) {
	byName := make(map[string]op.Descriptor, len(ops))
	for _, d := range ops {
		name := d.Meta().Name
		if _, dup := byName[name]; dup {
			return nil, fmt.Errorf("httpapi: op %s is declared twice", name)
		}
		byName[name] = d
	}
	var problems []string
	routed := make(map[string]bool, len(routes))
	seen := make(map[string]string, len(routes))
	out := make(Endpoints, 0, len(routes))
	for _, r := range routes {
		at := r.Method + " " + r.Path
		if other, dup := seen[at]; dup {
			problems = append(problems, fmt.Sprintf("route %s is declared for both %s and %s", at, other, r.Op))
			continue
		}
		seen[at] = r.Op
		if routed[r.Op] {
			problems = append(problems, fmt.Sprintf("op %s has a second route %s", r.Op, at))
			continue
		}
		routed[r.Op] = true
		d, ok := byName[r.Op]
		if !ok {
			problems = append(problems, fmt.Sprintf("route %s names op %s, which is not declared", at, r.Op))
			continue
		}
		out = append(out, Endpoint{Route: r, Descriptor: d})
	}
	for _, d := range ops {
		if name := d.Meta().Name; !routed[name] {
			problems = append(problems, fmt.Sprintf("op %s has no REST route (add its line to the route table)", name))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("httpapi: the route table does not match the ops: %s", strings.Join(problems, "; "))
	}
	return out, nil
}
