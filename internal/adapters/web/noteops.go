package web

import (
	"errors"
	"fmt"

	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// noteOps are the corpus ops as the note pages call them: typed handles,
// resolved once when the UI is built.
type noteOps struct {
	list      op.Handle[corpus.ListNotesInput, op.Page[corpus.NoteView]]
	search    op.Handle[corpus.SearchInput, op.List[corpus.SearchHitView]]
	create    op.Handle[corpus.NoteInput, corpus.NoteView]
	get       op.Handle[corpus.NoteID, corpus.NoteView]
	update    op.Handle[corpus.UpdateNoteInput, corpus.NoteView]
	publish   op.Handle[corpus.NoteID, corpus.NoteView]
	unpublish op.Handle[corpus.NoteID, corpus.NoteView]
	delete    op.Handle[corpus.DeleteNoteInput, op.Empty]
	move      op.Handle[corpus.MoveNoteInput, corpus.NoteView]
}

// noteOpsOf resolves the note pages' handles in ops. It returns nil when ops
// has no notes section (no notes.list), and fails, naming the op, when the
// section is there but one of its ops is missing or has other types.
func noteOpsOf(ops op.Set) (*noteOps, error) {
	if _, ok := ops.Find("notes.list"); !ok {
		return nil, nil
	}
	var n noteOps
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	n.list, err = op.HandleOf[corpus.ListNotesInput, op.Page[corpus.NoteView]](ops, "notes.list")
	keep(err)
	n.search, err = op.HandleOf[corpus.SearchInput, op.List[corpus.SearchHitView]](ops, "search.admin")
	keep(err)
	n.create, err = op.HandleOf[corpus.NoteInput, corpus.NoteView](ops, "notes.create")
	keep(err)
	n.get, err = op.HandleOf[corpus.NoteID, corpus.NoteView](ops, "notes.get")
	keep(err)
	n.update, err = op.HandleOf[corpus.UpdateNoteInput, corpus.NoteView](ops, "notes.update")
	keep(err)
	n.publish, err = op.HandleOf[corpus.NoteID, corpus.NoteView](ops, "notes.publish")
	keep(err)
	n.unpublish, err = op.HandleOf[corpus.NoteID, corpus.NoteView](ops, "notes.unpublish")
	keep(err)
	n.delete, err = op.HandleOf[corpus.DeleteNoteInput, op.Empty](ops, "notes.delete")
	keep(err)
	n.move, err = op.HandleOf[corpus.MoveNoteInput, corpus.NoteView](ops, "notes.move")
	keep(err)
	if len(errs) > 0 {
		return nil, fmt.Errorf("web: the note pages need the corpus ops: %w", errors.Join(errs...))
	}
	return &n, nil
}

// noteOf is the page's view of a note.
func noteOf(v corpus.NoteView) note {
	return note{ID: v.ID, URI: v.URI, Genre: string(v.Genre), Title: v.Title, Body: v.Body, Tags: v.Tags, ParentID: v.ParentID,
		Published: v.Published, Slug: v.Slug, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt}
}
