package publishtest_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/owner/publish/publishtest"
)

func TestMemoryPassesTheContract(t *testing.T) {
	t.Parallel()
	publishtest.RunContract(t, func(t *testing.T) publishtest.Harness {
		m := publishtest.NewMemory()
		return publishtest.Harness{
			UoW: m,
			EventIDs: func(t *testing.T, ownerID uuid.UUID) []uuid.UUID {
				var out []uuid.UUID
				for _, e := range m.Events() {
					if e.OwnerID == ownerID {
						out = append(out, e.ID)
					}
				}
				return out
			},
			Prune: func(t *testing.T, id uuid.UUID) { m.Prune(id) },
		}
	})
}
