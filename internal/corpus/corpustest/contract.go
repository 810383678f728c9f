package corpustest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"testing"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
)

// Harness is one implementation of the corpus ports under test.
type Harness struct {
	// UoW is the unit of work under test, on an empty store.
	UoW corpus.UnitOfWork
	// ChangeEvents returns the committed events of owner, oldest first.
	ChangeEvents func(t *testing.T, ownerID uuid.UUID) []corpus.ChangeEvent
	// NewOwner returns the id of an owner notes may belong to.
	NewOwner func(t *testing.T) uuid.UUID
}

// RunContract runs the contract every implementation of the corpus ports
// passes. newHarness returns a fresh, empty implementation per subtest.
// Subtests run in parallel.
func RunContract(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"insert and get keep every field and compute the URI", contractRoundTrip},
		{"another owner's note is not found", contractOwnerIsolation},
		{"URIs follow the parent chain, slug and fallbacks", contractURIs},
		{"ancestors nearest first, descendants deepest first", contractTree},
		{"update changes fields and the URIs below", contractUpdate},
		{"delete refuses a parent and removes a leaf", contractDelete},
		{"list filters and pages newest first", contractList},
		{"admin search sees drafts of the owner only", contractAdminSearch},
		{"index upsert, search and remove", contractIndex},
		{"row events: shape, watched columns, no-op update, delete subject", contractTrigger},
		{"recorded events are readable and roll back with the work", contractRecordAndRollback},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t))
		})
	}
}

// do runs fn in one unit of work and fails the test on error.
func do(t *testing.T, h Harness, fn func(tx corpus.Tx) error) {
	t.Helper()
	if err := h.UoW.Do(context.Background(), fn); err != nil {
		t.Fatalf("unit of work: %v", err)
	}
}

func mustEqual(t *testing.T, want, got any, what string) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%s:\nwant %#v\n got %#v", what, want, got)
	}
}

func mustNotFound(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("%s: want domain.ErrNotFound, got %v", what, err)
	}
}

func newID(t *testing.T) uuid.UUID {
	t.Helper()
	id, err := uuid.NewV7()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// insert creates a note with the given title under parent (nil: root).
func insert(t *testing.T, h Harness, owner uuid.UUID, genre corpus.Genre, title string, parent *uuid.UUID) corpus.Note {
	t.Helper()
	var out corpus.Note
	do(t, h, func(tx corpus.Tx) error {
		var err error
		out, err = tx.Notes().Insert(context.Background(), corpus.Note{ID: newID(t), OwnerID: owner, Genre: genre, Title: title, ParentID: parent})
		return err
	})
	return out
}

func get(t *testing.T, h Harness, owner, id uuid.UUID) corpus.Note {
	t.Helper()
	var out corpus.Note
	do(t, h, func(tx corpus.Tx) error {
		var err error
		out, err = tx.Notes().Get(context.Background(), owner, id)
		return err
	})
	return out
}

func ptr[T any](v T) *T { return &v }

func contractRoundTrip(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	parent := insert(t, h, owner, corpus.GenreWiki, "Software", nil)
	n := corpus.Note{ID: newID(t), OwnerID: owner, Genre: corpus.GenreWriting, Title: "Über Alles", Body: "body\ntext",
		Tags: []string{"a", "b"}, ParentID: &parent.ID, Published: true, ShowAsSource: true, Aliases: []string{"x"},
		Excerpt: "ex", Slug: "", Archived: true, CSSClasses: []string{"wide"}, Lang: "de"}
	var stored, got, locked corpus.Note
	do(t, h, func(tx corpus.Tx) error {
		var err error
		if stored, err = tx.Notes().Insert(ctx, n); err != nil {
			return err
		}
		if got, err = tx.Notes().Get(ctx, owner, n.ID); err != nil {
			return err
		}
		locked, err = tx.Notes().GetForUpdate(ctx, owner, n.ID)
		return err
	})
	if stored.CreatedAt.IsZero() || stored.UpdatedAt.IsZero() {
		t.Fatalf("timestamps not set: %+v", stored)
	}
	want := n
	want.CreatedAt, want.UpdatedAt = stored.CreatedAt, stored.UpdatedAt
	want.URI = "writing://software/über-alles"
	mustEqual(t, want, stored, "inserted note")
	mustEqual(t, stored.URI, got.URI, "uri on get")
	mustEqual(t, stored.Tags, got.Tags, "tags on get")
	mustEqual(t, stored.ID, locked.ID, "get for update")
	if !got.CreatedAt.Equal(stored.CreatedAt) {
		t.Fatalf("created_at changed between insert and get")
	}
	// Nil lists are stored as empty lists.
	empty := insert(t, h, owner, corpus.GenreWiki, "Empty", nil)
	mustEqual(t, []string{}, get(t, h, owner, empty.ID).Tags, "nil tags read back")
	var many []corpus.Note
	do(t, h, func(tx corpus.Tx) error {
		var err error
		many, err = tx.Notes().GetMany(ctx, owner, []uuid.UUID{parent.ID, n.ID, uuid.New()})
		return err
	})
	mustEqual(t, 2, len(many), "GetMany skips unknown ids")
}

func contractOwnerIsolation(t *testing.T, h Harness) {
	ctx := context.Background()
	owner, other := h.NewOwner(t), h.NewOwner(t)
	n := insert(t, h, owner, corpus.GenreWiki, "Mine", nil)
	err := h.UoW.Do(ctx, func(tx corpus.Tx) error {
		_, err := tx.Notes().Get(ctx, other, n.ID)
		return err
	})
	mustNotFound(t, err, "get as another owner")
	err = h.UoW.Do(ctx, func(tx corpus.Tx) error { return tx.Notes().Delete(ctx, other, n.ID) })
	mustNotFound(t, err, "delete as another owner")
	n2 := n
	n2.OwnerID = other
	err = h.UoW.Do(ctx, func(tx corpus.Tx) error {
		_, err := tx.Notes().Update(ctx, n2)
		return err
	})
	mustNotFound(t, err, "update as another owner")
	// A note cannot go under another owner's parent.
	err = h.UoW.Do(ctx, func(tx corpus.Tx) error {
		_, err := tx.Notes().Insert(ctx, corpus.Note{ID: newID(t), OwnerID: other, Genre: corpus.GenreWiki, Title: "x", ParentID: &n.ID})
		return err
	})
	if err == nil {
		t.Fatal("insert under another owner's parent succeeded")
	}
	var many []corpus.Note
	do(t, h, func(tx corpus.Tx) error {
		var err error
		many, err = tx.Notes().GetMany(ctx, other, []uuid.UUID{n.ID})
		return err
	})
	mustEqual(t, 0, len(many), "GetMany as another owner")
}

func contractURIs(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	sw := insert(t, h, owner, corpus.GenreWiki, "Software", nil)
	proj := insert(t, h, owner, corpus.GenreWiki, "  Project!! ", &sw.ID)
	sm := insert(t, h, owner, corpus.GenreWiki, "StandMeet", &proj.ID)
	arch := insert(t, h, owner, corpus.GenreWiki, "Architecture", &sm.ID)
	mustEqual(t, "wiki://software/project/standmeet/architecture", arch.URI, "nested uri")
	blank := insert(t, h, owner, corpus.GenreWiki, "¿?¡!", &sw.ID)
	mustEqual(t, "wiki://software/"+blank.ID.String(), blank.URI, "all-punctuation title falls back to the id")
	var slugged corpus.Note
	do(t, h, func(tx corpus.Tx) error {
		var err error
		slugged, err = tx.Notes().Insert(ctx, corpus.Note{ID: newID(t), OwnerID: owner, Genre: corpus.GenreJournal,
			Title: "Ignored Title", Slug: "My Slug/With Slash", ParentID: &sw.ID})
		return err
	})
	mustEqual(t, "journal://software/my-slug-with-slash", slugged.URI, "slug wins and is itself a segment")
	uni := insert(t, h, owner, corpus.GenreRaw, "Ἀθῆναι 東京 Ärger — ΣΟΦΙΑ", nil)
	mustEqual(t, corpus.URI(corpus.GenreRaw, []string{corpus.PathSegment("Ἀθῆναι 東京 Ärger — ΣΟΦΙΑ")}), uni.URI, "unicode title")
}

func contractTree(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	a := insert(t, h, owner, corpus.GenreWiki, "A", nil)
	b := insert(t, h, owner, corpus.GenreWiki, "B", &a.ID)
	c := insert(t, h, owner, corpus.GenreWiki, "C", &b.ID)
	d := insert(t, h, owner, corpus.GenreWiki, "D", &a.ID)
	var anc []corpus.Note
	var desc []corpus.Descendant
	do(t, h, func(tx corpus.Tx) error {
		var err error
		if anc, err = tx.Notes().Ancestors(ctx, owner, c.ID); err != nil {
			return err
		}
		desc, err = tx.Notes().Descendants(ctx, owner, a.ID)
		return err
	})
	mustEqual(t, []uuid.UUID{b.ID, a.ID}, ids(anc), "ancestors of C")
	mustEqual(t, "wiki://a/b", anc[0].URI, "ancestor uri")
	if len(desc) != 3 || desc[0].Note.ID != c.ID || desc[0].Depth != 2 {
		t.Fatalf("descendants of A deepest first: %+v", desc)
	}
	rest := []uuid.UUID{desc[1].Note.ID, desc[2].Note.ID}
	sort.Slice(rest, func(i, j int) bool { return rest[i].String() < rest[j].String() })
	want := []uuid.UUID{b.ID, d.ID}
	sort.Slice(want, func(i, j int) bool { return want[i].String() < want[j].String() })
	mustEqual(t, want, rest, "children of A at depth 1")
	mustEqual(t, 1, desc[1].Depth, "child depth")
	do(t, h, func(tx corpus.Tx) error {
		var err error
		anc, err = tx.Notes().Ancestors(ctx, owner, a.ID)
		return err
	})
	mustEqual(t, 0, len(anc), "a root has no ancestors")
}

func ids(ns []corpus.Note) []uuid.UUID {
	out := make([]uuid.UUID, len(ns))
	for i, n := range ns {
		out[i] = n.ID
	}
	return out
}

func contractUpdate(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	a := insert(t, h, owner, corpus.GenreWiki, "Alpha", nil)
	b := insert(t, h, owner, corpus.GenreWiki, "Beta", &a.ID)
	other := insert(t, h, owner, corpus.GenreWiki, "Other", nil)
	a.Title, a.Tags, a.Published = "Alpha Prime", []string{"t"}, true
	var upd corpus.Note
	do(t, h, func(tx corpus.Tx) error {
		var err error
		upd, err = tx.Notes().Update(ctx, a)
		return err
	})
	mustEqual(t, "wiki://alpha-prime", upd.URI, "updated uri")
	mustEqual(t, []string{"t"}, upd.Tags, "updated tags")
	if upd.UpdatedAt.Before(a.UpdatedAt) || !upd.CreatedAt.Equal(a.CreatedAt) {
		t.Fatalf("timestamps: created %v→%v updated %v→%v", a.CreatedAt, upd.CreatedAt, a.UpdatedAt, upd.UpdatedAt)
	}
	mustEqual(t, "wiki://alpha-prime/beta", get(t, h, owner, b.ID).URI, "child uri follows the parent's title")
	b.ParentID = &other.ID
	do(t, h, func(tx corpus.Tx) error {
		var err error
		upd, err = tx.Notes().Update(ctx, b)
		return err
	})
	mustEqual(t, "wiki://other/beta", upd.URI, "moved uri in the update's answer")
}

func contractDelete(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	a := insert(t, h, owner, corpus.GenreWiki, "A", nil)
	b := insert(t, h, owner, corpus.GenreWiki, "B", &a.ID)
	if err := h.UoW.Do(ctx, func(tx corpus.Tx) error { return tx.Notes().Delete(ctx, owner, a.ID) }); err == nil {
		t.Fatal("deleting a note with children succeeded")
	}
	do(t, h, func(tx corpus.Tx) error { return tx.Notes().Delete(ctx, owner, b.ID) })
	do(t, h, func(tx corpus.Tx) error { return tx.Notes().Delete(ctx, owner, a.ID) })
	err := h.UoW.Do(ctx, func(tx corpus.Tx) error {
		_, err := tx.Notes().Get(ctx, owner, a.ID)
		return err
	})
	mustNotFound(t, err, "get after delete")
	err = h.UoW.Do(ctx, func(tx corpus.Tx) error { return tx.Notes().Delete(ctx, owner, a.ID) })
	mustNotFound(t, err, "delete twice")
}

func contractList(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	root := insert(t, h, owner, corpus.GenreWiki, "Root", nil)
	for i := 0; i < 5; i++ {
		insert(t, h, owner, corpus.GenreWiki, "Child", &root.ID)
	}
	w := insert(t, h, owner, corpus.GenreWriting, "W", nil)
	insert(t, h, h.NewOwner(t), corpus.GenreWiki, "Not mine", nil)
	list := func(q corpus.ListQuery) []corpus.Note {
		var out []corpus.Note
		do(t, h, func(tx corpus.Tx) error {
			var err error
			out, err = tx.Notes().List(ctx, owner, q)
			return err
		})
		return out
	}
	all := list(corpus.ListQuery{Limit: 50})
	mustEqual(t, 7, len(all), "all notes of the owner")
	mustEqual(t, w.ID, all[0].ID, "newest first")
	mustEqual(t, root.ID, all[6].ID, "oldest last")
	mustEqual(t, []uuid.UUID{w.ID}, ids(list(corpus.ListQuery{Limit: 50, Genre: corpus.GenreWriting})), "by genre")
	mustEqual(t, 2, len(list(corpus.ListQuery{Limit: 50, Root: true})), "roots")
	mustEqual(t, 5, len(list(corpus.ListQuery{Limit: 50, ParentID: &root.ID})), "children")
	mustEqual(t, 0, len(list(corpus.ListQuery{Limit: 50, Published: ptr(true)})), "published")
	first := list(corpus.ListQuery{Limit: 2})
	mustEqual(t, 3, len(first), "a page returns limit+1 rows")
	next := list(corpus.ListQuery{Limit: 2, After: &corpus.Cursor{CreatedAt: first[1].CreatedAt, ID: first[1].ID}})
	mustEqual(t, all[2].ID, next[0].ID, "the next page starts after the cursor")
}

func contractAdminSearch(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	var draft corpus.Note
	do(t, h, func(tx corpus.Tx) error {
		var err error
		draft, err = tx.Notes().Insert(ctx, corpus.Note{ID: newID(t), OwnerID: owner, Genre: corpus.GenreRaw,
			Title: "Inbox", Body: "the zebra crossing"})
		return err
	})
	do(t, h, func(tx corpus.Tx) error {
		_, err := tx.Notes().Insert(ctx, corpus.Note{ID: newID(t), OwnerID: h.NewOwner(t), Genre: corpus.GenreWiki, Title: "zebra"})
		return err
	})
	var hits []corpus.SearchHit
	do(t, h, func(tx corpus.Tx) error {
		var err error
		hits, err = tx.Notes().Search(ctx, owner, "zebra", 10)
		return err
	})
	if len(hits) != 1 || hits[0].NoteID != draft.ID || hits[0].URI != draft.URI || hits[0].Published {
		t.Fatalf("admin search hits: %+v", hits)
	}
	mustEqual(t, "the zebra crossing", hits[0].Excerpt, "excerpt from the body")
}

func contractIndex(t *testing.T, h Harness) {
	ctx := context.Background()
	owner, other := h.NewOwner(t), h.NewOwner(t)
	a := insert(t, h, owner, corpus.GenreWiki, "Giraffe notes", nil)
	b := insert(t, h, other, corpus.GenreWiki, "Giraffe elsewhere", nil)
	entry := func(n corpus.Note) corpus.IndexEntry {
		return corpus.IndexEntry{NoteID: n.ID, OwnerID: n.OwnerID, URI: n.URI, Genre: n.Genre, Title: n.Title, Body: "long necks", Lang: "en", Excerpt: "ex"}
	}
	do(t, h, func(tx corpus.Tx) error {
		if err := tx.Index().Lock(ctx, owner); err != nil {
			return err
		}
		if err := tx.Index().Upsert(ctx, entry(a)); err != nil {
			return err
		}
		if err := tx.Index().Upsert(ctx, entry(a)); err != nil { // idempotent
			return err
		}
		return tx.Index().Upsert(ctx, entry(b))
	})
	search := func(q string) []corpus.SearchHit {
		var hits []corpus.SearchHit
		do(t, h, func(tx corpus.Tx) error {
			var err error
			hits, err = tx.Index().Search(ctx, owner, q, 10)
			return err
		})
		return hits
	}
	hits := search("giraffe")
	if len(hits) != 1 || hits[0].NoteID != a.ID || hits[0].URI != a.URI || !hits[0].Published || hits[0].Excerpt != "ex" {
		t.Fatalf("index search: %+v", hits)
	}
	mustEqual(t, 1, len(search("necks")), "body words are searchable")
	raw := insert(t, h, owner, corpus.GenreRaw, "Raw giraffe", nil)
	if err := h.UoW.Do(ctx, func(tx corpus.Tx) error { return tx.Index().Upsert(ctx, entry(raw)) }); err == nil {
		t.Fatal("the index accepted a raw note")
	}
	do(t, h, func(tx corpus.Tx) error { return tx.Index().Remove(ctx, owner, []uuid.UUID{a.ID, b.ID}) })
	mustEqual(t, 0, len(search("giraffe")), "removed")
	var otherHits []corpus.SearchHit
	do(t, h, func(tx corpus.Tx) error {
		var err error
		otherHits, err = tx.Index().Search(ctx, other, "giraffe", 10)
		return err
	})
	mustEqual(t, 1, len(otherHits), "Remove leaves another owner's entries alone")
}

// changeData decodes a corpus.note.changed payload as a map, so the test sees
// its exact keys.
func changeData(t *testing.T, ev corpus.ChangeEvent) map[string]any {
	t.Helper()
	if ev.Type != domain.EventCorpusNoteChanged {
		t.Fatalf("event type %q", ev.Type)
	}
	var m map[string]any
	if err := json.Unmarshal(ev.Data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func contractTrigger(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	parent := insert(t, h, owner, corpus.GenreWiki, "Parent", nil)
	n := insert(t, h, owner, corpus.GenreWiki, "Child", &parent.ID)
	evs := h.ChangeEvents(t, owner)
	mustEqual(t, 2, len(evs), "two inserts, two events")
	mustEqual(t, "wiki://parent/child", evs[1].Subject, "subject is the uri")
	mustEqual(t, map[string]any{"op": "created", "note_id": n.ID.String(), "genre": "wiki", "parent_id": parent.ID.String(),
		"published": false, "was_published": false, "path_changed": false}, changeData(t, evs[1]), "created payload")
	mustEqual(t, map[string]any{"op": "created", "note_id": parent.ID.String(), "genre": "wiki", "parent_id": nil,
		"published": false, "was_published": false, "path_changed": false}, changeData(t, evs[0]), "root payload")

	update := func(mut func(*corpus.Note)) {
		t.Helper()
		cur := get(t, h, owner, n.ID)
		mut(&cur)
		do(t, h, func(tx corpus.Tx) error {
			_, err := tx.Notes().Update(ctx, cur)
			return err
		})
	}
	count := len(h.ChangeEvents(t, owner))
	update(func(*corpus.Note) {}) // same values, updated_at only
	mustEqual(t, count, len(h.ChangeEvents(t, owner)), "an update of nothing watched emits nothing")

	watched := []struct {
		column string
		mut    func(*corpus.Note)
	}{
		{"genre", func(n *corpus.Note) { n.Genre = corpus.GenreJournal }},
		{"title", func(n *corpus.Note) { n.Title += " x" }},
		{"body", func(n *corpus.Note) { n.Body += " x" }},
		{"tags", func(n *corpus.Note) { n.Tags = append(n.Tags, "x") }},
		{"parent_id", func(n *corpus.Note) {
			if n.ParentID == nil {
				n.ParentID = &parent.ID
			} else {
				n.ParentID = nil
			}
		}},
		{"published", func(n *corpus.Note) { n.Published = !n.Published }},
		{"show_as_source", func(n *corpus.Note) { n.ShowAsSource = !n.ShowAsSource }},
		{"aliases", func(n *corpus.Note) { n.Aliases = append(n.Aliases, "x") }},
		{"excerpt", func(n *corpus.Note) { n.Excerpt += "x" }},
		{"slug", func(n *corpus.Note) { n.Slug += "s" }},
		{"archived", func(n *corpus.Note) { n.Archived = !n.Archived }},
		{"css_classes", func(n *corpus.Note) { n.CSSClasses = append(n.CSSClasses, "x") }},
		{"lang", func(n *corpus.Note) { n.Lang += "e" }},
	}
	for _, w := range watched {
		before := get(t, h, owner, n.ID)
		update(w.mut)
		after := get(t, h, owner, n.ID)
		evs := h.ChangeEvents(t, owner)
		if len(evs) != count+1 {
			t.Fatalf("a change of %s emitted %d events, want 1", w.column, len(evs)-count)
		}
		count++
		got := changeData(t, evs[len(evs)-1])
		var parentWant any
		if after.ParentID != nil {
			parentWant = after.ParentID.String()
		}
		pathChanged := !sameParent(before.ParentID, after.ParentID) || before.Segment() != after.Segment()
		mustEqual(t, map[string]any{"op": "updated", "note_id": n.ID.String(), "genre": string(after.Genre),
			"parent_id": parentWant, "published": after.Published, "was_published": before.Published,
			"path_changed": pathChanged}, got, "payload after changing "+w.column)
		mustEqual(t, after.URI, evs[len(evs)-1].Subject, "subject after changing "+w.column)
	}

	// Renaming the parent changes the child's path: the parent's event says
	// so, the child emits nothing (its row did not change).
	cur := get(t, h, owner, parent.ID)
	cur.Title = "Renamed"
	do(t, h, func(tx corpus.Tx) error {
		_, err := tx.Notes().Update(ctx, cur)
		return err
	})
	evs = h.ChangeEvents(t, owner)
	mustEqual(t, count+1, len(evs), "one event for the renamed parent")
	mustEqual(t, true, changeData(t, evs[len(evs)-1])["path_changed"], "rename sets path_changed")

	// A delete carries the last known subject and was_published.
	leaf := get(t, h, owner, n.ID)
	leaf.Published, leaf.Genre, leaf.ParentID = true, corpus.GenreWiki, &parent.ID
	do(t, h, func(tx corpus.Tx) error {
		_, err := tx.Notes().Update(ctx, leaf)
		return err
	})
	leaf = get(t, h, owner, n.ID)
	do(t, h, func(tx corpus.Tx) error { return tx.Notes().Delete(ctx, owner, n.ID) })
	evs = h.ChangeEvents(t, owner)
	last := evs[len(evs)-1]
	mustEqual(t, leaf.URI, last.Subject, "delete subject is the last uri")
	mustEqual(t, map[string]any{"op": "deleted", "note_id": n.ID.String(), "genre": "wiki", "parent_id": parent.ID.String(),
		"published": false, "was_published": true, "path_changed": false}, changeData(t, last), "deleted payload")
}

func contractRecordAndRollback(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	var id uuid.UUID
	do(t, h, func(tx corpus.Tx) error {
		var err error
		id, err = tx.Recorder().Record(ctx, owner, domain.EventVaultImported, "vault", map[string]any{"notes": 1})
		return err
	})
	var ev corpus.ChangeEvent
	do(t, h, func(tx corpus.Tx) error {
		var err error
		ev, err = tx.Events().Event(ctx, id)
		return err
	})
	mustEqual(t, domain.EventVaultImported, ev.Type, "recorded type")
	mustEqual(t, owner, ev.OwnerID, "recorded owner")
	mustEqual(t, "vault", ev.Subject, "recorded subject")
	err := h.UoW.Do(ctx, func(tx corpus.Tx) error {
		_, err := tx.Events().Event(ctx, uuid.New())
		return err
	})
	mustNotFound(t, err, "unknown event")
	if err := h.UoW.Do(ctx, func(tx corpus.Tx) error {
		_, err := tx.Recorder().Record(ctx, owner, "corpus.note.exploded", "", map[string]any{})
		return err
	}); err == nil {
		t.Fatal("recorded an undeclared event type")
	}

	boom := errors.New("boom")
	var ghost uuid.UUID
	err = h.UoW.Do(ctx, func(tx corpus.Tx) error {
		n, err := tx.Notes().Insert(ctx, corpus.Note{ID: newID(t), OwnerID: owner, Genre: corpus.GenreWiki, Title: "ghost"})
		if err != nil {
			return err
		}
		ghost = n.ID
		if _, err := tx.Recorder().Record(ctx, owner, domain.EventVaultImported, "vault", map[string]any{}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Do returned %v, want fn's error", err)
	}
	err = h.UoW.Do(ctx, func(tx corpus.Tx) error {
		_, err := tx.Notes().Get(ctx, owner, ghost)
		return err
	})
	mustNotFound(t, err, "a rolled-back insert")
	mustEqual(t, 1, len(h.ChangeEvents(t, owner)), "only the committed event remains")
}
