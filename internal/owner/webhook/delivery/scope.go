package delivery

import (
	"context"
	"encoding/json"
	"fmt"

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

// testData is the data of a webhook.test event: the one endpoint it is for.
type testData struct {
	EndpointID uuid.UUID `json:"endpoint_id"`
}

// wants reports whether ep subscribes to ev's type. A webhook.test event is
// wanted by the endpoint it names and only by it, whatever its globs; an
// operational event about an endpoint is never wanted by that endpoint.
func wants(ep Endpoint, ev Event) bool {
	if ev.Type == domain.EventWebhookTest {
		var td testData
		if json.Unmarshal(ev.Data, &td) != nil {
			return false
		}
		return td.EndpointID == ep.ID
	}
	return domain.MatchAnyGlob(ep.EventTypes, ev.Type) && !aboutItself(ep, ev)
}

// decide is the fan-out's rule for one endpoint and one event, the one
// place it is made: the endpoint subscribes (wants: a webhook.test only to
// its own endpoint, an event about an endpoint never to it), is enabled,
// has the event in scope, and its payload filter passes the thin event (a
// test event skips the filter). It returns "" when the event goes to the
// endpoint, else why not.
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

// Rule applies the fan-out's rule (decide) to one endpoint and one event
// outside a fan-out, for the owner's recover and redeliver: "" when the
// fan-out would deliver ev to ep, else the reason it would not. A type
// that is not Webhook-exposed is ReasonNotSubscribed.
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

// scope applies the webhook scope, the one predicate, and says why an event
// is out of it ("" when it is in): only corpus.note.changed is scoped;
// every other type reaches every endpoint that subscribes to it.
//
//   - raw:// never leaves the instance, whatever else is true (ReasonRaw);
//   - a standalone endpoint gets the published slice: the note is published
//     now, or was a moment ago, so an unpublish, or a delete of a published
//     note, is heard (else ReasonUnpublished);
//   - an embed endpoint gets what its embed's code admits (EmbedAdmits, the
//     access domain's answer through entity.AllowsCorpusEntry), asked now.
//     As for a standalone endpoint, a note the code admitted while it was
//     published is heard when it is unpublished. Without an EmbedAdmits
//     function, an embed endpoint gets nothing (else ReasonEmbedCode).
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
	verdict := func(ok bool) Reason {
		if ok {
			return ""
		}
		return ReasonEmbedCode
	}
	ok, err := admits(ctx, *ep.EmbedID, entity.CorpusEntry{URI: ev.Subject, Published: nc.Published})
	if err != nil {
		return "", fmt.Errorf("embed %s admits %s: %w", ep.EmbedID, ev.Subject, err)
	}
	if ok || !nc.WasPublished || nc.Published {
		return verdict(ok), nil
	}
	ok, err = admits(ctx, *ep.EmbedID, entity.CorpusEntry{URI: ev.Subject, Published: true})
	if err != nil {
		return "", fmt.Errorf("embed %s admits %s: %w", ep.EmbedID, ev.Subject, err)
	}
	return verdict(ok), nil
}
