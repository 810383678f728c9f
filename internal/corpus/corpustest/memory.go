// Package corpustest holds an in-memory implementation of the corpus ports
// and the contract suite that it and the PostgreSQL adapter both pass, so the
// fake the use-case tests rely on cannot drift from the real store.
package corpustest

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/domaintest"
)

// Event is an event the fake committed.
type Event = domaintest.Event

// Memory implements corpus.UnitOfWork in memory: a domaintest.Snapshot of
// the stores' state, one unit of work at a time on a copy kept only when fn
// returns nil, so a failed use case leaves nothing behind, as a rolled-back
// transaction would. Like the real database it emulates the corpus_notes row
// trigger: note writes emit corpus.note.changed with the trigger's payload.
type Memory struct {
	// NowFunc, when set, is the clock (default: a fixed start advancing one
	// millisecond per read, so creation order is strict).
	NowFunc func() time.Time

	snap  *domaintest.Snapshot[state]
	mu    sync.Mutex
	clock time.Time
}

type state struct {
	notes map[uuid.UUID]corpus.Note
	index map[uuid.UUID]corpus.IndexEntry
}

func (s state) clone() state { return state{notes: maps.Clone(s.notes), index: maps.Clone(s.index)} }

var _ corpus.UnitOfWork = (*Memory)(nil)

// NewMemory returns an empty store.
func NewMemory() *Memory {
	return &Memory{
		snap:  domaintest.NewSnapshot(state{notes: map[uuid.UUID]corpus.Note{}, index: map[uuid.UUID]corpus.IndexEntry{}}, state.clone),
		clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

// Do implements corpus.UnitOfWork.
func (m *Memory) Do(ctx context.Context, fn func(tx corpus.Tx) error) error {
	return m.snap.Do(ctx, func(st *state, rec *domaintest.TxRecorder) error {
		return fn(&memTx{m: m, st: st, rec: rec})
	})
}

// Events returns the committed events, oldest first.
func (m *Memory) Events() []Event { return m.snap.Recorder().Events() }

// Recorder returns the fake Recorder (Fail injects recording failures).
func (m *Memory) Recorder() *domaintest.Recorder { return m.snap.Recorder() }

// InsertEvent commits an event as if another part of the instance had
// recorded it (for subscriber tests).
func (m *Memory) InsertEvent(ev corpus.ChangeEvent) { m.snap.Recorder().Append(Event(ev)) }

// PruneEvents forgets every event, as retention eventually does.
func (m *Memory) PruneEvents() { m.snap.Recorder().Reset() }

// Indexed returns the committed index entries of owner, by note id.
func (m *Memory) Indexed(ownerID uuid.UUID) map[uuid.UUID]corpus.IndexEntry {
	out := map[uuid.UUID]corpus.IndexEntry{}
	m.snap.View(func(st state) {
		for k, v := range st.index {
			if v.OwnerID == ownerID {
				out[k] = v
			}
		}
	})
	return out
}

func (m *Memory) now() time.Time {
	if m.NowFunc != nil {
		return m.NowFunc()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clock = m.clock.Add(time.Millisecond)
	return m.clock
}

type memTx struct {
	m   *Memory
	st  *state
	rec *domaintest.TxRecorder
}

func (t *memTx) Notes() corpus.NoteStore    { return &memNotes{t} }
func (t *memTx) Index() corpus.IndexStore   { return &memIndex{t} }
func (t *memTx) Events() corpus.EventReader { return &memEvents{t} }
func (t *memTx) Recorder() domain.Recorder  { return t.rec }

// emit records an event as the trigger does: unchecked, in the transaction.
func (t *memTx) emit(ownerID uuid.UUID, eventType, subject string, data json.RawMessage) {
	t.rec.Append(Event{ID: uuid.New(), OwnerID: ownerID, Type: eventType, Subject: subject, Data: data})
}

// trigger emulates corpus_notes_emit for a write of before → after (zero
// ID = absent).
func (t *memTx) trigger(before, after corpus.Note) {
	ch := corpus.NoteChange{}
	var n corpus.Note
	switch {
	case before.ID == uuid.Nil:
		n, ch.Op, ch.Published = after, "created", after.Published
	case after.ID == uuid.Nil:
		n, ch.Op, ch.WasPublished = before, "deleted", before.Published
	default:
		if !watchedChanged(before, after) {
			return
		}
		n, ch.Op, ch.Published, ch.WasPublished = after, "updated", after.Published, before.Published
		ch.PathChanged = !sameParent(before.ParentID, after.ParentID) || before.Segment() != after.Segment()
	}
	ch.NoteID, ch.Genre, ch.ParentID = n.ID, n.Genre, n.ParentID
	raw, _ := json.Marshal(ch)
	t.emit(n.OwnerID, domain.EventCorpusNoteChanged, t.uriOf(n), raw)
}

func watchedChanged(a, b corpus.Note) bool {
	eq := func(x, y []string) bool {
		return strings.Join(x, "\x00") == strings.Join(y, "\x00") && len(x) == len(y)
	}
	return a.Genre != b.Genre || a.Title != b.Title || a.Body != b.Body || !eq(a.Tags, b.Tags) ||
		!sameParent(a.ParentID, b.ParentID) || a.Published != b.Published || a.ShowAsSource != b.ShowAsSource ||
		!eq(a.Aliases, b.Aliases) || a.Excerpt != b.Excerpt || a.Slug != b.Slug || a.Archived != b.Archived ||
		!eq(a.CSSClasses, b.CSSClasses) || a.Lang != b.Lang
}

func sameParent(a, b *uuid.UUID) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// uriOf computes n's URI from the current state with the Go segment rule.
func (t *memTx) uriOf(n corpus.Note) string {
	segs := []string{n.Segment()}
	p := n.ParentID
	for i := 0; p != nil && i < 64; i++ {
		parent, ok := t.st.notes[*p]
		if !ok {
			break
		}
		segs = append(segs, parent.Segment())
		p = parent.ParentID
	}
	for i, j := 0, len(segs)-1; i < j; i, j = i+1, j-1 {
		segs[i], segs[j] = segs[j], segs[i]
	}
	return corpus.URI(n.Genre, segs)
}

func (t *memTx) withURI(n corpus.Note) corpus.Note {
	n = detach(n)
	n.URI = t.uriOf(n)
	n.Tags, n.Aliases, n.CSSClasses = nonNil(n.Tags), nonNil(n.Aliases), nonNil(n.CSSClasses)
	return n
}

// detach copies what a note shares by reference, so neither the caller nor
// the store can change the other's copy (as with a real database).
func detach(n corpus.Note) corpus.Note {
	if n.ParentID != nil {
		p := *n.ParentID
		n.ParentID = &p
	}
	n.Tags, n.Aliases, n.CSSClasses = nonNil(n.Tags), nonNil(n.Aliases), nonNil(n.CSSClasses)
	return n
}

func nonNil(s []string) []string {
	return append([]string{}, s...)
}

func notFound() error { return domain.NotFound("NOT_FOUND", "no such note") }

type memNotes struct{ t *memTx }

func (s *memNotes) LockTree(context.Context, uuid.UUID) error { return nil }

// check enforces the table's constraints.
func (s *memNotes) check(n corpus.Note) error {
	if !n.Genre.Valid() {
		return domain.Validation("INVALID_NOTE", "the note breaks a rule of the store: genre")
	}
	if n.Genre == corpus.GenreRaw && n.Published {
		return domain.Validation("INVALID_NOTE", "the note breaks a rule of the store: corpus_notes_raw_unpublished")
	}
	if n.ParentID != nil {
		if *n.ParentID == n.ID {
			return domain.Validation("INVALID_NOTE", "the note breaks a rule of the store: corpus_notes_not_own_parent")
		}
		if p, ok := s.t.st.notes[*n.ParentID]; !ok || p.OwnerID != n.OwnerID {
			return domain.Conflict("NOTE_TREE_CHANGED", "the note's parent or children changed meanwhile; try again")
		}
	}
	return nil
}

func (s *memNotes) Insert(_ context.Context, n corpus.Note) (corpus.Note, error) {
	if _, dup := s.t.st.notes[n.ID]; dup {
		return corpus.Note{}, errors.New("insert note: duplicate id")
	}
	if err := s.check(n); err != nil {
		return corpus.Note{}, err
	}
	now := s.t.m.now()
	n = detach(n)
	n.CreatedAt, n.UpdatedAt = now, now
	s.t.st.notes[n.ID] = n
	s.t.trigger(corpus.Note{}, n)
	return s.t.withURI(n), nil
}

func (s *memNotes) Get(_ context.Context, ownerID, id uuid.UUID) (corpus.Note, error) {
	n, ok := s.t.st.notes[id]
	if !ok || n.OwnerID != ownerID {
		return corpus.Note{}, notFound()
	}
	return s.t.withURI(n), nil
}

func (s *memNotes) GetForUpdate(ctx context.Context, ownerID, id uuid.UUID) (corpus.Note, error) {
	return s.Get(ctx, ownerID, id)
}

func (s *memNotes) GetMany(_ context.Context, ownerID uuid.UUID, ids []uuid.UUID) ([]corpus.Note, error) {
	var out []corpus.Note
	for _, id := range ids {
		if n, ok := s.t.st.notes[id]; ok && n.OwnerID == ownerID {
			out = append(out, s.t.withURI(n))
		}
	}
	return out, nil
}

func (s *memNotes) Update(_ context.Context, n corpus.Note) (corpus.Note, error) {
	before, ok := s.t.st.notes[n.ID]
	if !ok || before.OwnerID != n.OwnerID {
		return corpus.Note{}, notFound()
	}
	if err := s.check(n); err != nil {
		return corpus.Note{}, err
	}
	n = detach(n)
	n.CreatedAt, n.UpdatedAt = before.CreatedAt, s.t.m.now()
	s.t.st.notes[n.ID] = n
	s.t.trigger(before, n)
	return s.t.withURI(n), nil
}

func (s *memNotes) Delete(_ context.Context, ownerID, id uuid.UUID) error {
	n, ok := s.t.st.notes[id]
	if !ok || n.OwnerID != ownerID {
		return notFound()
	}
	for _, c := range s.t.st.notes {
		if c.ParentID != nil && *c.ParentID == id {
			return domain.Conflict("NOTE_TREE_CHANGED", "the note's parent or children changed meanwhile; try again")
		}
	}
	// As in the database, the trigger runs with the row gone but its parent
	// chain intact, so the event carries the note's last URI.
	delete(s.t.st.notes, id)
	delete(s.t.st.index, id) // ON DELETE CASCADE
	s.t.trigger(n, corpus.Note{})
	return nil
}

func (s *memNotes) Ancestors(_ context.Context, ownerID, id uuid.UUID) ([]corpus.Note, error) {
	n, ok := s.t.st.notes[id]
	if !ok || n.OwnerID != ownerID {
		return nil, nil
	}
	var out []corpus.Note
	for p := n.ParentID; p != nil && len(out) < 64; {
		parent, ok := s.t.st.notes[*p]
		if !ok {
			break
		}
		out = append(out, s.t.withURI(parent))
		p = parent.ParentID
	}
	return out, nil
}

func (s *memNotes) Descendants(_ context.Context, ownerID, id uuid.UUID) ([]corpus.Descendant, error) {
	var out []corpus.Descendant
	level := []uuid.UUID{id}
	for depth := 1; len(level) > 0 && depth <= 64; depth++ {
		var next []uuid.UUID
		for _, n := range s.t.st.notes {
			if n.OwnerID != ownerID || n.ParentID == nil {
				continue
			}
			for _, p := range level {
				if *n.ParentID == p {
					out = append(out, corpus.Descendant{Note: s.t.withURI(n), Depth: depth})
					next = append(next, n.ID)
				}
			}
		}
		level = next
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Depth != out[j].Depth {
			return out[i].Depth > out[j].Depth
		}
		return out[i].Note.ID.String() < out[j].Note.ID.String()
	})
	return out, nil
}

func (s *memNotes) List(_ context.Context, ownerID uuid.UUID, q corpus.ListQuery) ([]corpus.Note, error) {
	var out []corpus.Note
	for _, n := range s.t.st.notes {
		switch {
		case n.OwnerID != ownerID,
			q.Genre != "" && n.Genre != q.Genre,
			q.ParentID != nil && (n.ParentID == nil || *n.ParentID != *q.ParentID),
			q.Root && n.ParentID != nil,
			q.Published != nil && n.Published != *q.Published,
			q.After != nil && !sortsAfter(n, *q.After):
			continue
		}
		out = append(out, s.t.withURI(n))
	}
	sort.Slice(out, func(i, j int) bool {
		return sortsAfter(out[j], corpus.Cursor{CreatedAt: out[i].CreatedAt, ID: out[i].ID})
	})
	if len(out) > q.Limit+1 {
		out = out[:q.Limit+1]
	}
	return out, nil
}

// sortsAfter reports whether n comes after the cursor in (created_at, id)
// descending order.
func sortsAfter(n corpus.Note, c corpus.Cursor) bool {
	if !n.CreatedAt.Equal(c.CreatedAt) {
		return n.CreatedAt.Before(c.CreatedAt)
	}
	return strings.Compare(n.ID.String(), c.ID.String()) < 0
}

// matches is the fake's full-text search: every plain word of the query
// occurs in the text, case-insensitively. Contract tests use single words.
func matches(query string, texts ...string) bool {
	hay := strings.ToLower(strings.Join(texts, " "))
	words := strings.Fields(strings.ToLower(query))
	for _, w := range words {
		if !strings.Contains(hay, strings.Trim(w, `"`)) {
			return false
		}
	}
	return len(words) > 0
}

func (s *memNotes) Search(_ context.Context, ownerID uuid.UUID, query string, limit int) ([]corpus.SearchHit, error) {
	var out []corpus.SearchHit
	for _, n := range s.t.st.notes {
		if n.OwnerID != ownerID || !matches(query, n.Title, n.Body, strings.Join(n.Tags, " ")) {
			continue
		}
		out = append(out, corpus.SearchHit{NoteID: n.ID, URI: s.t.uriOf(n), Genre: n.Genre, Title: n.Title,
			Excerpt: adminExcerpt(n), Published: n.Published, Rank: 1})
	}
	return limitHits(out, limit), nil
}

func limitHits(hits []corpus.SearchHit, limit int) []corpus.SearchHit {
	sort.Slice(hits, func(i, j int) bool { return hits[i].NoteID.String() < hits[j].NoteID.String() })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

type memIndex struct{ t *memTx }

func (s *memIndex) Lock(context.Context, uuid.UUID) error { return nil }

func (s *memIndex) Upsert(_ context.Context, e corpus.IndexEntry) error {
	if e.Genre == corpus.GenreRaw || strings.HasPrefix(e.URI, "raw://") {
		return domain.Validation("INVALID_NOTE", "the index refuses raw notes")
	}
	if _, ok := s.t.st.notes[e.NoteID]; !ok {
		return domain.Conflict("NOTE_TREE_CHANGED", "the note is gone")
	}
	e.Tags = nonNil(e.Tags)
	s.t.st.index[e.NoteID] = e
	return nil
}

func (s *memIndex) Remove(_ context.Context, ownerID uuid.UUID, ids []uuid.UUID) error {
	for _, id := range ids {
		if e, ok := s.t.st.index[id]; ok && e.OwnerID == ownerID {
			delete(s.t.st.index, id)
		}
	}
	return nil
}

func (s *memIndex) Search(_ context.Context, ownerID uuid.UUID, query string, limit int) ([]corpus.SearchHit, error) {
	var out []corpus.SearchHit
	for _, e := range s.t.st.index {
		if e.OwnerID != ownerID || !matches(query, e.Title, e.Body, strings.Join(e.Tags, " ")) {
			continue
		}
		out = append(out, corpus.SearchHit{NoteID: e.NoteID, URI: e.URI, Genre: e.Genre, Title: e.Title,
			Excerpt: e.Excerpt, Published: true, Rank: 1})
	}
	return limitHits(out, limit), nil
}

type memEvents struct{ t *memTx }

func (r *memEvents) Event(_ context.Context, id uuid.UUID) (corpus.ChangeEvent, error) {
	for _, e := range r.t.rec.Events() {
		if e.ID == id {
			return corpus.ChangeEvent(e), nil
		}
	}
	return corpus.ChangeEvent{}, domain.NotFound("NOT_FOUND", "no such event")
}

// adminExcerpt mirrors the store's: the note's excerpt, else the first 240
// characters of its body with whitespace folded.
func adminExcerpt(n corpus.Note) string {
	if strings.TrimSpace(n.Excerpt) != "" {
		return n.Excerpt
	}
	r := []rune(strings.Join(strings.Fields(n.Body), " "))
	if len(r) > 240 {
		r = r[:240]
	}
	return string(r)
}
