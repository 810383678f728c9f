package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/entity"
	"github.com/standmeet/standmeet/internal/domain/filter"
)

// noteChange is the part of a corpus.note.changed event's data the scope
// needs.
type noteChange struct {
	Published    bool `json:"published"`
	WasPublished bool `json:"was_published"`
}

// testData names an endpoint: the one a webhook.test event is for, or the
// one an operational event is about.
type testData struct {
	EndpointID uuid.UUID `json:"endpoint_id"`
}

// wants reports whether ep subscribes to ev's type. A webhook.test event is
// wanted by the endpoint it names and only by it, whatever its globs.
func wants(ep Endpoint, ev Event) bool {
	if ev.Type == domain.EventWebhookTest {
		return names(ev, ep)
	}
	return domain.MatchAnyGlob(ep.EventTypes, ev.Type) && !aboutItself(ep, ev)
}

// names reports whether ev's data names ep (testData); data that names no
// endpoint names none.
func names(ev Event, ep Endpoint) bool {
	var d testData
	return json.Unmarshal(ev.Data, &d) == nil && d.EndpointID == ep.ID
}

// operationalPrefix starts the types of the operational events about one
// endpoint (webhook.endpoint.failing, .recovered, .disabled).
const operationalPrefix = "webhook.endpoint."

// aboutItself reports whether ev is an operational event about ep: it goes
// to the owner's other endpoints (a chat, a pager), never to ep, which is
// failing or disabled and whose delivery of it would feed the failure.
func aboutItself(ep Endpoint, ev Event) bool {
	return strings.HasPrefix(ev.Type, operationalPrefix) && names(ev, ep)
}

// decide is the fan-out's rule for one endpoint and one event, the one
// place it is made: ep wants ev, is enabled, has ev in scope, and its
// payload filter passes the thin event (a test event skips the filter). It
// returns "" when the event goes to the endpoint, else why not.
func (fs *filters) decide(ctx context.Context, admits EmbedAdmitsFunc, ep Endpoint, ev Event, thin *filter.Event) (Reason, error) {
	if !wants(ep, ev) {
		return ReasonNotSubscribed, nil
	}
	if !ep.Enabled {
		return ReasonDisabled, nil
	}
	if r, err := scope(ctx, admits, ep, ev); err != nil || r != "" {
		return r, err
	}
	if ev.Type != domain.EventWebhookTest && !fs.passes(ep, thin) {
		return ReasonFilteredOut, nil
	}
	return "", nil
}

// Rule applies the fan-out's rule to one endpoint and one event outside a
// fan-out, for the owner's recover and redeliver: "" when the fan-out would
// deliver ev to ep, else the reason it would not. A type that is not
// Webhook-exposed is ReasonNotSubscribed.
func Rule(ctx context.Context, admits EmbedAdmitsFunc, ep Endpoint, ev Event) (Reason, error) {
	if et, ok := domain.LookupEventType(ev.Type); !ok || et.Exposure != domain.Webhook {
		return ReasonNotSubscribed, nil
	}
	var fs filters
	return fs.decide(ctx, admits, ep, ev, &filter.Event{Type: ev.Type, Subject: ev.Subject, Data: ev.Data})
}

// inScope reports whether ev is in ep's scope (see scope).
func inScope(ctx context.Context, admits EmbedAdmitsFunc, ep Endpoint, ev Event) (bool, error) {
	r, err := scope(ctx, admits, ep, ev)
	return r == "", err
}

// scope is the webhook scope, asked at fan-out and again when a delivery
// runs: "" when ev is in ep's scope, else why not. Only corpus.note.changed
// is scoped:
//
//   - raw:// never leaves the instance (ReasonRaw);
//   - a standalone endpoint gets a note published now or a moment ago, so an
//     unpublish or a published note's delete is heard (ReasonUnpublished);
//   - an embed endpoint gets what its embed's code admits now (EmbedAdmits),
//     an unpublish too when the code admitted the note published; without
//     EmbedAdmits, nothing (ReasonEmbedCode).
//
// A note event whose data cannot be read is not provably in scope
// (ReasonOutOfScope).
func scope(ctx context.Context, admits EmbedAdmitsFunc, ep Endpoint, ev Event) (Reason, error) {
	if ev.Type != domain.EventCorpusNoteChanged {
		return "", nil
	}
	if ev.Subject == "" {
		return ReasonOutOfScope, nil
	}
	if entity.IsRaw(ev.Subject) {
		return ReasonRaw, nil
	}
	var nc noteChange
	if err := json.Unmarshal(ev.Data, &nc); err != nil {
		return ReasonOutOfScope, nil
	}
	if ep.EmbedID == nil {
		if nc.Published || nc.WasPublished {
			return "", nil
		}
		return ReasonUnpublished, nil
	}
	if admits == nil {
		return ReasonEmbedCode, nil
	}
	ok, err := admits(ctx, *ep.EmbedID, entity.CorpusEntry{URI: ev.Subject, Published: nc.Published})
	if err == nil && !ok && nc.WasPublished && !nc.Published {
		ok, err = admits(ctx, *ep.EmbedID, entity.CorpusEntry{URI: ev.Subject, Published: true})
	}
	switch {
	case err != nil:
		return "", fmt.Errorf("embed %s admits %s: %w", ep.EmbedID, ev.Subject, err)
	case !ok:
		return ReasonEmbedCode, nil
	}
	return "", nil
}

// maxCachedFilters bounds the parsed filters a Fanouter keeps; past it the
// cache starts afresh (owners have tens of endpoints, so it rarely does).
const maxCachedFilters = 4096

// filters keeps parsed endpoint filters by their stored text, so a fan-out
// parses each filter once rather than once per event.
type filters struct {
	mu     sync.Mutex
	parsed map[string]*filter.Filter
}

// passes reports whether ev passes ep's filter (an endpoint without one
// passes everything). A stored filter that no longer parses passes nothing:
// an event the owner may have filtered out is never sent.
func (fs *filters) passes(ep Endpoint, ev *filter.Event) bool {
	if len(ep.Filter) == 0 {
		return true
	}
	key := string(ep.Filter)
	fs.mu.Lock()
	f, ok := fs.parsed[key]
	fs.mu.Unlock()
	if !ok {
		var err error
		if f, err = filter.Parse(ep.Filter); err != nil {
			return false
		}
		fs.mu.Lock()
		if fs.parsed == nil || len(fs.parsed) >= maxCachedFilters {
			fs.parsed = map[string]*filter.Filter{}
		}
		fs.parsed[key] = f
		fs.mu.Unlock()
	}
	return f.Match(ev)
}
