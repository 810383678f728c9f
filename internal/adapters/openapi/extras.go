package openapi

import (
	"net/http"
	"reflect"
	"strings"

	"github.com/standmeet/standmeet/internal/adapters/httpapi/hook"
	"github.com/standmeet/standmeet/internal/adapters/openapi/schema"
)

// DefaultServer is the server URL the document names when it is built
// without a request (the default listen address); served documents name the
// origin they were fetched from.
const DefaultServer = "http://127.0.0.1:8080"

// tagDescriptions describe the op groups (the part of an op's name before
// the dot). A group missing here is described by tagDescription's fallback.
var tagDescriptions = map[string]string{
	"access_requests":      "Visitors' requests for access to unpublished notes; approving one issues an access code.",
	"api_keys":             "The owner's API keys for this API and the MCP tools; a key is shown once, when issued.",
	"codes":                "Access codes that let visitors read notes an access role covers.",
	"embeds":               "Embeds that expose one access code on another site.",
	"events":               "The instance's event log: every fact recorded with the change that caused it, and poisoned events the relay gave up on.",
	"inbound_sources":      "Webhooks received from outside services: sources with their receive URL /hooks/{id} and secret, their inbox, dead letters and replay.",
	"instance":             "The instance itself (upgrade requests).",
	"ip_bans":              "Addresses banned after repeated failed sign-ins on the owner's account.",
	"jobs":                 "The owner's own River jobs (deliveries, inbound processing), each as River sees it; River's UI is the operator's.",
	"notes":                "The owner's notes (the corpus): create, change, move, publish.",
	"owner":                "The owner's account: email, password, sessions.",
	"roles":                "Access roles: which notes (URI globs) an access code admits.",
	"search":               "Full-text search over every note, drafts included.",
	"supplier_connections": "Suppliers connected through an inbound source; the first verified message activates the connection.",
	"vault":                "Bulk import of notes in one transaction.",
	"webhooks":             "Outbound webhook endpoints: thin, signed (Standard Webhooks), scoped deliveries of the instance's events, with their delivery log.",
	// a new domain's tag goes above this line
}

// tagDescription describes the group name.
func tagDescription(name string) string {
	if d, ok := tagDescriptions[name]; ok {
		return d
	}
	return "Operations on " + strings.ReplaceAll(name, "_", " ") + "."
}

// servers names where the API is: the origin the document was fetched from,
// or DefaultServer.
func servers(origin string) []any {
	if origin == "" {
		origin = DefaultServer
	}
	return []any{map[string]any{"url": origin, "description": "this StandMeet instance"}}
}

// hooksPath describes the inbound gateway, POST /hooks/{id}: public (the
// signature of the source's kind authenticates the sender), its body the
// sender's own, its answers the gateway's.
func hooksPath() map[string]any {
	errRef := map[string]any{"$ref": "#/components/responses/Error"}
	answer := map[string]any{"application/json": map[string]any{"schema": schema.For(reflect.TypeFor[hook.Answer](), schema.Options{})}}
	return map[string]any{
		"post": map[string]any{
			"operationId": "hooks.receive",
			"summary":     "Receive a webhook from an outside service",
			"description": "The receive URL of an inbound source. The request is verified with the source's kind " +
				"(Standard Webhooks, GitHub, Stripe or generic HMAC-SHA256) and secret, deduplicated by its message id, " +
				"and kept in the source's inbox before the answer; processing runs later, with retries and dead letters.",
			"tags":     []any{"inbound_sources"},
			"security": []any{},
			"parameters": []any{map[string]any{
				"name": "id", "in": "path", "required": true, "description": "the inbound source's id",
				"schema": map[string]any{"type": "string", "format": "uuid"},
			}},
			"requestBody": map[string]any{
				"required":    true,
				"description": "the sender's payload, verified byte for byte; at most the source's body limit",
				"content":     map[string]any{"*/*": map[string]any{"schema": map[string]any{}}},
			},
			"responses": map[string]any{
				"202":     map[string]any{"description": "a new message, durably in the inbox", "content": answer},
				"200":     map[string]any{"description": "a duplicate of a message already in the inbox", "content": answer},
				"400":     errRef,
				"401":     errRef,
				"404":     errRef,
				"409":     errRef,
				"413":     errRef,
				"default": errRef,
			},
		},
	}
}

// requestOrigin is the scheme and host a request reached the server at.
func requestOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if r.Host == "" {
		return ""
	}
	return scheme + "://" + r.Host
}
