package corpus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// IndexSubscriberName is the corpus.index subscriber's name, which is also
// the River job kind the relay inserts for it.
const IndexSubscriberName = "corpus.index"

// IndexSubscriberGlobs returns the event-type globs corpus.index subscribes
// to.
func IndexSubscriberGlobs() []string { return []string{domain.EventCorpusNoteChanged} }

// ErrUnprocessableEvent marks an event the indexer can never handle (a
// payload of the wrong shape): retrying cannot help, so the job wrapper
// cancels it instead.
var ErrUnprocessableEvent = errors.New("unprocessable event")

// NoteChange is the data of corpus.note.changed as the corpus_notes trigger
// writes it.
type NoteChange struct {
	Op           string     `json:"op"` // created, updated or deleted
	NoteID       uuid.UUID  `json:"note_id"`
	Genre        Genre      `json:"genre"`
	ParentID     *uuid.UUID `json:"parent_id"`
	Published    bool       `json:"published"`
	WasPublished bool       `json:"was_published"`
	// PathChanged says the note's path changed (parent, slug or title
	// segment), so every URI below it changed too.
	PathChanged bool `json:"path_changed"`
}

// Indexer is the corpus.index subscriber: it keeps the full-text index of
// the published, non-raw slice in step with the notes. No write path calls
// it; the relay hands it every corpus.note.changed event.
type Indexer struct {
	uow UnitOfWork
}

// NewIndexer returns the corpus.index subscriber over uow.
func NewIndexer(uow UnitOfWork) *Indexer { return &Indexer{uow: uow} }

// Handle brings the index in line with the notes an event is about: the
// note, and its whole subtree when its path changed. It reads the notes'
// current state rather than trusting the event, so it is idempotent and
// order-independent — running a job twice, or an older job after a newer
// one, leaves the index right. Jobs of one owner are serialised by the
// index lock. An event already pruned is nothing to do; a malformed one
// returns ErrUnprocessableEvent.
func (ix *Indexer) Handle(ctx context.Context, eventID uuid.UUID) error {
	return ix.uow.Do(ctx, func(tx Tx) error {
		ev, err := tx.Events().Event(ctx, eventID)
		if errors.Is(err, domain.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("load event %s: %w", eventID, err)
		}
		if ev.Type != domain.EventCorpusNoteChanged {
			return fmt.Errorf("event %s has type %q: %w", eventID, ev.Type, ErrUnprocessableEvent)
		}
		var ch NoteChange
		if err := json.Unmarshal(ev.Data, &ch); err != nil || ch.NoteID == uuid.Nil {
			return fmt.Errorf("event %s data %s: %w", eventID, ev.Data, ErrUnprocessableEvent)
		}
		if err := tx.Index().Lock(ctx, ev.OwnerID); err != nil {
			return fmt.Errorf("lock index: %w", err)
		}
		ids := []uuid.UUID{ch.NoteID}
		if ch.PathChanged {
			desc, err := tx.Notes().Descendants(ctx, ev.OwnerID, ch.NoteID)
			if err != nil {
				return fmt.Errorf("descendants of %s: %w", ch.NoteID, err)
			}
			for _, d := range desc {
				ids = append(ids, d.Note.ID)
			}
		}
		return reindex(ctx, tx, ev.OwnerID, ids)
	})
}

// reindex upserts the indexable notes among ids and removes the rest.
func reindex(ctx context.Context, tx Tx, ownerID uuid.UUID, ids []uuid.UUID) error {
	current, err := tx.Notes().GetMany(ctx, ownerID, ids)
	if err != nil {
		return fmt.Errorf("load notes: %w", err)
	}
	keep := map[uuid.UUID]bool{}
	for _, n := range current {
		if !n.Indexable() {
			continue
		}
		keep[n.ID] = true
		if err := tx.Index().Upsert(ctx, entryOf(n)); err != nil {
			return fmt.Errorf("index note %s: %w", n.ID, err)
		}
	}
	var gone []uuid.UUID
	for _, id := range ids {
		if !keep[id] {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		if err := tx.Index().Remove(ctx, ownerID, gone); err != nil {
			return fmt.Errorf("remove from index: %w", err)
		}
	}
	return nil
}

// excerptLen is how much of a body stands in for a missing excerpt.
const excerptLen = 240

func entryOf(n Note) IndexEntry {
	return IndexEntry{NoteID: n.ID, OwnerID: n.OwnerID, URI: n.URI, Genre: n.Genre, Title: n.Title,
		Body: n.Body, Tags: n.Tags, Lang: n.Lang, Excerpt: excerptOf(n)}
}

// excerptOf is the note's excerpt, else the start of its body cut at a word.
func excerptOf(n Note) string {
	if e := strings.TrimSpace(n.Excerpt); e != "" {
		return e
	}
	body := strings.Join(strings.Fields(n.Body), " ")
	if utf8.RuneCountInString(body) <= excerptLen {
		return body
	}
	cut := string([]rune(body)[:excerptLen])
	if i := strings.LastIndexByte(cut, ' '); i > excerptLen/2 {
		cut = cut[:i]
	}
	return cut + "…"
}
