package web

import (
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
	hs := handles{ops: ops}
	bind(&hs, &n.list, "notes.list")
	bind(&hs, &n.search, "search.admin")
	bind(&hs, &n.create, "notes.create")
	bind(&hs, &n.get, "notes.get")
	bind(&hs, &n.update, "notes.update")
	bind(&hs, &n.publish, "notes.publish")
	bind(&hs, &n.unpublish, "notes.unpublish")
	bind(&hs, &n.delete, "notes.delete")
	bind(&hs, &n.move, "notes.move")
	if err := hs.err("the note pages need the corpus ops"); err != nil {
		return nil, err
	}
	return &n, nil
}

// noteOf is the page's view of a note.
func noteOf(v corpus.NoteView) note {
	return note{ID: v.ID, URI: v.URI, Genre: string(v.Genre), Title: v.Title, Body: v.Body, Tags: v.Tags, ParentID: v.ParentID,
		Published: v.Published, Slug: v.Slug, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt}
}
