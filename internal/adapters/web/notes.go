package web

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/domain"
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
	ctx := c.Request().Context()
	d := notesData{Query: strings.TrimSpace(c.QueryParam("q")), Genre: c.QueryParam("genre"), Genres: genres, CSRF: s.CSRFToken}
	if d.Query != "" {
		var hits struct {
			Data []searchHit `json:"data"`
		}
		if err := h.call(ctx, s, "search.admin", map[string]any{"q": d.Query, "limit": 50}, &hits); err != nil {
			return h.fail(c, s, err)
		}
		d.Hits = hits.Data
	} else {
		var p page[note]
		args := map[string]any{"limit": 50}
		if cur := c.QueryParam("cursor"); cur != "" {
			args["cursor"] = cur
		}
		if d.Genre != "" {
			args["genre"] = d.Genre
		}
		if err := h.call(ctx, s, "notes.list", args, &p); err != nil {
			return h.fail(c, s, err)
		}
		d.Notes = p.Data
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

// noteArgs reads the note form into the fields notes.create and
// notes.update share.
func noteArgs(c echo.Context) (map[string]any, noteFormData) {
	v := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	tags := splitList(c.FormValue("tags"))
	if tags == nil {
		tags = []string{}
	}
	n := note{Genre: v("genre"), Title: v("title"), Body: c.FormValue("body"), Slug: v("slug"), Tags: tags, Published: c.FormValue("published") != ""}
	args := map[string]any{"genre": n.Genre, "title": n.Title, "body": n.Body, "tags": tags, "published": n.Published}
	if n.Slug != "" {
		args["slug"] = n.Slug
	}
	return args, noteFormData{Note: n, Tags: strings.Join(tags, ", "), Parent: v("parent_id"), Genres: genres}
}

func (h *Handler) noteCreate(c echo.Context, s *Session) error {
	args, f := noteArgs(c)
	f.New, f.CSRF = true, s.CSRFToken
	again := func(err error) error {
		status, detail := h.describe(c, err)
		return h.render(c, status, "note", view{Title: "New note", Section: "notes", Session: s, Error: detail, Data: f})
	}
	if f.Parent != "" {
		pid, err := uuid.Parse(f.Parent)
		if err != nil {
			return again(domain.Validation("INVALID_ID", "the parent must be a note id").WithField("parent_id"))
		}
		args["parent_id"] = pid
	}
	var created note
	if err := h.call(c.Request().Context(), s, "notes.create", args, &created); err != nil {
		return again(err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/notes/"+created.ID.String()+"?notice=note_saved")
}

func (h *Handler) noteShow(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	var n note
	if err := h.call(c.Request().Context(), s, "notes.get", map[string]any{"id": id}, &n); err != nil {
		return h.fail(c, s, err)
	}
	f := noteFormData{Note: n, Tags: strings.Join(n.Tags, ", "), Genres: genres, CSRF: s.CSRFToken}
	return h.render(c, http.StatusOK, "note", view{Title: n.Title, Section: "notes", Session: s, Notice: notice(c), Data: f})
}

func (h *Handler) noteUpdate(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	args, f := noteArgs(c)
	args["id"] = id
	var saved note
	if err := h.call(c.Request().Context(), s, "notes.update", args, &saved); err != nil {
		f.Note.ID, f.CSRF = id, s.CSRFToken
		status, detail := h.describe(c, err)
		return h.render(c, status, "note", view{Title: f.Note.Title, Section: "notes", Session: s, Error: detail, Data: f})
	}
	return c.Redirect(http.StatusSeeOther, "/admin/notes/"+id.String()+"?notice=note_saved")
}

func (h *Handler) notePublish(c echo.Context, s *Session) error {
	return h.noteAction(c, s, "notes.publish", "note_published")
}

func (h *Handler) noteUnpublish(c echo.Context, s *Session) error {
	return h.noteAction(c, s, "notes.unpublish", "note_unpublished")
}

func (h *Handler) noteAction(c echo.Context, s *Session, opName, noticeKey string) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if err := h.call(c.Request().Context(), s, opName, map[string]any{"id": id}, nil); err != nil {
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
	recursive := c.FormValue("recursive") == "true"
	if !confirmed(c) {
		var n note
		if err := h.call(c.Request().Context(), s, "notes.get", map[string]any{"id": id}, &n); err != nil {
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
	if err := h.call(c.Request().Context(), s, "notes.delete", map[string]any{"id": id, "recursive": recursive}, nil); err != nil {
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
	args := map[string]any{"id": id, "parent_id": nil}
	if raw := strings.TrimSpace(c.FormValue("parent_id")); raw != "" {
		pid, err := uuid.Parse(raw)
		if err != nil {
			return h.fail(c, s, domain.Validation("INVALID_ID", "the new parent must be a note id").WithField("parent_id"))
		}
		args["parent_id"] = pid
	}
	if err := h.call(c.Request().Context(), s, "notes.move", args, nil); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/notes/"+id.String()+"?notice=note_moved")
}
