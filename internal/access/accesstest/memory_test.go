package accesstest

import (
	"testing"

	"github.com/google/uuid"
)

func TestMemoryPassesTheContract(t *testing.T) {
	t.Parallel()
	RunContract(t, func(t *testing.T) Harness {
		m := NewMemory()
		return Harness{UoW: m, NewOwner: func(*testing.T) uuid.UUID { return uuid.New() },
			EventTypes: func(_ *testing.T, ownerID uuid.UUID) []string {
				var out []string
				for _, e := range m.Events() {
					if e.OwnerID == ownerID {
						out = append(out, e.Type)
					}
				}
				return out
			}}
	})
}
