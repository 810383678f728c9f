package deliverytest_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery/deliverytest"
)

func TestMemoryPassesTheContract(t *testing.T) {
	t.Parallel()
	deliverytest.RunContract(t, func(*testing.T) deliverytest.Harness {
		m := deliverytest.NewMemory()
		return deliverytest.Harness{
			Store:    m,
			Fanout:   m,
			NewOwner: func(*testing.T) uuid.UUID { return uuid.New() },
			NewEndpoint: func(_ *testing.T, owner uuid.UUID, mif int) uuid.UUID {
				ep := delivery.Endpoint{ID: uuid.New(), OwnerID: owner, URL: "https://a.example/h", EventTypes: []string{"*"},
					MaxInFlight: mif, Enabled: true}
				m.PutEndpoint(ep)
				return ep.ID
			},
			NewEvent: func(_ *testing.T, ep uuid.UUID) uuid.UUID {
				e, _ := m.Endpoint(ep)
				ev := delivery.Event{ID: uuid.New(), OwnerID: e.OwnerID, Type: "code.issued", Subject: "s"}
				m.PutEvent(ev)
				return ev.ID
			},
			DeleteEndpoint: func(_ *testing.T, id uuid.UUID) { m.DeleteEndpoint(id) },
			Attempts:       func(_ *testing.T, ep uuid.UUID) []delivery.Attempt { return m.Attempts(ep) },
		}
	})
}
