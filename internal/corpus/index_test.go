package corpus_test

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
)

// drain hands every committed corpus.note.changed event to the indexer, in
// order, as the relay and River would (once each).
func drain(t *testing.T, b testBundle, ix *corpus.Indexer, from int) int {
	t.Helper()
	evs := b.mem.Events()
	for _, e := range evs[from:] {
		if e.Type == domain.EventCorpusNoteChanged {
			require.NoError(t, ix.Handle(b.ctx, e.ID))
		}
	}
	return len(evs)
}

func TestIndexerFollowsTheNotes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ix := corpus.NewIndexer(b.mem)
	require.Equal(t, "corpus.index", corpus.IndexSubscriberName)
	require.Equal(t, []string{domain.EventCorpusNoteChanged}, corpus.IndexSubscriberGlobs())

	top := b.create(t, corpus.GenreWiki, "Top", nil)
	pub, err := b.svc.Create(b.ctx, b.owner, corpus.CreateInput{ParentID: &top.ID,
		Fields: corpus.Fields{Genre: corpus.GenreWiki, Title: "Okapi", Body: "striped legs", Published: true, Lang: "en"}})
	require.NoError(t, err)
	raw := b.create(t, corpus.GenreRaw, "Raw okapi", nil)
	seen := drain(t, b, ix, 0)

	idx := b.mem.Indexed(b.owner)
	require.Len(t, idx, 1, "only the published non-raw note is indexed")
	require.Equal(t, "wiki://top/okapi", idx[pub.ID].URI)
	require.Equal(t, "striped legs", idx[pub.ID].Excerpt, "the body stands in for a missing excerpt")
	require.Equal(t, "en", idx[pub.ID].Lang)
	require.NotContains(t, idx, raw.ID)

	// Renaming the parent re-indexes the subtree with the new path.
	_, err = b.svc.Update(b.ctx, b.owner, top.ID, corpus.Patch{Title: ptr("Zoo")})
	require.NoError(t, err)
	seen = drain(t, b, ix, seen)
	require.Equal(t, "wiki://zoo/okapi", b.mem.Indexed(b.owner)[pub.ID].URI)

	// Running the same events again changes nothing (at-least-once).
	drain(t, b, ix, 0)
	require.Equal(t, "wiki://zoo/okapi", b.mem.Indexed(b.owner)[pub.ID].URI)

	_, err = b.svc.SetPublished(b.ctx, b.owner, pub.ID, false)
	require.NoError(t, err)
	seen = drain(t, b, ix, seen)
	require.Empty(t, b.mem.Indexed(b.owner), "unpublish removes")

	_, err = b.svc.SetPublished(b.ctx, b.owner, pub.ID, true)
	require.NoError(t, err)
	seen = drain(t, b, ix, seen)
	require.Len(t, b.mem.Indexed(b.owner), 1)
	require.NoError(t, b.svc.Delete(b.ctx, b.owner, pub.ID, false))
	drain(t, b, ix, seen)
	require.Empty(t, b.mem.Indexed(b.owner), "delete removes")
}

func TestIndexerReadsCurrentStateNotTheEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ix := corpus.NewIndexer(b.mem)
	n, err := b.svc.Create(b.ctx, b.owner, corpus.CreateInput{Fields: corpus.Fields{Genre: corpus.GenreWiki, Title: "Tapir", Published: true}})
	require.NoError(t, err)
	created := b.mem.Events()[0].ID
	_, err = b.svc.SetPublished(b.ctx, b.owner, n.ID, false)
	require.NoError(t, err)
	// The "created, published" event arrives after the note was unpublished:
	// the index must not resurrect it.
	require.NoError(t, ix.Handle(b.ctx, created))
	require.Empty(t, b.mem.Indexed(b.owner))
}

func TestIndexerOutcomes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ix := corpus.NewIndexer(b.mem)
	require.NoError(t, ix.Handle(b.ctx, uuid.New()), "a pruned event is nothing to do")

	bad := corpus.ChangeEvent{ID: uuid.New(), OwnerID: b.owner, Type: domain.EventCorpusNoteChanged, Data: json.RawMessage(`{"op":1}`)}
	b.mem.InsertEvent(bad)
	require.ErrorIs(t, ix.Handle(b.ctx, bad.ID), corpus.ErrUnprocessableEvent)

	other := corpus.ChangeEvent{ID: uuid.New(), OwnerID: b.owner, Type: domain.EventCodeIssued, Data: json.RawMessage(`{}`)}
	b.mem.InsertEvent(other)
	require.ErrorIs(t, ix.Handle(b.ctx, other.ID), corpus.ErrUnprocessableEvent)
}
