package op

import (
	"fmt"
	"slices"
	"strings"

	"github.com/standmeet/standmeet/internal/domain"
)

// Scope names a part of what an owner can do that an API key may be
// limited to, as fine-grained tokens are: a key issued with scopes calls
// only the ops one of its scopes grants, on every surface alike.
type Scope string

// The scopes an API key may carry.
const (
	// ScopeRead grants every op that only reads (lists, gets, stats) of
	// every group but the account's own (keys, sessions, bans, the owner).
	ScopeRead Scope = "read"
	// ScopePublish grants events.publish and events.publish_batch.
	ScopePublish Scope = "publish"
	// ScopeWebhooks grants every webhooks.* op, reads and writes.
	ScopeWebhooks Scope = "webhooks"
	// ScopeInbound grants every inbound_sources.* op and the supplier
	// connections' ops, reads and writes.
	ScopeInbound Scope = "inbound"
	// ScopeNotes grants the corpus's ops (notes.*, the admin search, the
	// vault import), reads and writes.
	ScopeNotes Scope = "notes"
)

// AllScopes lists every scope, in the order forms and documents show them.
var AllScopes = []Scope{ScopeRead, ScopePublish, ScopeWebhooks, ScopeInbound, ScopeNotes}

// Valid reports whether s is one of AllScopes.
func (s Scope) Valid() bool { return slices.Contains(AllScopes, s) }

// Scopes declares which API key scopes grant an op: any one of them lets a
// scoped key call it. Reads is Scopes{ScopeRead}; Scopes(nil) — also the
// zero Meta's — lets only a full key (and sessions, the CLI) call it.
type Scopes []Scope

// Reads is the grant of an op that only reads and belongs to no area: a key
// with ScopeRead calls it.
var Reads = Scopes{ScopeRead}

// ReadsIn is the grant of an op that only reads and belongs to area: a key
// with ScopeRead or with area calls it.
func ReadsIn(area Scope) Scopes { return Scopes{ScopeRead, area} }

// WritesIn is the grant of an op that changes something in area: only a key
// with area calls it.
func WritesIn(area Scope) Scopes { return Scopes{area} }

// String lists the scopes joined by " or ", as an error message names
// them.
func (g Scopes) String() string {
	parts := make([]string, len(g))
	for i, s := range g {
		parts[i] = string(s)
	}
	return strings.Join(parts, " or ")
}

// CodeForbiddenScope is the code of a call refused because the caller's API
// key lacks every scope that grants the op.
const CodeForbiddenScope = "FORBIDDEN_SCOPE"

// Permits reports whether the caller may call an op granted by g: a caller
// with no scopes (a full API key, a session, the CLI) calls every op; a
// scoped one only an op one of its scopes grants.
func (c Caller) Permits(g Scopes) bool {
	if c.Scopes == nil {
		return true
	}
	for _, s := range c.Scopes {
		if slices.Contains(g, s) {
			return true
		}
	}
	return false
}

// Authorize refuses, with 403 FORBIDDEN_SCOPE naming the scopes that would
// grant it, a caller whose API key may not call the op m describes. Every
// op's Call applies it first; a surface that serves an op without Call
// (the vault import's zip upload) applies it itself.
func Authorize(m Meta, c Caller) error {
	if c.Permits(m.Scopes) {
		return nil
	}
	if len(m.Scopes) == 0 {
		return domain.Forbidden(CodeForbiddenScope, fmt.Sprintf("%s needs a full API key (issued without scopes); this key is limited to %s", m.Name, c.Scopes))
	}
	return domain.Forbidden(CodeForbiddenScope, fmt.Sprintf("%s needs an API key with the scope %s; this key is limited to %s", m.Name, m.Scopes, c.Scopes))
}
