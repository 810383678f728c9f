package corpusdb

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/standmeet/standmeet/internal/corpus"
)

// indexStore is corpus.IndexStore over one transaction: the
// corpus_search_index table, whose CHECKs refuse raw rows outright.
type indexStore struct {
	tx pgx.Tx
}

var _ corpus.IndexStore = (*indexStore)(nil)

// Lock implements corpus.IndexStore.
func (s *indexStore) Lock(ctx context.Context, ownerID uuid.UUID) error {
	return advisoryLock(ctx, s.tx, "corpus.index:"+ownerID.String())
}

// Upsert implements corpus.IndexStore.
func (s *indexStore) Upsert(ctx context.Context, e corpus.IndexEntry) error {
	_, err := s.tx.Exec(ctx, `INSERT INTO corpus_search_index AS i (note_id, owner_id, uri, genre, title, excerpt, config, tsv, indexed_at)
VALUES ($1, $2, $3, $4, $5, $6, corpus_ts_config($7), corpus_note_tsv($7, $5, $8, $9), now())
ON CONFLICT (note_id) DO UPDATE SET owner_id = EXCLUDED.owner_id, uri = EXCLUDED.uri, genre = EXCLUDED.genre,
    title = EXCLUDED.title, excerpt = EXCLUDED.excerpt, config = EXCLUDED.config, tsv = EXCLUDED.tsv,
    indexed_at = EXCLUDED.indexed_at`,
		e.NoteID, e.OwnerID, e.URI, string(e.Genre), e.Title, e.Excerpt, e.Lang, e.Body, nonNil(e.Tags))
	if err != nil {
		return fmt.Errorf("upsert index entry %s: %w", e.NoteID, translate(err))
	}
	return nil
}

// Remove implements corpus.IndexStore.
func (s *indexStore) Remove(ctx context.Context, ownerID uuid.UUID, ids []uuid.UUID) error {
	if _, err := s.tx.Exec(ctx, `DELETE FROM corpus_search_index WHERE owner_id = $1 AND note_id = ANY($2)`, ownerID, ids); err != nil {
		return fmt.Errorf("remove index entries: %w", translate(err))
	}
	return nil
}

// Search implements corpus.IndexStore, per configuration like the note
// store's admin search.
func (s *indexStore) Search(ctx context.Context, ownerID uuid.UUID, query string, limit int) ([]corpus.SearchHit, error) {
	rows, err := s.tx.Query(ctx, `SELECT i.note_id, i.uri, i.genre, i.title, i.excerpt, true, ts_rank_cd(i.tsv, q.query)::float8 AS rank
FROM (SELECT DISTINCT config FROM corpus_search_index WHERE owner_id = $1) c
CROSS JOIN LATERAL (SELECT websearch_to_tsquery(c.config, $2) AS query) q
JOIN corpus_search_index i ON i.owner_id = $1 AND i.config = c.config AND i.tsv @@ q.query
WHERE i.genre <> 'raw'
ORDER BY rank DESC, i.note_id
LIMIT $3`, ownerID, query, limit)
	out, err := collectHits(rows, err)
	if err != nil {
		return nil, fmt.Errorf("search index: %w", translate(err))
	}
	return out, nil
}

// eventReader is corpus.EventReader over one transaction.
type eventReader struct {
	tx pgx.Tx
}

var _ corpus.EventReader = (*eventReader)(nil)

// Event implements corpus.EventReader.
func (r *eventReader) Event(ctx context.Context, id uuid.UUID) (corpus.ChangeEvent, error) {
	var ev corpus.ChangeEvent
	err := r.tx.QueryRow(ctx, `SELECT id, owner_id, type, subject, data FROM events WHERE id = $1`, id).
		Scan(&ev.ID, &ev.OwnerID, &ev.Type, &ev.Subject, &ev.Data)
	if err != nil {
		return corpus.ChangeEvent{}, fmt.Errorf("read event %s: %w", id, translate(err))
	}
	return ev, nil
}
