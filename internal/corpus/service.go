package corpus

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// Service holds the corpus use cases. Each runs in one unit of work: its
// store writes, the trigger's corpus.note.changed rows and the events it
// records commit together.
type Service struct {
	uow UnitOfWork
}

// NewService returns the corpus use cases over uow.
func NewService(uow UnitOfWork) *Service {
	return &Service{uow: uow}
}

// newNoteID returns a time-ordered id, which keeps the primary key index
// append-mostly.
func newNoteID() (uuid.UUID, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, fmt.Errorf("new note id: %w", err)
	}
	return id, nil
}

// CreateInput is a new note.
type CreateInput struct {
	Fields
	// ParentID places the note under another note of the same owner.
	ParentID *uuid.UUID
}

// Create adds a note. A writing created published records
// writing.published.
func (s *Service) Create(ctx context.Context, ownerID uuid.UUID, in CreateInput) (Note, error) {
	if err := in.Fields.normalize(); err != nil {
		return Note{}, err
	}
	id, err := newNoteID()
	if err != nil {
		return Note{}, err
	}
	var out Note
	err = s.uow.Do(ctx, func(tx Tx) error {
		notes := tx.Notes()
		if in.ParentID != nil {
			if err := notes.LockTree(ctx, ownerID); err != nil {
				return fmt.Errorf("lock tree: %w", err)
			}
			if err := checkPlacement(ctx, notes, ownerID, id, in.ParentID, placed{nonRaw: in.Genre != GenreRaw}); err != nil {
				return err
			}
		}
		n := Note{ID: id, OwnerID: ownerID, ParentID: in.ParentID}
		in.Fields.apply(&n)
		stored, err := notes.Insert(ctx, n)
		if err != nil {
			return fmt.Errorf("insert note: %w", err)
		}
		out = stored
		return recordWriting(ctx, tx, Note{}, stored, false)
	})
	if err != nil {
		return Note{}, err
	}
	return out, nil
}

// Get returns one note.
func (s *Service) Get(ctx context.Context, ownerID, id uuid.UUID) (Note, error) {
	var out Note
	err := s.uow.Do(ctx, func(tx Tx) error {
		n, err := tx.Notes().Get(ctx, ownerID, id)
		out = n
		return err
	})
	return out, err
}

// Patch is a partial update: nil fields are left as they are.
type Patch struct {
	Genre        *Genre
	Title        *string
	Body         *string
	Tags         *[]string
	Published    *bool
	ShowAsSource *bool
	Aliases      *[]string
	Excerpt      *string
	Slug         *string
	Archived     *bool
	CSSClasses   *[]string
	Lang         *string
}

func (p Patch) apply(f *Fields) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	setList := func(dst *[]string, src *[]string) {
		if src != nil {
			*dst = *src
		}
	}
	setBool := func(dst *bool, src *bool) {
		if src != nil {
			*dst = *src
		}
	}
	if p.Genre != nil {
		f.Genre = *p.Genre
	}
	set(&f.Title, p.Title)
	set(&f.Body, p.Body)
	set(&f.Excerpt, p.Excerpt)
	set(&f.Slug, p.Slug)
	set(&f.Lang, p.Lang)
	setList(&f.Tags, p.Tags)
	setList(&f.Aliases, p.Aliases)
	setList(&f.CSSClasses, p.CSSClasses)
	setBool(&f.Published, p.Published)
	setBool(&f.ShowAsSource, p.ShowAsSource)
	setBool(&f.Archived, p.Archived)
}

// Update changes some fields of a note. A writing turning published or
// unpublished (by its flag or its genre) records writing.published or
// writing.unpublished. Changing the genre keeps the raw rule: a non-raw note
// never sits under a raw one.
func (s *Service) Update(ctx context.Context, ownerID, id uuid.UUID, p Patch) (Note, error) {
	var out Note
	err := s.uow.Do(ctx, func(tx Tx) error {
		notes := tx.Notes()
		if p.Genre != nil {
			// A genre change is structural for the raw rule.
			if err := notes.LockTree(ctx, ownerID); err != nil {
				return fmt.Errorf("lock tree: %w", err)
			}
		}
		before, err := notes.GetForUpdate(ctx, ownerID, id)
		if err != nil {
			return err
		}
		f := fieldsOf(before)
		p.apply(&f)
		if err := f.normalize(); err != nil {
			return err
		}
		if f.Genre != before.Genre {
			if err := checkGenreChange(ctx, notes, before, f.Genre); err != nil {
				return err
			}
		}
		n := before
		f.apply(&n)
		stored, err := notes.Update(ctx, n)
		if err != nil {
			return fmt.Errorf("update note: %w", err)
		}
		out = stored
		return recordWriting(ctx, tx, before, stored, false)
	})
	if err != nil {
		return Note{}, err
	}
	return out, nil
}

// SetPublished publishes or unpublishes a note (Update of the flag alone).
func (s *Service) SetPublished(ctx context.Context, ownerID, id uuid.UUID, published bool) (Note, error) {
	return s.Update(ctx, ownerID, id, Patch{Published: &published})
}

// Move re-parents a note (nil parent: to the root). It refuses a parent
// that is the note itself or one of its descendants, a placement deeper than
// MaxDepth, and a non-raw note (or subtree) under a raw one. Moving to the
// current parent changes nothing.
func (s *Service) Move(ctx context.Context, ownerID, id uuid.UUID, parentID *uuid.UUID) (Note, error) {
	var out Note
	err := s.uow.Do(ctx, func(tx Tx) error {
		notes := tx.Notes()
		if err := notes.LockTree(ctx, ownerID); err != nil {
			return fmt.Errorf("lock tree: %w", err)
		}
		n, err := notes.GetForUpdate(ctx, ownerID, id)
		if err != nil {
			return err
		}
		if sameParent(n.ParentID, parentID) {
			out = n
			return nil
		}
		if parentID != nil {
			desc, err := notes.Descendants(ctx, ownerID, id)
			if err != nil {
				return fmt.Errorf("descendants: %w", err)
			}
			pl := placed{nonRaw: n.Genre != GenreRaw}
			for _, d := range desc {
				pl.height = max(pl.height, d.Depth)
				pl.nonRaw = pl.nonRaw || d.Note.Genre != GenreRaw
			}
			if err := checkPlacement(ctx, notes, ownerID, id, parentID, pl); err != nil {
				return err
			}
		}
		n.ParentID = parentID
		stored, err := notes.Update(ctx, n)
		if err != nil {
			return fmt.Errorf("move note: %w", err)
		}
		out = stored
		return nil
	})
	if err != nil {
		return Note{}, err
	}
	return out, nil
}

// Delete removes a note. A note with children is refused (409
// NOTE_HAS_CHILDREN) unless recursive, which removes the whole subtree in one
// transaction, deepest notes first: each row's trigger then still finds its
// parent chain and records the note's last URI. A published writing removed
// records writing.unpublished.
func (s *Service) Delete(ctx context.Context, ownerID, id uuid.UUID, recursive bool) error {
	return s.uow.Do(ctx, func(tx Tx) error {
		notes := tx.Notes()
		if err := notes.LockTree(ctx, ownerID); err != nil {
			return fmt.Errorf("lock tree: %w", err)
		}
		n, err := notes.GetForUpdate(ctx, ownerID, id)
		if err != nil {
			return err
		}
		desc, err := notes.Descendants(ctx, ownerID, id)
		if err != nil {
			return fmt.Errorf("descendants: %w", err)
		}
		if len(desc) > 0 && !recursive {
			return domain.Conflict("NOTE_HAS_CHILDREN", fmt.Sprintf("the note has %d notes below it; move them or delete with recursive=true", len(desc)))
		}
		victims := make([]Note, 0, len(desc)+1)
		for _, d := range desc { // deepest first
			victims = append(victims, d.Note)
		}
		victims = append(victims, n)
		for _, v := range victims {
			if err := notes.Delete(ctx, ownerID, v.ID); err != nil {
				return fmt.Errorf("delete note %s: %w", v.ID, err)
			}
			if err := recordWriting(ctx, tx, v, Note{}, true); err != nil {
				return err
			}
		}
		return nil
	})
}

// ListInput selects a page of notes.
type ListInput struct {
	Genre     Genre
	ParentID  *uuid.UUID
	Root      bool
	Published *bool
	Limit     int
	Cursor    string
}

// ListPage is a page of notes and the cursor of the next ("" at the end).
type ListPage struct {
	Notes      []Note
	NextCursor string
}

// List returns a page of the owner's notes, newest first.
func (s *Service) List(ctx context.Context, ownerID uuid.UUID, in ListInput) (ListPage, error) {
	if in.Genre != "" && !in.Genre.Valid() {
		return ListPage{}, domain.Validation("INVALID_GENRE", fmt.Sprintf("genre %q is unknown", in.Genre)).WithField("genre")
	}
	in.Limit = op.PageInput{Limit: in.Limit}.NormalizedLimit()
	after, err := DecodeCursor(in.Cursor)
	if err != nil {
		return ListPage{}, err
	}
	q := ListQuery{Genre: in.Genre, ParentID: in.ParentID, Root: in.Root, Published: in.Published, Limit: in.Limit, After: after}
	var rows []Note
	err = s.uow.Do(ctx, func(tx Tx) error {
		var err error
		rows, err = tx.Notes().List(ctx, ownerID, q)
		return err
	})
	if err != nil {
		return ListPage{}, err
	}
	page := ListPage{Notes: rows}
	if len(rows) > in.Limit {
		page.Notes = rows[:in.Limit]
		last := page.Notes[in.Limit-1]
		page.NextCursor = EncodeCursor(Cursor{CreatedAt: last.CreatedAt, ID: last.ID})
	}
	return page, nil
}

// EncodeCursor renders a cursor as an opaque string.
func EncodeCursor(c Cursor) string {
	return op.KeysetCursor{At: c.CreatedAt, ID: c.ID}.String()
}

// DecodeCursor parses a cursor from EncodeCursor; "" is the first page.
func DecodeCursor(s string) (*Cursor, error) {
	k, err := op.ParseKeysetCursor(s)
	if k == nil || err != nil {
		return nil, err
	}
	return &Cursor{CreatedAt: k.At, ID: k.ID}, nil
}

// Search limits.
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 100
	MaxQueryLen        = 500
)

func searchArgs(q string, limit int) (string, int, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return "", 0, domain.Validation("QUERY_REQUIRED", "q is required").WithField("q")
	}
	if !validSegmentText(q) || len(q) > MaxQueryLen {
		return "", 0, domain.Validation("INVALID_QUERY", fmt.Sprintf("q must be valid text of at most %d bytes", MaxQueryLen)).WithField("q")
	}
	switch {
	case limit <= 0:
		limit = DefaultSearchLimit
	case limit > MaxSearchLimit:
		limit = MaxSearchLimit
	}
	return q, limit, nil
}

// SearchAdmin searches every note of the owner, drafts and raw notes
// included: the owner sees everything.
func (s *Service) SearchAdmin(ctx context.Context, ownerID uuid.UUID, q string, limit int) ([]SearchHit, error) {
	q, limit, err := searchArgs(q, limit)
	if err != nil {
		return nil, err
	}
	var hits []SearchHit
	err = s.uow.Do(ctx, func(tx Tx) error {
		var err error
		hits, err = tx.Notes().Search(ctx, ownerID, q, limit)
		return err
	})
	return hits, err
}

// SearchPublished searches the public index of the owner: published,
// non-raw notes only. A raw URI is dropped here too, so even a corrupt index
// row cannot leave the instance.
func (s *Service) SearchPublished(ctx context.Context, ownerID uuid.UUID, q string, limit int) ([]SearchHit, error) {
	q, limit, err := searchArgs(q, limit)
	if err != nil {
		return nil, err
	}
	var hits []SearchHit
	err = s.uow.Do(ctx, func(tx Tx) error {
		var err error
		hits, err = tx.Index().Search(ctx, ownerID, q, limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := hits[:0]
	for _, h := range hits {
		if h.Genre != GenreRaw && !strings.HasPrefix(strings.ToLower(h.URI), string(GenreRaw)+"://") {
			out = append(out, h)
		}
	}
	return out, nil
}

// placed describes what is being placed under a parent: how tall its
// subtree is (0 for a leaf) and whether it or anything below it is non-raw.
type placed struct {
	height int
	nonRaw bool
}

// checkPlacement checks putting note id (and its subtree) under parentID:
// the parent exists, is not the note or below it, the result is no deeper
// than MaxDepth, and no non-raw note ends up under a raw one.
func checkPlacement(ctx context.Context, notes NoteStore, ownerID, id uuid.UUID, parentID *uuid.UUID, p placed) error {
	parent, err := notes.Get(ctx, ownerID, *parentID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.Unprocessable("PARENT_NOT_FOUND", "parent_id names no note of yours").WithField("parent_id")
	}
	if err != nil {
		return fmt.Errorf("load parent: %w", err)
	}
	ancestors, err := notes.Ancestors(ctx, ownerID, parent.ID)
	if err != nil {
		return fmt.Errorf("load ancestors: %w", err)
	}
	chain := append([]Note{parent}, ancestors...)
	for _, a := range chain {
		if a.ID == id {
			return domain.Unprocessable("MOVE_CYCLE", "a note cannot move under itself or one of its descendants").WithField("parent_id")
		}
	}
	if depth := len(chain) + 1 + p.height; depth > MaxDepth {
		return domain.Unprocessable("TOO_DEEP", fmt.Sprintf("the note would sit %d levels deep; the limit is %d", depth, MaxDepth)).WithField("parent_id")
	}
	if p.nonRaw {
		for _, a := range chain {
			if a.Genre == GenreRaw {
				return domain.Unprocessable("RAW_ANCESTOR", "only raw notes may sit under a raw note").WithField("parent_id")
			}
		}
	}
	return nil
}

// checkGenreChange keeps the raw rule when n's genre becomes genre.
func checkGenreChange(ctx context.Context, notes NoteStore, n Note, genre Genre) error {
	if genre == GenreRaw {
		desc, err := notes.Descendants(ctx, n.OwnerID, n.ID)
		if err != nil {
			return fmt.Errorf("descendants: %w", err)
		}
		for _, d := range desc {
			if d.Note.Genre != GenreRaw {
				return domain.Unprocessable("RAW_ANCESTOR", "a note with non-raw notes below it cannot become raw").WithField("genre")
			}
		}
		return nil
	}
	ancestors, err := notes.Ancestors(ctx, n.OwnerID, n.ID)
	if err != nil {
		return fmt.Errorf("load ancestors: %w", err)
	}
	for _, a := range ancestors {
		if a.Genre == GenreRaw {
			return domain.Unprocessable("RAW_ANCESTOR", "a note under a raw note must stay raw").WithField("genre")
		}
	}
	return nil
}

func sameParent(a, b *uuid.UUID) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// WritingData is the data of writing.published and writing.unpublished.
type WritingData struct {
	NoteID uuid.UUID `json:"note_id"`
}

// recordWriting records writing.published or writing.unpublished when the
// "published writing" predicate changes between before and after (a zero
// before is a new note; deleted means after is gone).
func recordWriting(ctx context.Context, tx Tx, before, after Note, deleted bool) error {
	was := before.publishedWriting()
	is := !deleted && after.publishedWriting()
	var eventType, subject string
	var noteID uuid.UUID
	switch {
	case !was && is:
		eventType, subject, noteID = domain.EventWritingPublished, after.URI, after.ID
	case was && !is:
		eventType, subject, noteID = domain.EventWritingUnpublished, before.URI, before.ID
		if !deleted {
			subject = after.URI
		}
	default:
		return nil
	}
	ownerID := after.OwnerID
	if deleted {
		ownerID = before.OwnerID
	}
	if _, err := tx.Recorder().Record(ctx, ownerID, eventType, subject, WritingData{NoteID: noteID}); err != nil {
		return fmt.Errorf("record %s: %w", eventType, err)
	}
	return nil
}
