package delivery_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery/deliverytest"
)

func TestFanoutAppliesEachEndpointsFilter(t *testing.T) {
	t.Parallel()
	none := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"*"}, Enabled: true}
	deletes := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"*"}, Enabled: true,
		Filter: json.RawMessage(`{"data.op":{"$eq":"deleted"}}`)}
	wiki := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"*"}, Enabled: true,
		Filter: json.RawMessage(`{"subject":{"$glob":"wiki://*"},"data.published":true}`)}
	broken := delivery.Endpoint{ID: uuid.New(), EventTypes: []string{"*"}, Enabled: true, Filter: json.RawMessage(`{"data.op":{"$regex":"x"}}`)}
	eps := []delivery.Endpoint{none, deletes, wiki, broken}
	note := func(op, subject string) delivery.Event {
		data, err := json.Marshal(map[string]any{"op": op, "published": true, "was_published": true})
		require.NoError(t, err)
		return delivery.Event{ID: uuid.New(), Type: domain.EventCorpusNoteChanged, Subject: subject, Data: data}
	}
	test := delivery.Event{ID: uuid.New(), Type: domain.EventWebhookTest,
		Data: json.RawMessage(`{"endpoint_id":"` + deletes.ID.String() + `","test":true}`)}
	cases := []struct {
		name      string
		ev        delivery.Event
		delivered []uuid.UUID
		filtered  []uuid.UUID
	}{
		{"create of a wiki note", note("created", "wiki://a"), []uuid.UUID{none.ID, wiki.ID}, []uuid.UUID{deletes.ID, broken.ID}},
		{"delete of a writing", note("deleted", "writing://a"), []uuid.UUID{none.ID, deletes.ID}, []uuid.UUID{wiki.ID, broken.ID}},
		{"a test event skips the filter", test, []uuid.UUID{deletes.ID}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var (
				mu  sync.Mutex
				got []uuid.UUID
			)
			store := &deliverytest.Stub{
				EventFunc:     func(context.Context, uuid.UUID) (delivery.Event, error) { return c.ev, nil },
				EndpointsFunc: func(context.Context, uuid.UUID) ([]delivery.Endpoint, error) { return eps, nil },
				EnqueueFunc: func(_ context.Context, ds []delivery.Delivery) ([]delivery.Enqueued, error) {
					mu.Lock()
					defer mu.Unlock()
					for _, d := range ds {
						got = append(got, d.EndpointID)
					}
					return make([]delivery.Enqueued, len(ds)), nil
				},
			}
			f := delivery.NewFanouter(delivery.FanoutDeps{Store: store})
			for range 2 {
				// Twice: the second run reads the filters parsed by the first.
				got = nil
				_, err := f.Fanout(context.Background(), c.ev.ID)
				require.NoError(t, err)
				require.ElementsMatch(t, c.delivered, got)
			}
			if c.filtered == nil {
				for _, s := range store.Summaries() {
					require.Empty(t, s.Reasons[delivery.ReasonFilteredOut])
				}
				return
			}
			sums := store.Summaries()
			require.NotEmpty(t, sums)
			require.ElementsMatch(t, c.filtered, sums[len(sums)-1].Reasons[delivery.ReasonFilteredOut])
		})
	}
}
