package subscriber

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/entity"
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
// wanted by the endpoint it names and only by it, whatever its globs.
func wants(ep Endpoint, ev Event) bool {
	if ev.Type == domain.EventWebhookTest {
		var td testData
		if json.Unmarshal(ev.Data, &td) != nil {
			return false
		}
		return td.EndpointID == ep.ID
	}
	return domain.MatchAnyGlob(ep.EventTypes, ev.Type)
}

// inScope applies seed 002's scope, the one predicate: only
// corpus.note.changed is scoped; every other type reaches every endpoint
// that subscribes to it.
//
//   - raw:// never leaves the instance, whatever else is true;
//   - a standalone endpoint gets the published slice: the note is published
//     now, or was a moment ago (so an unpublish, or a delete of a published
//     note, is heard);
//   - an embed endpoint gets what its embed's code admits (EmbedAdmits, the
//     access domain's answer through entity.AllowsCorpusEntry), asked now.
//     As for a standalone endpoint, a note the code admitted while it was
//     published is heard when it is unpublished. Without an EmbedAdmits
//     function, an embed endpoint gets nothing.
func inScope(ctx context.Context, admits EmbedAdmitsFunc, ep Endpoint, ev Event) (bool, error) {
	if ev.Type != domain.EventCorpusNoteChanged {
		return true, nil
	}
	if ev.Subject == "" || entity.IsRaw(ev.Subject) {
		return false, nil
	}
	var nc noteChange
	if err := json.Unmarshal(ev.Data, &nc); err != nil {
		// A note event we cannot read is not provably in scope.
		return false, nil
	}
	if ep.EmbedID == nil {
		return nc.Published || nc.WasPublished, nil
	}
	if admits == nil {
		return false, nil
	}
	ok, err := admits(ctx, *ep.EmbedID, entity.CorpusEntry{URI: ev.Subject, Published: nc.Published})
	if err != nil {
		return false, fmt.Errorf("embed %s admits %s: %w", ep.EmbedID, ev.Subject, err)
	}
	if ok || !nc.WasPublished || nc.Published {
		return ok, nil
	}
	ok, err = admits(ctx, *ep.EmbedID, entity.CorpusEntry{URI: ev.Subject, Published: true})
	if err != nil {
		return false, fmt.Errorf("embed %s admits %s: %w", ep.EmbedID, ev.Subject, err)
	}
	return ok, nil
}
