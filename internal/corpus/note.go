package corpus

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// Genre is the kind of a note and the scheme of its URI.
type Genre string

// The genres. Raw notes (inbox captures, imports not yet sorted) never leave
// the instance: they are never indexed for public search, never published,
// and no access code admits them.
const (
	GenreWiki    Genre = "wiki"
	GenreWriting Genre = "writing"
	GenreRaw     Genre = "raw"
	GenreJournal Genre = "journal"
)

// Genres returns every genre, in a stable order.
func Genres() []Genre { return []Genre{GenreWiki, GenreWriting, GenreJournal, GenreRaw} }

// Valid reports whether g is a known genre.
func (g Genre) Valid() bool {
	for _, k := range Genres() {
		if g == k {
			return true
		}
	}
	return false
}

// Limits on a note's fields, so one request cannot store an unbounded row.
const (
	MaxTitleLen   = 500
	MaxBodyLen    = 1 << 20
	MaxExcerptLen = 2000
	MaxSlugLen    = 200
	MaxLangLen    = 35
	MaxListLen    = 64  // tags, aliases, css classes
	MaxItemLen    = 200 // one tag, alias or class
	// MaxDepth is the deepest a note may sit (a root note has depth 1).
	MaxDepth = 32
)

// Note is one note of an owner's corpus.
type Note struct {
	ID           uuid.UUID
	OwnerID      uuid.UUID
	Genre        Genre
	Title        string
	Body         string
	Tags         []string
	ParentID     *uuid.UUID
	Published    bool
	ShowAsSource bool
	Aliases      []string
	Excerpt      string
	Slug         string
	Archived     bool
	CSSClasses   []string
	Lang         string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// URI is "<genre>://<path>" as the store computes it from the current
	// parent chain with the shared segment rule; stores fill it on every read
	// and write.
	URI string
}

// Segment returns the note's own path segment (NoteSegment).
func (n Note) Segment() string { return NoteSegment(n.ID, n.Slug, n.Title) }

// Indexable reports whether the note belongs in the public search index:
// published and not raw.
func (n Note) Indexable() bool {
	return n.Published && n.Genre != GenreRaw && !strings.HasPrefix(n.URI, string(GenreRaw)+"://")
}

// publishedWriting is the predicate behind writing.published and
// writing.unpublished: those events record it turning true or false.
func (n Note) publishedWriting() bool { return n.Genre == GenreWriting && n.Published }

// Fields are the writable fields of a note, as create and import take them.
type Fields struct {
	Genre        Genre
	Title        string
	Body         string
	Tags         []string
	Published    bool
	ShowAsSource bool
	Aliases      []string
	Excerpt      string
	Slug         string
	Archived     bool
	CSSClasses   []string
	Lang         string
}

// apply copies f onto n.
func (f Fields) apply(n *Note) {
	n.Genre, n.Title, n.Body, n.Tags = f.Genre, f.Title, f.Body, f.Tags
	n.Published, n.ShowAsSource, n.Aliases, n.Excerpt = f.Published, f.ShowAsSource, f.Aliases, f.Excerpt
	n.Slug, n.Archived, n.CSSClasses, n.Lang = f.Slug, f.Archived, f.CSSClasses, f.Lang
}

// fieldsOf returns n's writable fields.
func fieldsOf(n Note) Fields {
	return Fields{Genre: n.Genre, Title: n.Title, Body: n.Body, Tags: n.Tags, Published: n.Published,
		ShowAsSource: n.ShowAsSource, Aliases: n.Aliases, Excerpt: n.Excerpt, Slug: n.Slug,
		Archived: n.Archived, CSSClasses: n.CSSClasses, Lang: n.Lang}
}

// normalize trims what should be trimmed and returns the first problem.
func (f *Fields) normalize() error {
	f.Genre = Genre(strings.ToLower(strings.TrimSpace(string(f.Genre))))
	if f.Genre == "" {
		return domain.Validation("INVALID_GENRE", "genre is required").WithField("genre")
	}
	if !f.Genre.Valid() {
		return domain.Validation("INVALID_GENRE", fmt.Sprintf("genre %q is not one of wiki, writing, journal, raw", f.Genre)).WithField("genre")
	}
	f.Title = strings.TrimSpace(f.Title)
	f.Slug = strings.TrimSpace(f.Slug)
	f.Lang = strings.TrimSpace(f.Lang)
	checks := []struct {
		field string
		value string
		max   int
	}{
		{"title", f.Title, MaxTitleLen},
		{"body", f.Body, MaxBodyLen},
		{"excerpt", f.Excerpt, MaxExcerptLen},
		{"slug", f.Slug, MaxSlugLen},
		{"lang", f.Lang, MaxLangLen},
	}
	for _, c := range checks {
		if !validSegmentText(c.value) {
			return domain.Validation("INVALID_TEXT", c.field+" must be valid UTF-8 without NUL characters").WithField(c.field)
		}
		if utf8.RuneCountInString(c.value) > c.max {
			return domain.Validation("TOO_LONG", fmt.Sprintf("%s is longer than %d characters", c.field, c.max)).WithField(c.field)
		}
	}
	for _, l := range []struct {
		field string
		items *[]string
	}{{"tags", &f.Tags}, {"aliases", &f.Aliases}, {"css_classes", &f.CSSClasses}} {
		items, err := normalizeList(l.field, *l.items)
		if err != nil {
			return err
		}
		*l.items = items
	}
	for _, c := range f.CSSClasses {
		if !cssClass(c) {
			return domain.Validation("INVALID_CSS_CLASS", fmt.Sprintf("css class %q may hold only letters, digits, '-' and '_'", c)).WithField("css_classes")
		}
	}
	if f.Lang != "" && !langTag(f.Lang) {
		return domain.Validation("INVALID_LANG", "lang must be a language tag such as en or pt-BR").WithField("lang")
	}
	if f.Genre == GenreRaw && f.Published {
		return domain.Unprocessable("RAW_NOT_PUBLISHABLE", "a raw note cannot be published").WithField("published")
	}
	return nil
}

// normalizeList trims items, drops duplicates and refuses empty or long ones.
// It never returns nil, so stores write '{}' rather than NULL.
func normalizeList(field string, items []string) ([]string, error) {
	if len(items) > MaxListLen {
		return nil, domain.Validation("TOO_MANY", fmt.Sprintf("%s holds more than %d items", field, MaxListLen)).WithField(field)
	}
	out := make([]string, 0, len(items))
	seen := map[string]bool{}
	for _, it := range items {
		it = strings.TrimSpace(it)
		if it == "" {
			return nil, domain.Validation("EMPTY_ITEM", field+" may not hold an empty item").WithField(field)
		}
		if !validSegmentText(it) || utf8.RuneCountInString(it) > MaxItemLen {
			return nil, domain.Validation("INVALID_ITEM", fmt.Sprintf("%s items must be valid text of at most %d characters", field, MaxItemLen)).WithField(field)
		}
		if !seen[it] {
			seen[it] = true
			out = append(out, it)
		}
	}
	return out, nil
}

func cssClass(s string) bool {
	for _, r := range s {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return s != ""
}

// langTag accepts the shape of a BCP 47 tag: alphanumeric subtags of 1-8
// characters separated by '-' or '_', the first alphabetic.
func langTag(s string) bool {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' })
	if len(parts) == 0 || strings.Count(s, "-")+strings.Count(s, "_") != len(parts)-1 {
		return false
	}
	for i, p := range parts {
		if len(p) > 8 {
			return false
		}
		for _, r := range p {
			alpha := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
			if !alpha && (i == 0 || !(r >= '0' && r <= '9')) {
				return false
			}
		}
	}
	return true
}
