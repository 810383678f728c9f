-- 0031_corpus_search.sql: the public full-text index. Public search reads
-- only this table: the published, non-raw slice that the corpus.index
-- subscriber maintains from corpus.note.changed events. Admin search reads
-- corpus_notes.search_tsv instead (drafts and raw included).

-- events: none (derived: the corpus.index subscriber's copy of the published slice; corpus_notes emits the changes it follows)
CREATE TABLE corpus_search_index (
    note_id    uuid        PRIMARY KEY REFERENCES corpus_notes (id) ON DELETE CASCADE,
    owner_id   uuid        NOT NULL,
    uri        text        NOT NULL CHECK (uri NOT LIKE 'raw://%'),
    genre      text        NOT NULL CHECK (genre <> 'raw'),
    title      text        NOT NULL,
    excerpt    text        NOT NULL,
    config     regconfig   NOT NULL,
    tsv        tsvector    NOT NULL,
    indexed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX corpus_search_index_owner_config_idx ON corpus_search_index (owner_id, config);
CREATE INDEX corpus_search_index_tsv_idx ON corpus_search_index USING gin (tsv);
