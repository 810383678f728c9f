-- 0275_corpus_notes_emit_quiet.sql: the note trigger writes its event
-- without a NOTIFY. PostgreSQL holds the notify queue's lock through a
-- notifying commit's WAL flush, so a NOTIFY per note write made every note
-- write commit alone; the writer now wakes the relay through the event
-- Recorder, at most once per events.NotifySpacing.

CREATE OR REPLACE FUNCTION corpus_notes_emit() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    n             corpus_notes;
    op            text;
    published     boolean;
    was_published boolean := false;
    path_changed  boolean := false;
BEGIN
    IF TG_OP = 'DELETE' THEN
        n := OLD;
        op := 'deleted';
        published := false;
        was_published := OLD.published;
    ELSIF TG_OP = 'INSERT' THEN
        n := NEW;
        op := 'created';
        published := NEW.published;
    ELSE
        n := NEW;
        op := 'updated';
        published := NEW.published;
        was_published := OLD.published;
        -- The path below the note changed: every descendant's URI did too.
        path_changed := OLD.parent_id IS DISTINCT FROM NEW.parent_id
            OR corpus_note_segment(OLD.id, OLD.slug, OLD.title) <> corpus_note_segment(NEW.id, NEW.slug, NEW.title);
    END IF;
    INSERT INTO events (owner_id, type, subject, data)
    VALUES (n.owner_id, 'corpus.note.changed',
            corpus_uri_of(n.genre, n.parent_id, n.id, n.slug, n.title),
            jsonb_build_object(
                'op', op,
                'note_id', n.id,
                'genre', n.genre,
                'parent_id', n.parent_id,
                'published', published,
                'was_published', was_published,
                'path_changed', path_changed));
    RETURN NULL;
END;
$$;
