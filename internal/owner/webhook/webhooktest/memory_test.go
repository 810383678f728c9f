package webhooktest_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/owner/webhook/webhooktest"
)

func TestMemoryPassesTheEndpointContract(t *testing.T) {
	t.Parallel()
	webhooktest.RunEndpointContract(t, func(*testing.T) webhooktest.Harness {
		return webhooktest.Harness{UoW: webhooktest.NewMemory(), NewOwner: func(*testing.T) uuid.UUID { return uuid.New() }}
	})
}
