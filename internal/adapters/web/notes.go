package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// note is a note as the corpus ops return it.
type note struct {
	ID        uuid.UUID  `json:"id"`
	URI       string     `json:"uri"`
	Genre     string     `json:"genre"`
	Title     string     `json:"title"`
	Body      string     `json:"body"`
	Tags      []string   `json:"tags"`
	ParentID  *uuid.UUID `json:"parent_id"`
	Published bool       `json:"published"`
	Slug      string     `json:"slug"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// searchHit is a row of search.admin.
type searchHit struct {
	NoteID    uuid.UUID `json:"note_id"`
	URI       string    `json:"uri"`
	Genre     string    `json:"genre"`
	Title     string    `json:"title"`
	Excerpt   string    `json:"excerpt"`
	Published bool      `json:"published"`
}

// genres are the note genres the form offers.
var genres = []string{"wiki", "writing", "journal", "raw"}

type notesData struct {
	Notes  []note
	Hits   []searchHit
	Query  string
	Genre  string
	Next   string
	Genres []string
	CSRF   string
}

type noteFormData struct {
	Note   note
	Tags   string
	Parent string
	New    bool
	Genres []string
	CSRF   string
}

func (h *Handler) notesList(c echo.Context, s *Session) error {
	if h.notes == nil {
		return h.fail(c, s, notDeclared("notes.list"))
	}
	ctx := c.Request().Context()
	d := notesData{Query: strings.TrimSpace(c.QueryParam("q")), Genre: c.QueryParam("genre"), Genres: genres, CSRF: s.CSRFToken}
	if d.Query != "" {
		hits, err := h.notes.search.Call(ctx, s.Caller, corpus.SearchInput{Q: d.Query, Limit: 50})
		if err != nil {
			return h.fail(c, s, err)
		}
		for _, hit := range hits.Data {
			d.Hits = append(d.Hits, searchHit{NoteID: hit.NoteID, URI: hit.URI, Genre: string(hit.Genre), Title: hit.Title, Excerpt: hit.Excerpt, Published: hit.Published})
		}
	} else {
		in := corpus.ListNotesInput{PageInput: op.PageInput{Limit: 50, Cursor: c.QueryParam("cursor")}, Genre: corpus.Genre(d.Genre)}
		p, err := h.notes.list.Call(ctx, s.Caller, in)
		if err != nil {
			return h.fail(c, s, err)
		}
		for _, v := range p.Data {
			d.Notes = append(d.Notes, noteOf(v))
		}
		if p.NextCursor != nil {
			d.Next = "/admin/notes?cursor=" + url.QueryEscape(*p.NextCursor) + "&genre=" + url.QueryEscape(d.Genre)
		}
	}
	return h.render(c, http.StatusOK, "notes", view{Title: "Notes", Section: "notes", Session: s, Notice: notice(c), Data: d})
}

func (h *Handler) noteNew(c echo.Context, s *Session) error {
	return h.render(c, http.StatusOK, "note", view{Title: "New note", Section: "notes", Session: s,
		Data: noteFormData{Note: note{Genre: "wiki"}, New: true, Genres: genres, CSRF: s.CSRFToken}})
}

// noteForm reads the note form: the fields notes.create and notes.update
// share, and the form as it was filled in.
func noteForm(c echo.Context) (note, noteFormData) {
	v := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	tags := splitList(c.FormValue("tags"))
	if tags == nil {
		tags = []string{}
	}
	n := note{Genre: v("genre"), Title: v("title"), Body: c.FormValue("body"), Slug: v("slug"), Tags: tags, Published: c.FormValue("published") != ""}
	return n, noteFormData{Note: n, Tags: strings.Join(tags, ", "), Parent: v("parent_id"), Genres: genres}
}

func (h *Handler) noteCreate(c echo.Context, s *Session) error {
	if h.notes == nil {
		return h.fail(c, s, notDeclared("notes.create"))
	}
	n, f := noteForm(c)
	f.New, f.CSRF = true, s.CSRFToken
	in := corpus.NoteInput{Genre: corpus.Genre(n.Genre), Title: n.Title, Body: n.Body, Slug: n.Slug, Tags: n.Tags, Published: n.Published}
	again := func(err error) error {
		status, detail := h.describe(c, err)
		return h.render(c, status, "note", view{Title: "New note", Section: "notes", Session: s, Error: detail, Data: f})
	}
	if f.Parent != "" {
		pid, err := uuid.Parse(f.Parent)
		if err != nil {
			return again(domain.Validation("INVALID_ID", "the parent must be a note id").WithField("parent_id"))
		}
		in.ParentID = &pid
	}
	created, err := h.notes.create.Call(c.Request().Context(), s.Caller, in)
	if err != nil {
		return again(err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/notes/"+created.ID.String()+"?notice=note_saved")
}

func (h *Handler) noteShow(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if h.notes == nil {
		return h.fail(c, s, notDeclared("notes.get"))
	}
	v, err := h.notes.get.Call(c.Request().Context(), s.Caller, corpus.NoteID{ID: id})
	if err != nil {
		return h.fail(c, s, err)
	}
	n := noteOf(v)
	f := noteFormData{Note: n, Tags: strings.Join(n.Tags, ", "), Genres: genres, CSRF: s.CSRFToken}
	return h.render(c, http.StatusOK, "note", view{Title: n.Title, Section: "notes", Session: s, Notice: notice(c), Data: f})
}

func (h *Handler) noteUpdate(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if h.notes == nil {
		return h.fail(c, s, notDeclared("notes.update"))
	}
	n, f := noteForm(c)
	genre := corpus.Genre(n.Genre)
	in := corpus.UpdateNoteInput{ID: id, Genre: &genre, Title: &n.Title, Body: &n.Body, Tags: &n.Tags, Published: &n.Published}
	if n.Slug != "" {
		in.Slug = &n.Slug
	}
	if _, err := h.notes.update.Call(c.Request().Context(), s.Caller, in); err != nil {
		f.Note.ID, f.CSRF = id, s.CSRFToken
		status, detail := h.describe(c, err)
		return h.render(c, status, "note", view{Title: f.Note.Title, Section: "notes", Session: s, Error: detail, Data: f})
	}
	return c.Redirect(http.StatusSeeOther, "/admin/notes/"+id.String()+"?notice=note_saved")
}

func (h *Handler) notePublish(c echo.Context, s *Session) error {
	if h.notes == nil {
		return h.fail(c, s, notDeclared("notes.publish"))
	}
	return h.noteAction(c, s, h.notes.publish, "note_published")
}

func (h *Handler) noteUnpublish(c echo.Context, s *Session) error {
	if h.notes == nil {
		return h.fail(c, s, notDeclared("notes.unpublish"))
	}
	return h.noteAction(c, s, h.notes.unpublish, "note_unpublished")
}

func (h *Handler) noteAction(c echo.Context, s *Session, action op.Handle[corpus.NoteID, corpus.NoteView], noticeKey string) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if _, err := action.Call(c.Request().Context(), s.Caller, corpus.NoteID{ID: id}); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/notes/"+id.String()+"?notice="+noticeKey)
}

// noteDelete deletes a note after a confirmation step; with recursive it
// takes every note below it too.
func (h *Handler) noteDelete(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if h.notes == nil {
		return h.fail(c, s, notDeclared("notes.delete"))
	}
	recursive := c.FormValue("recursive") == "true"
	if !confirmed(c) {
		n, err := h.notes.get.Call(c.Request().Context(), s.Caller, corpus.NoteID{ID: id})
		if err != nil {
			return h.fail(c, s, err)
		}
		d := confirmData{
			Heading: "Delete note?", Action: "/admin/notes/" + id.String() + "/delete", Button: "Delete note", Back: "/admin/notes/" + id.String(), Danger: true,
			Lines: []string{"The note \u201c" + n.Title + "\u201d (" + n.URI + ") is deleted; a published note disappears from the site and its subscribers hear corpus.note.changed.",
				"A note with notes below it is refused unless you delete them with it."},
		}
		if recursive {
			d.Fields = map[string]string{"recursive": "true"}
			d.Lines[1] = "Every note below it is deleted with it."
		}
		return h.confirm(c, s, "notes", d)
	}
	if _, err := h.notes.delete.Call(c.Request().Context(), s.Caller, corpus.DeleteNoteInput{ID: id, Recursive: recursive}); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/notes?notice=note_deleted")
}

// noteMove moves a note under another (by id) or, with an empty parent, to
// the root.
func (h *Handler) noteMove(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if h.notes == nil {
		return h.fail(c, s, notDeclared("notes.move"))
	}
	in := corpus.MoveNoteInput{ID: id}
	if raw := strings.TrimSpace(c.FormValue("parent_id")); raw != "" {
		pid, err := uuid.Parse(raw)
		if err != nil {
			return h.fail(c, s, domain.Validation("INVALID_ID", "the new parent must be a note id").WithField("parent_id"))
		}
		in.ParentID = &pid
	}
	if _, err := h.notes.move.Call(c.Request().Context(), s.Caller, in); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/notes/"+id.String()+"?notice=note_moved")
}
