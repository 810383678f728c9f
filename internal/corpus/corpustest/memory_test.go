package corpustest

import (
	"testing"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/corpus"
)

func TestMemoryPassesTheContract(t *testing.T) {
	t.Parallel()
	RunContract(t, func(t *testing.T) Harness {
		m := NewMemory()
		return Harness{UoW: m, NewOwner: func(*testing.T) uuid.UUID { return uuid.New() }, ChangeEvents: func(t *testing.T, ownerID uuid.UUID) []corpus.ChangeEvent {
			var out []corpus.ChangeEvent
			for _, e := range m.Events() {
				if e.OwnerID == ownerID {
					out = append(out, corpus.ChangeEvent(e))
				}
			}
			return out
		}}
	})
}
