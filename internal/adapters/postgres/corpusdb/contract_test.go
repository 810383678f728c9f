package corpusdb_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/corpus/corpustest"
)

// TestPostgresPassesTheContract runs the corpus contract — the same one the
// in-memory fake passes — on PostgreSQL, the real trigger included.
func TestPostgresPassesTheContract(t *testing.T) {
	t.Parallel()
	corpustest.RunContract(t, func(t *testing.T) corpustest.Harness {
		uow, pool := newUoW(t)
		return corpustest.Harness{UoW: uow, NewOwner: func(t *testing.T) uuid.UUID { return newOwner(t, pool) }, ChangeEvents: func(t *testing.T, ownerID uuid.UUID) []corpus.ChangeEvent {
			return ownerEvents(t, pool, ownerID)
		}}
	})
}
