package corpus

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain/op"
)

// NoteView is a note as the admin API returns it.
type NoteView struct {
	ID           uuid.UUID  `json:"id"`
	URI          string     `json:"uri"`
	Genre        Genre      `json:"genre"`
	Title        string     `json:"title"`
	Body         string     `json:"body"`
	Tags         []string   `json:"tags"`
	ParentID     *uuid.UUID `json:"parent_id"`
	Published    bool       `json:"published"`
	ShowAsSource bool       `json:"show_as_source"`
	Aliases      []string   `json:"aliases"`
	Excerpt      string     `json:"excerpt"`
	Slug         string     `json:"slug"`
	Archived     bool       `json:"archived"`
	CSSClasses   []string   `json:"css_classes"`
	Lang         string     `json:"lang"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
}

// ViewOf returns the API view of n.
func ViewOf(n Note) NoteView {
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	return NoteView{ID: n.ID, URI: n.URI, Genre: n.Genre, Title: n.Title, Body: n.Body, Tags: nonNil(n.Tags),
		ParentID: n.ParentID, Published: n.Published, ShowAsSource: n.ShowAsSource, Aliases: nonNil(n.Aliases),
		Excerpt: n.Excerpt, Slug: n.Slug, Archived: n.Archived, CSSClasses: nonNil(n.CSSClasses), Lang: n.Lang,
		CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt}
}

// NoteInput is the body of notes.create and one note of vault.import.
type NoteInput struct {
	Genre        Genre      `json:"genre" doc:"wiki, writing, journal or raw"`
	Title        string     `json:"title"`
	Body         string     `json:"body,omitempty" text:"multiline"`
	ParentID     *uuid.UUID `json:"parent_id,omitempty" doc:"an existing note to place this one under"`
	Slug         string     `json:"slug,omitempty" doc:"the URI segment; defaults to one made from the title"`
	Tags         []string   `json:"tags,omitempty"`
	Published    bool       `json:"published,omitempty"`
	ShowAsSource bool       `json:"show_as_source,omitempty"`
	Aliases      []string   `json:"aliases,omitempty"`
	Excerpt      string     `json:"excerpt,omitempty" text:"multiline"`
	Archived     bool       `json:"archived,omitempty"`
	CSSClasses   []string   `json:"css_classes,omitempty"`
	Lang         string     `json:"lang,omitempty" doc:"language tag; picks the text-search configuration"`
}

func (in NoteInput) fields() Fields {
	return Fields{Genre: in.Genre, Title: in.Title, Body: in.Body, Tags: in.Tags, Published: in.Published,
		ShowAsSource: in.ShowAsSource, Aliases: in.Aliases, Excerpt: in.Excerpt, Slug: in.Slug,
		Archived: in.Archived, CSSClasses: in.CSSClasses, Lang: in.Lang}
}

// NoteID addresses one note.
type NoteID struct {
	ID uuid.UUID `json:"id" path:"id"`
}

// UpdateNoteInput is the body of notes.update: only the fields present
// change. The parent changes through notes.move.
type UpdateNoteInput struct {
	ID           uuid.UUID `json:"id" path:"id"`
	Genre        *Genre    `json:"genre,omitempty"`
	Title        *string   `json:"title,omitempty"`
	Body         *string   `json:"body,omitempty" text:"multiline"`
	Tags         *[]string `json:"tags,omitempty"`
	Published    *bool     `json:"published,omitempty"`
	ShowAsSource *bool     `json:"show_as_source,omitempty"`
	Aliases      *[]string `json:"aliases,omitempty"`
	Excerpt      *string   `json:"excerpt,omitempty" text:"multiline"`
	Slug         *string   `json:"slug,omitempty"`
	Archived     *bool     `json:"archived,omitempty"`
	CSSClasses   *[]string `json:"css_classes,omitempty"`
	Lang         *string   `json:"lang,omitempty"`
}

// DeleteNoteInput addresses a note to delete.
type DeleteNoteInput struct {
	ID        uuid.UUID `json:"id" path:"id"`
	Recursive bool      `json:"recursive,omitempty" query:"recursive" doc:"also delete every note below it"`
}

// MoveNoteInput re-parents a note.
type MoveNoteInput struct {
	ID       uuid.UUID  `json:"id" path:"id"`
	ParentID *uuid.UUID `json:"parent_id" doc:"the new parent; null or absent moves the note to the root"`
}

// ListNotesInput filters and pages notes.
type ListNotesInput struct {
	op.PageInput
	Genre     Genre      `json:"genre,omitempty" query:"genre"`
	ParentID  *uuid.UUID `json:"parent_id,omitempty" query:"parent_id" doc:"only the children of this note"`
	Root      bool       `json:"root,omitempty" query:"root" doc:"only notes without a parent"`
	Published *bool      `json:"published,omitempty" query:"published"`
}

// SearchInput is a search query.
type SearchInput struct {
	Q     string `json:"q" query:"q" doc:"web-search syntax: words, \"phrases\", -exclusions, or"`
	Limit int    `json:"limit,omitempty" query:"limit" range:"1,100" doc:"at most 100, default 20"`
}

// SearchHitView is one search result.
type SearchHitView struct {
	NoteID    uuid.UUID `json:"note_id"`
	URI       string    `json:"uri"`
	Genre     Genre     `json:"genre"`
	Title     string    `json:"title"`
	Excerpt   string    `json:"excerpt"`
	Published bool      `json:"published"`
	Rank      float64   `json:"rank"`
}

// HitViews returns the API views of hits (never nil).
func HitViews(hits []SearchHit) []SearchHitView {
	out := make([]SearchHitView, 0, len(hits))
	for _, h := range hits {
		out = append(out, SearchHitView(h))
	}
	return out
}

// ImportNoteInput is one note of vault.import.
type ImportNoteInput struct {
	NoteInput
	Ref       string `json:"ref,omitempty" doc:"a name other notes of the import use as parent_ref"`
	ParentRef string `json:"parent_ref,omitempty" doc:"the ref of the note of this import to place this one under"`
}

// VaultImportMeta declares vault.import. Its REST route has a handler of
// its own (a zip is a raw body), which authorizes the caller by it as
// Op.Call does on every other surface.
var VaultImportMeta = op.Meta{Name: "vault.import", Scopes: op.WritesIn(op.ScopeNotes), Summary: "Import many notes in one transaction (JSON; a zip of markdown files goes to the same path)"}

// ImportInputView is the body of vault.import.
type ImportInputView struct {
	ParentID *uuid.UUID        `json:"parent_id,omitempty" doc:"an existing note the import's root notes go under"`
	Notes    []ImportNoteInput `json:"notes"`
}

// ImportedView is one created note of an import.
type ImportedView struct {
	Ref string    `json:"ref,omitempty"`
	ID  uuid.UUID `json:"id"`
	URI string    `json:"uri"`
}

// ImportResultView is the answer of vault.import.
type ImportResultView struct {
	Imported int            `json:"imported"`
	Notes    []ImportedView `json:"notes"`
}

// ImportFromView turns the API body into the use case's input. A note's
// own parent_id is not allowed in an import (use parent_ref or the import's
// parent_id), so it is refused rather than silently ignored.
func ImportFromView(in ImportInputView) (ImportInput, error) {
	out := ImportInput{ParentID: in.ParentID, Items: make([]ImportItem, len(in.Notes))}
	for i, n := range in.Notes {
		if n.ParentID != nil {
			return ImportInput{}, importParentIDError(i)
		}
		out.Items[i] = ImportItem{Ref: n.Ref, ParentRef: n.ParentRef, Fields: n.fields()}
	}
	return out, nil
}

// ImportResultViewOf returns the API view of an import's result.
func ImportResultViewOf(r ImportResult) ImportResultView {
	v := ImportResultView{Imported: len(r.Notes), Notes: make([]ImportedView, 0, len(r.Notes))}
	for _, n := range r.Notes {
		v.Notes = append(v.Notes, ImportedView{Ref: n.Ref, ID: n.Note.ID, URI: n.Note.URI})
	}
	return v
}

// Ops declares the corpus ops once; every surface projects them.
func (s *Service) Ops() op.Set {
	return op.Set{
		op.New(op.Meta{Name: "notes.create", Scopes: op.WritesIn(op.ScopeNotes), Summary: "Create a note"},
			func(ctx context.Context, c op.Caller, in NoteInput) (NoteView, error) {
				n, err := s.Create(ctx, c.OwnerID, CreateInput{Fields: in.fields(), ParentID: in.ParentID})
				return ViewOf(n), err
			}),
		op.New(op.Meta{Name: "notes.get", Scopes: op.ReadsIn(op.ScopeNotes), Summary: "Get a note with its URI"},
			func(ctx context.Context, c op.Caller, in NoteID) (NoteView, error) {
				n, err := s.Get(ctx, c.OwnerID, in.ID)
				return ViewOf(n), err
			}),
		op.New(op.Meta{Name: "notes.update", Scopes: op.WritesIn(op.ScopeNotes), Summary: "Change some fields of a note (published included)"},
			func(ctx context.Context, c op.Caller, in UpdateNoteInput) (NoteView, error) {
				n, err := s.Update(ctx, c.OwnerID, in.ID, Patch{Genre: in.Genre, Title: in.Title, Body: in.Body, Tags: in.Tags,
					Published: in.Published, ShowAsSource: in.ShowAsSource, Aliases: in.Aliases, Excerpt: in.Excerpt,
					Slug: in.Slug, Archived: in.Archived, CSSClasses: in.CSSClasses, Lang: in.Lang})
				return ViewOf(n), err
			}),
		op.New(op.Meta{Name: "notes.delete", Scopes: op.WritesIn(op.ScopeNotes), Summary: "Delete a note (recursive=true: with everything below it)"},
			func(ctx context.Context, c op.Caller, in DeleteNoteInput) (op.Empty, error) {
				return op.Empty{}, s.Delete(ctx, c.OwnerID, in.ID, in.Recursive)
			}),
		op.New(op.Meta{Name: "notes.list", Scopes: op.ReadsIn(op.ScopeNotes), Summary: "List notes, newest first"},
			func(ctx context.Context, c op.Caller, in ListNotesInput) (op.Page[NoteView], error) {
				p, err := s.List(ctx, c.OwnerID, ListInput{Genre: in.Genre, ParentID: in.ParentID, Root: in.Root,
					Published: in.Published, Limit: in.NormalizedLimit(), Cursor: in.Cursor})
				if err != nil {
					return op.Page[NoteView]{}, err
				}
				out := op.Page[NoteView]{Data: make([]NoteView, 0, len(p.Notes))}
				for _, n := range p.Notes {
					out.Data = append(out.Data, ViewOf(n))
				}
				if p.NextCursor != "" {
					out.NextCursor = &p.NextCursor
				}
				return out, nil
			}),
		op.New(op.Meta{Name: "notes.publish", Scopes: op.WritesIn(op.ScopeNotes), Summary: "Publish a note"},
			func(ctx context.Context, c op.Caller, in NoteID) (NoteView, error) {
				n, err := s.SetPublished(ctx, c.OwnerID, in.ID, true)
				return ViewOf(n), err
			}),
		op.New(op.Meta{Name: "notes.unpublish", Scopes: op.WritesIn(op.ScopeNotes), Summary: "Unpublish a note"},
			func(ctx context.Context, c op.Caller, in NoteID) (NoteView, error) {
				n, err := s.SetPublished(ctx, c.OwnerID, in.ID, false)
				return ViewOf(n), err
			}),
		op.New(op.Meta{Name: "notes.move", Scopes: op.WritesIn(op.ScopeNotes), Summary: "Move a note under another (or to the root)"},
			func(ctx context.Context, c op.Caller, in MoveNoteInput) (NoteView, error) {
				n, err := s.Move(ctx, c.OwnerID, in.ID, in.ParentID)
				return ViewOf(n), err
			}),
		op.New(VaultImportMeta,
			func(ctx context.Context, c op.Caller, in ImportInputView) (ImportResultView, error) {
				imp, err := ImportFromView(in)
				if err != nil {
					return ImportResultView{}, err
				}
				r, err := s.Import(ctx, c.OwnerID, imp)
				if err != nil {
					return ImportResultView{}, err
				}
				return ImportResultViewOf(r), nil
			}),
		op.New(op.Meta{Name: "search.admin", Scopes: op.ReadsIn(op.ScopeNotes), Summary: "Search every note, drafts and raw included"},
			func(ctx context.Context, c op.Caller, in SearchInput) (op.List[SearchHitView], error) {
				hits, err := s.SearchAdmin(ctx, c.OwnerID, in.Q, in.Limit)
				return op.List[SearchHitView]{Data: HitViews(hits)}, err
			}),
	}
}
