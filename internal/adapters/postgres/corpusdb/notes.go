package corpusdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/standmeet/standmeet/internal/corpus"
)

// noteStore is corpus.NoteStore over one transaction.
type noteStore struct {
	tx pgx.Tx
	// waker wakes the relay for the events corpus_notes_emit writes; nil
	// leaves them to the relay's poll.
	waker relayWaker
}

// relayWaker queues a relay wake-up in the transaction, at most one per
// events.NotifySpacing (events.TxRecorder does). The row trigger writes the
// note's event but does not notify: a NOTIFY per note write would make the
// writes' commits wait for each other, as PostgreSQL holds the notify
// queue's lock through a notifying commit's WAL flush.
type relayWaker interface {
	Wake(ctx context.Context) error
}

// wrote wakes the relay after a write that fired corpus_notes_emit.
func (s *noteStore) wrote(ctx context.Context) error {
	if s.waker == nil {
		return nil
	}
	return s.waker.Wake(ctx)
}

var _ corpus.NoteStore = (*noteStore)(nil)

// noteColumns are read into a note by scanNote. The URI comes from
// corpus_uri_of over the row's own values, which also works in RETURNING,
// where a query (corpus_note_uri) cannot see the row being written yet.
const noteColumns = `n.id, n.owner_id, n.genre, n.title, n.body, n.tags, n.parent_id, n.published, n.show_as_source,
n.aliases, n.excerpt, n.slug, n.archived, n.css_classes, n.lang, n.created_at, n.updated_at,
corpus_uri_of(n.genre, n.parent_id, n.id, n.slug, n.title)`

func scanNote(row pgx.Row, extra ...any) (corpus.Note, error) {
	var n corpus.Note
	var genre string
	dest := []any{&n.ID, &n.OwnerID, &genre, &n.Title, &n.Body, &n.Tags, &n.ParentID, &n.Published, &n.ShowAsSource,
		&n.Aliases, &n.Excerpt, &n.Slug, &n.Archived, &n.CSSClasses, &n.Lang, &n.CreatedAt, &n.UpdatedAt, &n.URI}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		return corpus.Note{}, err
	}
	n.Genre = corpus.Genre(genre)
	n.CreatedAt, n.UpdatedAt = n.CreatedAt.UTC(), n.UpdatedAt.UTC()
	return n, nil
}

func collectNotes(rows pgx.Rows, err error) ([]corpus.Note, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []corpus.Note
	for rows.Next() {
		n, err := scanNote(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// nonNil keeps text[] columns NOT NULL: pgx encodes a nil slice as NULL.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// LockTree implements corpus.NoteStore.
func (s *noteStore) LockTree(ctx context.Context, ownerID uuid.UUID) error {
	return advisoryLock(ctx, s.tx, "corpus.tree:"+ownerID.String())
}

// Insert implements corpus.NoteStore.
func (s *noteStore) Insert(ctx context.Context, n corpus.Note) (corpus.Note, error) {
	row := s.tx.QueryRow(ctx, `INSERT INTO corpus_notes AS n (id, owner_id, genre, title, body, tags, parent_id, published,
    show_as_source, aliases, excerpt, slug, archived, css_classes, lang)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
RETURNING `+noteColumns,
		n.ID, n.OwnerID, string(n.Genre), n.Title, n.Body, nonNil(n.Tags), n.ParentID, n.Published,
		n.ShowAsSource, nonNil(n.Aliases), n.Excerpt, n.Slug, n.Archived, nonNil(n.CSSClasses), n.Lang)
	out, err := scanNote(row)
	if err != nil {
		return corpus.Note{}, fmt.Errorf("insert note: %w", translate(err))
	}
	return out, s.wrote(ctx)
}

// Get implements corpus.NoteStore.
func (s *noteStore) Get(ctx context.Context, ownerID, id uuid.UUID) (corpus.Note, error) {
	return s.get(ctx, ownerID, id, "")
}

// GetForUpdate implements corpus.NoteStore.
func (s *noteStore) GetForUpdate(ctx context.Context, ownerID, id uuid.UUID) (corpus.Note, error) {
	return s.get(ctx, ownerID, id, " FOR UPDATE")
}

func (s *noteStore) get(ctx context.Context, ownerID, id uuid.UUID, lock string) (corpus.Note, error) {
	n, err := scanNote(s.tx.QueryRow(ctx, `SELECT `+noteColumns+` FROM corpus_notes n WHERE n.owner_id = $1 AND n.id = $2`+lock, ownerID, id))
	if err != nil {
		return corpus.Note{}, fmt.Errorf("get note %s: %w", id, translate(err))
	}
	return n, nil
}

// GetMany implements corpus.NoteStore.
func (s *noteStore) GetMany(ctx context.Context, ownerID uuid.UUID, ids []uuid.UUID) ([]corpus.Note, error) {
	rows, err := s.tx.Query(ctx, `SELECT `+noteColumns+` FROM corpus_notes n WHERE n.owner_id = $1 AND n.id = ANY($2)`, ownerID, ids)
	out, err := collectNotes(rows, err)
	if err != nil {
		return nil, fmt.Errorf("get notes: %w", translate(err))
	}
	return out, nil
}

// Update implements corpus.NoteStore.
func (s *noteStore) Update(ctx context.Context, n corpus.Note) (corpus.Note, error) {
	row := s.tx.QueryRow(ctx, `UPDATE corpus_notes AS n SET genre = $3, title = $4, body = $5, tags = $6, parent_id = $7,
    published = $8, show_as_source = $9, aliases = $10, excerpt = $11, slug = $12, archived = $13,
    css_classes = $14, lang = $15, updated_at = now()
WHERE n.owner_id = $1 AND n.id = $2
RETURNING `+noteColumns,
		n.OwnerID, n.ID, string(n.Genre), n.Title, n.Body, nonNil(n.Tags), n.ParentID, n.Published,
		n.ShowAsSource, nonNil(n.Aliases), n.Excerpt, n.Slug, n.Archived, nonNil(n.CSSClasses), n.Lang)
	out, err := scanNote(row)
	if err != nil {
		return corpus.Note{}, fmt.Errorf("update note %s: %w", n.ID, translate(err))
	}
	return out, s.wrote(ctx)
}

// Delete implements corpus.NoteStore.
func (s *noteStore) Delete(ctx context.Context, ownerID, id uuid.UUID) error {
	tag, err := s.tx.Exec(ctx, `DELETE FROM corpus_notes WHERE owner_id = $1 AND id = $2`, ownerID, id)
	if err != nil {
		return fmt.Errorf("delete note %s: %w", id, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete note %s: %w", id, translate(pgx.ErrNoRows))
	}
	return s.wrote(ctx)
}

// maxWalk bounds tree walks like corpus_note_path does, so a corrupt cycle
// cannot loop.
const maxWalk = 64

// Ancestors implements corpus.NoteStore.
func (s *noteStore) Ancestors(ctx context.Context, ownerID, id uuid.UUID) ([]corpus.Note, error) {
	rows, err := s.tx.Query(ctx, `WITH RECURSIVE up (id, parent_id, depth) AS (
    SELECT id, parent_id, 0 FROM corpus_notes WHERE owner_id = $1 AND id = $2
    UNION ALL
    SELECT p.id, p.parent_id, u.depth + 1 FROM up u JOIN corpus_notes p ON p.id = u.parent_id
    WHERE u.depth < $3
)
SELECT `+noteColumns+` FROM up JOIN corpus_notes n ON n.id = up.id WHERE up.depth > 0 ORDER BY up.depth`,
		ownerID, id, maxWalk)
	out, err := collectNotes(rows, err)
	if err != nil {
		return nil, fmt.Errorf("ancestors of %s: %w", id, translate(err))
	}
	return out, nil
}

// Descendants implements corpus.NoteStore.
func (s *noteStore) Descendants(ctx context.Context, ownerID, id uuid.UUID) ([]corpus.Descendant, error) {
	rows, err := s.tx.Query(ctx, `WITH RECURSIVE down (id, depth) AS (
    SELECT id, 1 FROM corpus_notes WHERE owner_id = $1 AND parent_id = $2
    UNION ALL
    SELECT c.id, d.depth + 1 FROM down d JOIN corpus_notes c ON c.parent_id = d.id
    WHERE d.depth < $3
)
SELECT `+noteColumns+`, down.depth FROM down JOIN corpus_notes n ON n.id = down.id
ORDER BY down.depth DESC, n.id`, ownerID, id, maxWalk)
	if err != nil {
		return nil, fmt.Errorf("descendants of %s: %w", id, translate(err))
	}
	defer rows.Close()
	var out []corpus.Descendant
	for rows.Next() {
		var d corpus.Descendant
		n, err := scanNote(rows, &d.Depth)
		if err != nil {
			return nil, fmt.Errorf("descendants of %s: %w", id, err)
		}
		d.Note = n
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("descendants of %s: %w", id, translate(err))
	}
	return out, nil
}

// List implements corpus.NoteStore.
func (s *noteStore) List(ctx context.Context, ownerID uuid.UUID, q corpus.ListQuery) ([]corpus.Note, error) {
	args := []any{ownerID, q.Limit + 1}
	where := []string{"n.owner_id = $1"}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if q.Genre != "" {
		add("n.genre = $%d", string(q.Genre))
	}
	if q.ParentID != nil {
		add("n.parent_id = $%d", *q.ParentID)
	}
	if q.Root {
		where = append(where, "n.parent_id IS NULL")
	}
	if q.Published != nil {
		add("n.published = $%d", *q.Published)
	}
	if q.After != nil {
		args = append(args, q.After.CreatedAt, q.After.ID)
		where = append(where, fmt.Sprintf("(n.created_at, n.id) < ($%d, $%d)", len(args)-1, len(args)))
	}
	rows, err := s.tx.Query(ctx, `SELECT `+noteColumns+` FROM corpus_notes n WHERE `+strings.Join(where, " AND ")+`
ORDER BY n.created_at DESC, n.id DESC LIMIT $2`, args...)
	out, err := collectNotes(rows, err)
	if err != nil {
		return nil, fmt.Errorf("list notes: %w", translate(err))
	}
	return out, nil
}

// excerptSQL is the excerpt of a search hit: the note's own, else the
// start of its body with whitespace folded.
const excerptSQL = `CASE WHEN btrim(n.excerpt) <> '' THEN n.excerpt
    ELSE left(btrim(regexp_replace(n.body, '\s+', ' ', 'g')), 240) END`

// Search implements corpus.NoteStore. The query is parsed once per
// text-search configuration in use and matched against the notes of that
// configuration, so a note is searched in its own language.
func (s *noteStore) Search(ctx context.Context, ownerID uuid.UUID, query string, limit int) ([]corpus.SearchHit, error) {
	rows, err := s.tx.Query(ctx, `SELECT n.id, corpus_uri_of(n.genre, n.parent_id, n.id, n.slug, n.title), n.genre, n.title,
    `+excerptSQL+`, n.published, ts_rank_cd(n.search_tsv, q.query)::float8 AS rank
FROM (SELECT DISTINCT search_config FROM corpus_notes WHERE owner_id = $1) c
CROSS JOIN LATERAL (SELECT websearch_to_tsquery(c.search_config, $2) AS query) q
JOIN corpus_notes n ON n.owner_id = $1 AND n.search_config = c.search_config AND n.search_tsv @@ q.query
ORDER BY rank DESC, n.id
LIMIT $3`, ownerID, query, limit)
	out, err := collectHits(rows, err)
	if err != nil {
		return nil, fmt.Errorf("search notes: %w", translate(err))
	}
	return out, nil
}

func collectHits(rows pgx.Rows, err error) ([]corpus.SearchHit, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []corpus.SearchHit
	for rows.Next() {
		var h corpus.SearchHit
		var genre string
		if err := rows.Scan(&h.NoteID, &h.URI, &genre, &h.Title, &h.Excerpt, &h.Published, &h.Rank); err != nil {
			return nil, err
		}
		h.Genre = corpus.Genre(genre)
		out = append(out, h)
	}
	return out, rows.Err()
}
