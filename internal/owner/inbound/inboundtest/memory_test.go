package inboundtest_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/owner/inbound/inboundtest"
)

// TestMemoryPassesTheContract runs the inbound contract — the one the
// PostgreSQL adapter passes — on the in-memory fake.
func TestMemoryPassesTheContract(t *testing.T) {
	t.Parallel()
	inboundtest.RunContract(t, func(*testing.T) inboundtest.Harness {
		mem := inboundtest.NewMemory()
		inUse := map[uuid.UUID]bool{}
		mem.InUseFunc = func(id uuid.UUID) bool { return inUse[id] }
		mem.PendingFunc = mem.InUseFunc
		return inboundtest.Harness{
			UoW:      mem,
			Admit:    mem,
			Refusals: mem,
			Lookup:   mem,
			NewOwner: func(*testing.T) uuid.UUID { return uuid.New() },
			MaxAttemptsOf: func(_ *testing.T, id uuid.UUID) []int {
				var out []int
				for _, j := range mem.Jobs() {
					if j.MessageID == id {
						out = append(out, j.MaxAttempts)
					}
				}
				return out
			},
			UseSource: func(_ *testing.T, _, sourceID uuid.UUID) { inUse[sourceID] = true },
			EventsOf: func(_ *testing.T, owner uuid.UUID) []string {
				var out []string
				for _, e := range mem.Events() {
					if e.OwnerID == owner {
						out = append(out, e.Type)
					}
				}
				return out
			},
		}
	})
}
