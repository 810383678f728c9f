// Package corpus is the notes domain of the StandMeet server: notes and their
// URIs, publishing, moving within the note tree, writing's publish events, the
// vault import, admin search, and the corpus.index subscriber that keeps the
// full-text index of the published slice.
//
// Every change to a note reaches subscribers through the corpus_notes row
// trigger (corpus.note.changed), never through a call from a write path, so no
// write path can forget one. Use cases record only the facts no single row
// expresses: writing.published, writing.unpublished and vault.imported.
//
// The package depends only on ports (UnitOfWork and the stores its Tx hands
// out); the postgres adapter implements them over one pgx transaction, and
// corpustest provides an in-memory implementation that the same contract
// tests run against.
package corpus
