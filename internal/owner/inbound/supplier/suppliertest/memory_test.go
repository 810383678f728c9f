package suppliertest_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/owner/inbound/supplier/suppliertest"
)

func TestMemoryPassesTheContract(t *testing.T) {
	t.Parallel()
	suppliertest.RunContract(t, func(*testing.T) suppliertest.Harness {
		m := suppliertest.NewMemory()
		return suppliertest.Harness{
			UoW:      m,
			NewOwner: func(*testing.T) uuid.UUID { return uuid.New() },
			NewSource: func(_ *testing.T, owner uuid.UUID) uuid.UUID {
				id := uuid.New()
				m.AddSource(owner, id)
				return id
			},
		}
	})
}
