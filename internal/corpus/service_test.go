package corpus_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/corpus/corpustest"
	"github.com/standmeet/standmeet/internal/domain"
)

type testBundle struct {
	svc   *corpus.Service
	mem   *corpustest.Memory
	owner uuid.UUID
	ctx   context.Context
}

func setup(t *testing.T) testBundle {
	t.Helper()
	mem := corpustest.NewMemory()
	return testBundle{svc: corpus.NewService(mem), mem: mem, owner: uuid.New(), ctx: context.Background()}
}

// recorded returns the committed events of type typ.
func (b testBundle) recorded(typ string) []corpustest.Event {
	var out []corpustest.Event
	for _, e := range b.mem.Events() {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func (b testBundle) create(t *testing.T, genre corpus.Genre, title string, parent *uuid.UUID) corpus.Note {
	t.Helper()
	n, err := b.svc.Create(b.ctx, b.owner, corpus.CreateInput{Fields: corpus.Fields{Genre: genre, Title: title}, ParentID: parent})
	require.NoError(t, err)
	return n
}

func requireCode(t *testing.T, err error, kind domain.Kind, code string) {
	t.Helper()
	de := domain.AsError(err)
	require.NotNil(t, de, "want a domain error %s, got %v", code, err)
	require.Equal(t, code, de.Code, "error %v", err)
	require.Equal(t, kind, de.Kind, "error %v", err)
}

func ptr[T any](v T) *T { return &v }

func TestCreateValidates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		fields corpus.Fields
		kind   domain.Kind
		code   string
	}{
		{"no genre", corpus.Fields{Title: "x"}, domain.KindValidation, "INVALID_GENRE"},
		{"unknown genre", corpus.Fields{Genre: "poem", Title: "x"}, domain.KindValidation, "INVALID_GENRE"},
		{"raw published", corpus.Fields{Genre: corpus.GenreRaw, Title: "x", Published: true}, domain.KindUnprocessable, "RAW_NOT_PUBLISHABLE"},
		{"title too long", corpus.Fields{Genre: corpus.GenreWiki, Title: strings.Repeat("x", corpus.MaxTitleLen+1)}, domain.KindValidation, "TOO_LONG"},
		{"NUL in body", corpus.Fields{Genre: corpus.GenreWiki, Body: "a\x00b"}, domain.KindValidation, "INVALID_TEXT"},
		{"invalid UTF-8 title", corpus.Fields{Genre: corpus.GenreWiki, Title: "\xff"}, domain.KindValidation, "INVALID_TEXT"},
		{"empty tag", corpus.Fields{Genre: corpus.GenreWiki, Tags: []string{"a", " "}}, domain.KindValidation, "EMPTY_ITEM"},
		{"too many tags", corpus.Fields{Genre: corpus.GenreWiki, Tags: make([]string, corpus.MaxListLen+1)}, domain.KindValidation, "TOO_MANY"},
		{"css class with a space", corpus.Fields{Genre: corpus.GenreWiki, CSSClasses: []string{"a b"}}, domain.KindValidation, "INVALID_CSS_CLASS"},
		{"bad lang", corpus.Fields{Genre: corpus.GenreWiki, Lang: "english!"}, domain.KindValidation, "INVALID_LANG"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			_, err := b.svc.Create(b.ctx, b.owner, corpus.CreateInput{Fields: c.fields})
			requireCode(t, err, c.kind, c.code)
			require.Empty(t, b.mem.Events(), "nothing written")
		})
	}
}

func TestCreateNormalisesAndComputesTheURI(t *testing.T) {
	t.Parallel()
	b := setup(t)
	parent := b.create(t, corpus.GenreWiki, "Software", nil)
	n, err := b.svc.Create(b.ctx, b.owner, corpus.CreateInput{ParentID: &parent.ID, Fields: corpus.Fields{
		Genre: " WIKI ", Title: "  Project StandMeet ", Tags: []string{" go ", "go", "db"}, Lang: "en-GB"}})
	require.NoError(t, err)
	require.Equal(t, corpus.GenreWiki, n.Genre)
	require.Equal(t, "Project StandMeet", n.Title)
	require.Equal(t, []string{"go", "db"}, n.Tags)
	require.Equal(t, "wiki://software/project-standmeet", n.URI)
	got, err := b.svc.Get(b.ctx, b.owner, n.ID)
	require.NoError(t, err)
	require.Equal(t, n.URI, got.URI)
	_, err = b.svc.Get(b.ctx, uuid.New(), n.ID)
	require.ErrorIs(t, err, domain.ErrNotFound, "another owner's note is not found")
}

func TestCreatePlacement(t *testing.T) {
	t.Parallel()
	b := setup(t)
	raw := b.create(t, corpus.GenreRaw, "Inbox", nil)
	wiki := b.create(t, corpus.GenreWiki, "Wiki", nil)
	missing := uuid.New()
	_, err := b.svc.Create(b.ctx, b.owner, corpus.CreateInput{Fields: corpus.Fields{Genre: corpus.GenreWiki, Title: "x"}, ParentID: &missing})
	requireCode(t, err, domain.KindUnprocessable, "PARENT_NOT_FOUND")
	_, err = b.svc.Create(b.ctx, uuid.New(), corpus.CreateInput{Fields: corpus.Fields{Genre: corpus.GenreWiki, Title: "x"}, ParentID: &wiki.ID})
	requireCode(t, err, domain.KindUnprocessable, "PARENT_NOT_FOUND")
	_, err = b.svc.Create(b.ctx, b.owner, corpus.CreateInput{Fields: corpus.Fields{Genre: corpus.GenreWiki, Title: "x"}, ParentID: &raw.ID})
	requireCode(t, err, domain.KindUnprocessable, "RAW_ANCESTOR")
	// Raw under raw, and raw under wiki, are fine.
	b.create(t, corpus.GenreRaw, "capture", &raw.ID)
	b.create(t, corpus.GenreRaw, "capture", &wiki.ID)
	// Depth is bounded.
	parent := wiki.ID
	for i := 2; i <= corpus.MaxDepth; i++ {
		parent = b.create(t, corpus.GenreWiki, "level", &parent).ID
	}
	_, err = b.svc.Create(b.ctx, b.owner, corpus.CreateInput{Fields: corpus.Fields{Genre: corpus.GenreWiki, Title: "too deep"}, ParentID: &parent})
	requireCode(t, err, domain.KindUnprocessable, "TOO_DEEP")
}

func TestWritingPublishEventsAreRecordedInTheTransaction(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w, err := b.svc.Create(b.ctx, b.owner, corpus.CreateInput{Fields: corpus.Fields{Genre: corpus.GenreWriting, Title: "Essay", Published: true}})
	require.NoError(t, err)
	pub := b.recorded(domain.EventWritingPublished)
	require.Len(t, pub, 1, "created published")
	require.Equal(t, "writing://essay", pub[0].Subject)
	require.JSONEq(t, `{"note_id":"`+w.ID.String()+`"}`, string(pub[0].Data))
	require.Equal(t, b.owner, pub[0].OwnerID)

	_, err = b.svc.SetPublished(b.ctx, b.owner, w.ID, true)
	require.NoError(t, err)
	require.Len(t, b.recorded(domain.EventWritingPublished), 1, "publishing a published writing records nothing")

	_, err = b.svc.Update(b.ctx, b.owner, w.ID, corpus.Patch{Published: ptr(false), Title: ptr("Essay Two")})
	require.NoError(t, err)
	unpub := b.recorded(domain.EventWritingUnpublished)
	require.Len(t, unpub, 1)
	require.Equal(t, "writing://essay-two", unpub[0].Subject)

	_, err = b.svc.SetPublished(b.ctx, b.owner, w.ID, true)
	require.NoError(t, err)
	// A genre change away from writing unpublishes the writing.
	_, err = b.svc.Update(b.ctx, b.owner, w.ID, corpus.Patch{Genre: ptr(corpus.GenreWiki)})
	require.NoError(t, err)
	require.Len(t, b.recorded(domain.EventWritingUnpublished), 2)

	// A wiki note publishing records no writing event.
	wiki := b.create(t, corpus.GenreWiki, "Wiki", nil)
	_, err = b.svc.SetPublished(b.ctx, b.owner, wiki.ID, true)
	require.NoError(t, err)
	require.Len(t, b.recorded(domain.EventWritingPublished), 2)
}

func TestARecordFailureRollsTheWriteBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.create(t, corpus.GenreWriting, "Draft", nil)
	boom := errors.New("recorder down")
	b.mem.Recorder().Fail(func(string) error { return boom })
	_, err := b.svc.SetPublished(b.ctx, b.owner, w.ID, true)
	require.ErrorIs(t, err, boom)
	_, err = b.svc.Create(b.ctx, b.owner, corpus.CreateInput{Fields: corpus.Fields{Genre: corpus.GenreWriting, Title: "New", Published: true}})
	require.ErrorIs(t, err, boom)
	b.mem.Recorder().Fail(nil)
	got, err := b.svc.Get(b.ctx, b.owner, w.ID)
	require.NoError(t, err)
	require.False(t, got.Published, "the publish rolled back with its event")
	page, err := b.svc.List(b.ctx, b.owner, corpus.ListInput{})
	require.NoError(t, err)
	require.Len(t, page.Notes, 1, "the create rolled back with its event")
}

func TestUpdateKeepsTheRules(t *testing.T) {
	t.Parallel()
	b := setup(t)
	parent := b.create(t, corpus.GenreWiki, "Parent", nil)
	child := b.create(t, corpus.GenreWiki, "Child", &parent.ID)
	_, err := b.svc.Update(b.ctx, b.owner, parent.ID, corpus.Patch{Genre: ptr(corpus.GenreRaw)})
	requireCode(t, err, domain.KindUnprocessable, "RAW_ANCESTOR")
	raw := b.create(t, corpus.GenreRaw, "Raw", nil)
	rawChild := b.create(t, corpus.GenreRaw, "Raw child", &raw.ID)
	_, err = b.svc.Update(b.ctx, b.owner, rawChild.ID, corpus.Patch{Genre: ptr(corpus.GenreWiki)})
	requireCode(t, err, domain.KindUnprocessable, "RAW_ANCESTOR")
	_, err = b.svc.Update(b.ctx, b.owner, raw.ID, corpus.Patch{Published: ptr(true)})
	requireCode(t, err, domain.KindUnprocessable, "RAW_NOT_PUBLISHABLE")
	_, err = b.svc.Update(b.ctx, uuid.New(), child.ID, corpus.Patch{Title: ptr("x")})
	require.ErrorIs(t, err, domain.ErrNotFound)
	n, err := b.svc.Update(b.ctx, b.owner, child.ID, corpus.Patch{Slug: ptr("kid"), Tags: ptr([]string{"t"})})
	require.NoError(t, err)
	require.Equal(t, "wiki://parent/kid", n.URI)
	require.Equal(t, "Child", n.Title, "fields not in the patch stay")
	require.Equal(t, []string{"t"}, n.Tags)
}

func TestMove(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a := b.create(t, corpus.GenreWiki, "A", nil)
	ab := b.create(t, corpus.GenreWiki, "B", &a.ID)
	abc := b.create(t, corpus.GenreWiki, "C", &ab.ID)
	other := b.create(t, corpus.GenreWiki, "Other", nil)
	raw := b.create(t, corpus.GenreRaw, "Raw", nil)

	_, err := b.svc.Move(b.ctx, b.owner, a.ID, &a.ID)
	requireCode(t, err, domain.KindUnprocessable, "MOVE_CYCLE")
	_, err = b.svc.Move(b.ctx, b.owner, a.ID, &abc.ID)
	requireCode(t, err, domain.KindUnprocessable, "MOVE_CYCLE")
	_, err = b.svc.Move(b.ctx, b.owner, a.ID, &raw.ID)
	requireCode(t, err, domain.KindUnprocessable, "RAW_ANCESTOR")

	before := len(b.mem.Events())
	same, err := b.svc.Move(b.ctx, b.owner, ab.ID, &a.ID)
	require.NoError(t, err)
	require.Equal(t, ab.URI, same.URI)
	require.Len(t, b.mem.Events(), before, "moving to the current parent writes nothing")

	moved, err := b.svc.Move(b.ctx, b.owner, ab.ID, &other.ID)
	require.NoError(t, err)
	require.Equal(t, "wiki://other/b", moved.URI)
	c, err := b.svc.Get(b.ctx, b.owner, abc.ID)
	require.NoError(t, err)
	require.Equal(t, "wiki://other/b/c", c.URI, "the subtree moved along")
	evs := b.mem.Events()
	var data corpus.NoteChange
	require.NoError(t, json.Unmarshal(evs[len(evs)-1].Data, &data))
	require.True(t, data.PathChanged)

	root, err := b.svc.Move(b.ctx, b.owner, ab.ID, nil)
	require.NoError(t, err)
	require.Equal(t, "wiki://b", root.URI)

	// The subtree's height counts against the depth limit.
	deep := b.create(t, corpus.GenreWiki, "deep", nil).ID
	for i := 2; i < corpus.MaxDepth; i++ {
		deep = b.create(t, corpus.GenreWiki, "deep", &deep).ID
	}
	_, err = b.svc.Move(b.ctx, b.owner, ab.ID, &deep) // B has a child: 31 + 1 + 1 > 32
	requireCode(t, err, domain.KindUnprocessable, "TOO_DEEP")
	_, err = b.svc.Move(b.ctx, b.owner, abc.ID, &deep) // a leaf fits at 32
	require.NoError(t, err)
}

func TestDelete(t *testing.T) {
	t.Parallel()
	b := setup(t)
	top, err := b.svc.Create(b.ctx, b.owner, corpus.CreateInput{Fields: corpus.Fields{Genre: corpus.GenreWiki, Title: "Top"}})
	require.NoError(t, err)
	mid := b.create(t, corpus.GenreWiki, "Mid", &top.ID)
	leaf, err := b.svc.Create(b.ctx, b.owner, corpus.CreateInput{ParentID: &mid.ID,
		Fields: corpus.Fields{Genre: corpus.GenreWriting, Title: "Leaf", Published: true}})
	require.NoError(t, err)

	err = b.svc.Delete(b.ctx, b.owner, top.ID, false)
	requireCode(t, err, domain.KindConflict, "NOTE_HAS_CHILDREN")
	require.ErrorIs(t, b.svc.Delete(b.ctx, uuid.New(), top.ID, true), domain.ErrNotFound)

	before := len(b.mem.Events())
	require.NoError(t, b.svc.Delete(b.ctx, b.owner, top.ID, true))
	evs := b.mem.Events()[before:]
	var deleted []string
	for _, e := range evs {
		if e.Type == domain.EventCorpusNoteChanged {
			deleted = append(deleted, e.Subject)
		}
	}
	require.Equal(t, []string{"writing://top/mid/leaf", "wiki://top/mid", "wiki://top"}, deleted,
		"deepest first, each with its last URI")
	unpub := b.recorded(domain.EventWritingUnpublished)
	require.Len(t, unpub, 1, "a published writing deleted is unpublished")
	require.Equal(t, "writing://top/mid/leaf", unpub[0].Subject)
	_, err = b.svc.Get(b.ctx, b.owner, leaf.ID)
	require.ErrorIs(t, err, domain.ErrNotFound)
}

func TestListPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for range 5 {
		b.create(t, corpus.GenreWiki, "n", nil)
	}
	var seen []uuid.UUID
	cursor := ""
	for {
		page, err := b.svc.List(b.ctx, b.owner, corpus.ListInput{Limit: 2, Cursor: cursor})
		require.NoError(t, err)
		for _, n := range page.Notes {
			seen = append(seen, n.ID)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	require.Len(t, seen, 5)
	_, err := b.svc.List(b.ctx, b.owner, corpus.ListInput{Cursor: "not-a-cursor"})
	requireCode(t, err, domain.KindValidation, "INVALID_CURSOR")
	_, err = b.svc.List(b.ctx, b.owner, corpus.ListInput{Genre: "poem"})
	requireCode(t, err, domain.KindValidation, "INVALID_GENRE")
}

func TestSearch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.svc.Create(b.ctx, b.owner, corpus.CreateInput{Fields: corpus.Fields{Genre: corpus.GenreWiki, Title: "Quokka draft"}})
	require.NoError(t, err)
	_, err = b.svc.SearchAdmin(b.ctx, b.owner, "  ", 0)
	requireCode(t, err, domain.KindValidation, "QUERY_REQUIRED")
	_, err = b.svc.SearchAdmin(b.ctx, b.owner, strings.Repeat("q", corpus.MaxQueryLen+1), 0)
	requireCode(t, err, domain.KindValidation, "INVALID_QUERY")
	hits, err := b.svc.SearchAdmin(b.ctx, b.owner, "quokka", 0)
	require.NoError(t, err)
	require.Len(t, hits, 1, "admin search sees drafts")
	hits, err = b.svc.SearchPublished(b.ctx, b.owner, "quokka", 0)
	require.NoError(t, err)
	require.Empty(t, hits, "public search does not")
}
