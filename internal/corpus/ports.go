package corpus

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// UnitOfWork runs fn in one transaction: everything fn does through tx —
// store writes and recorded events — commits together or not at all. When fn
// returns an error the transaction rolls back and Do returns that error
// unchanged (wrapped errors keep their domain.Error).
type UnitOfWork interface {
	Do(ctx context.Context, fn func(tx Tx) error) error
}

// Tx hands out the stores and the Recorder bound to one transaction.
type Tx interface {
	Notes() NoteStore
	Index() IndexStore
	Events() EventReader
	Recorder() domain.Recorder
}

// NoteStore is what the use cases need from note storage. Every method is
// scoped by owner: another owner's note is domain.ErrNotFound. Notes come
// back with URI filled from the current parent chain.
type NoteStore interface {
	// LockTree serialises structural changes (create under a parent, move,
	// delete, genre change) of one owner's tree until the transaction ends,
	// so two concurrent moves cannot build a cycle between them.
	LockTree(ctx context.Context, ownerID uuid.UUID) error
	// Insert writes a new note (ID chosen by the caller) and returns it as
	// stored.
	Insert(ctx context.Context, n Note) (Note, error)
	// Get returns one note.
	Get(ctx context.Context, ownerID, id uuid.UUID) (Note, error)
	// GetForUpdate is Get that also locks the note's row until the
	// transaction ends, so concurrent read-modify-write updates serialise.
	GetForUpdate(ctx context.Context, ownerID, id uuid.UUID) (Note, error)
	// GetMany returns the notes among ids that exist, in any order.
	GetMany(ctx context.Context, ownerID uuid.UUID, ids []uuid.UUID) ([]Note, error)
	// Update writes every writable field and parent of n, stamps
	// updated_at, and returns the note as stored.
	Update(ctx context.Context, n Note) (Note, error)
	// Delete removes one note, which must have no children.
	Delete(ctx context.Context, ownerID, id uuid.UUID) error
	// Ancestors returns the ancestors of id, nearest first (its parent, its
	// grandparent, …), at most MaxDepth+1 of them.
	Ancestors(ctx context.Context, ownerID, id uuid.UUID) ([]Note, error)
	// Descendants returns every note below id with its depth under id (1 =
	// child), deepest first.
	Descendants(ctx context.Context, ownerID, id uuid.UUID) ([]Descendant, error)
	// List returns up to q.Limit+1 notes in the order (created_at, id)
	// descending, starting after q.After.
	List(ctx context.Context, ownerID uuid.UUID, q ListQuery) ([]Note, error)
	// Search ranks every note of the owner — drafts and raw included —
	// against a web-search style query (admin search).
	Search(ctx context.Context, ownerID uuid.UUID, query string, limit int) ([]SearchHit, error)
}

// Descendant is a note below another and how far below.
type Descendant struct {
	Note  Note
	Depth int
}

// ListQuery selects and pages notes.
type ListQuery struct {
	// Genre, when set, keeps only notes of that genre.
	Genre Genre
	// ParentID, when set, keeps only the children of that note; Root keeps
	// only notes without a parent.
	ParentID *uuid.UUID
	Root     bool
	// Published, when set, keeps only notes whose flag equals it.
	Published *bool
	Limit     int
	After     *Cursor
}

// Cursor is the sort key of the last note of a page.
type Cursor struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// SearchHit is one search result.
type SearchHit struct {
	NoteID    uuid.UUID
	URI       string
	Genre     Genre
	Title     string
	Excerpt   string
	Published bool
	Rank      float64
}

// IndexEntry is what the full-text index stores for one published note; the
// store derives the weighted text-search vector from it (title A, tags B,
// body C) in the text-search configuration its Lang maps to.
type IndexEntry struct {
	NoteID  uuid.UUID
	OwnerID uuid.UUID
	URI     string
	Genre   Genre
	Title   string
	Body    string
	Tags    []string
	Lang    string
	Excerpt string
}

// IndexStore is the full-text index of the published slice.
type IndexStore interface {
	// Lock serialises index maintenance of one owner until the transaction
	// ends, so two jobs for one note cannot write an older state last.
	Lock(ctx context.Context, ownerID uuid.UUID) error
	// Upsert writes or replaces the entry of one note.
	Upsert(ctx context.Context, e IndexEntry) error
	// Remove deletes the entries of ids (absent ones are ignored).
	Remove(ctx context.Context, ownerID uuid.UUID, ids []uuid.UUID) error
	// Search ranks the owner's indexed notes against a web-search style
	// query.
	Search(ctx context.Context, ownerID uuid.UUID, query string, limit int) ([]SearchHit, error)
}

// ChangeEvent is an event as the corpus.index subscriber reads it.
type ChangeEvent struct {
	ID      uuid.UUID
	OwnerID uuid.UUID
	Type    string
	Subject string
	Data    json.RawMessage
}

// EventReader reads events by id.
type EventReader interface {
	// Event returns one event, or domain.ErrNotFound once retention has
	// pruned it.
	Event(ctx context.Context, id uuid.UUID) (ChangeEvent, error)
}
