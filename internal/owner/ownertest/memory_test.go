package ownertest_test

import (
	"testing"

	"github.com/standmeet/standmeet/internal/owner/ownertest"
)

func TestMemoryPassesTheContract(t *testing.T) {
	t.Parallel()
	ownertest.RunContract(t, func(*testing.T) ownertest.Harness {
		mem := ownertest.NewMemory()
		return ownertest.Harness{
			UoW: mem,
			Events: func(*testing.T) []ownertest.Recorded {
				var out []ownertest.Recorded
				for _, e := range mem.Events() {
					out = append(out, ownertest.Recorded{OwnerID: e.OwnerID, Type: e.Type, Subject: e.Subject})
				}
				return out
			},
			Delivered: mem.Delivered,
		}
	})
}
