package corpus_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
)

func item(ref, parentRef string, genre corpus.Genre, title string) corpus.ImportItem {
	return corpus.ImportItem{Ref: ref, ParentRef: parentRef, Fields: corpus.Fields{Genre: genre, Title: title}}
}

func TestImportCreatesEverythingAndRecordsOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	root := b.create(t, corpus.GenreWiki, "Vault", nil)
	pub := item("software/standmeet", "software", corpus.GenreWiki, "StandMeet")
	pub.Published = true
	// Children listed before their parents still land under them.
	res, err := b.svc.Import(b.ctx, b.owner, corpus.ImportInput{ParentID: &root.ID, Items: []corpus.ImportItem{
		pub,
		item("software", "", corpus.GenreWiki, "Software"),
		item("", "software/standmeet", corpus.GenreWriting, "Architecture"),
	}})
	require.NoError(t, err)
	require.Len(t, res.Notes, 3)
	uris := map[string]string{}
	for _, n := range res.Notes {
		uris[n.Note.Title] = n.Note.URI
	}
	require.Equal(t, map[string]string{
		"Software":     "wiki://vault/software",
		"StandMeet":    "wiki://vault/software/standmeet",
		"Architecture": "writing://vault/software/standmeet/architecture",
	}, uris)
	imported := b.recorded(domain.EventVaultImported)
	require.Len(t, imported, 1, "vault.imported once for the whole import")
	var data corpus.VaultImportedData
	require.NoError(t, json.Unmarshal(imported[0].Data, &data))
	require.Equal(t, corpus.VaultImportedData{Notes: 3, Published: 1, ParentID: &root.ID}, data)
	require.Empty(t, b.recorded(domain.EventWritingPublished), "no per-note writing events")
}

func TestImportRefusesBadPlans(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		items []corpus.ImportItem
		kind  domain.Kind
		code  string
	}{
		{"empty", nil, domain.KindValidation, "EMPTY_IMPORT"},
		{"duplicate ref", []corpus.ImportItem{item("a", "", corpus.GenreWiki, "A"), item("a", "", corpus.GenreWiki, "B")}, domain.KindValidation, "DUPLICATE_REF"},
		{"unknown parent", []corpus.ImportItem{item("a", "nope", corpus.GenreWiki, "A")}, domain.KindUnprocessable, "UNKNOWN_PARENT_REF"},
		{"cycle", []corpus.ImportItem{item("a", "b", corpus.GenreWiki, "A"), item("b", "a", corpus.GenreWiki, "B")}, domain.KindUnprocessable, "IMPORT_CYCLE"},
		{"invalid note", []corpus.ImportItem{item("a", "", "poem", "A")}, domain.KindValidation, "INVALID_GENRE"},
		{"wiki under raw", []corpus.ImportItem{item("a", "", corpus.GenreRaw, "A"), item("b", "a", corpus.GenreWiki, "B")}, domain.KindUnprocessable, "RAW_ANCESTOR"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			_, err := b.svc.Import(b.ctx, b.owner, corpus.ImportInput{Items: c.items})
			requireCode(t, err, c.kind, c.code)
			require.Empty(t, b.mem.Events(), "nothing written")
		})
	}
	b := setup(t)
	_, err := b.svc.Import(b.ctx, b.owner, corpus.ImportInput{Items: make([]corpus.ImportItem, corpus.MaxImportNotes+1)})
	requireCode(t, err, domain.KindTooLarge, "IMPORT_TOO_LARGE")
	_, err = b.svc.Import(b.ctx, b.owner, corpus.ImportInput{Items: []corpus.ImportItem{item("", "", "x", "A")}})
	de := domain.AsError(err)
	require.NotNil(t, de)
	require.Equal(t, "notes[0].genre", de.Field, "errors name the item")
}

func TestImportIsAllOrNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	boom := errors.New("recorder down")
	b.mem.Recorder().Fail(func(string) error { return boom })
	_, err := b.svc.Import(b.ctx, b.owner, corpus.ImportInput{Items: []corpus.ImportItem{item("a", "", corpus.GenreWiki, "A")}})
	require.ErrorIs(t, err, boom)
	require.Empty(t, b.mem.Events(), "the notes rolled back with the failed Record")
}

func TestImportFromViewRefusesPerNoteParentID(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	_, err := corpus.ImportFromView(corpus.ImportInputView{Notes: []corpus.ImportNoteInput{{NoteInput: corpus.NoteInput{Genre: "wiki", ParentID: &id}}}})
	requireCode(t, err, domain.KindValidation, "PARENT_ID_IN_IMPORT")
}
