package webhook_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/domaintest"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

func TestRecordHealthRecordsOneThinEventPerChange(t *testing.T) {
	t.Parallel()
	owner, ep := uuid.New(), uuid.New()
	since := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := since.Add(2 * time.Hour)
	cases := []struct {
		change webhook.HealthChange
		typ    string
		data   map[string]any
	}{
		{webhook.HealthChange{Kind: webhook.HealthFailing, FailingSince: since, At: since},
			domain.EventWebhookEndpointFailing, map[string]any{"endpoint_id": ep.String(), "failing_since": "2026-12-01T09:00:00Z"}},
		{webhook.HealthChange{Kind: webhook.HealthRecovered, At: at},
			domain.EventWebhookEndpointRecovered, map[string]any{"endpoint_id": ep.String(), "recovered_at": "2026-12-01T11:00:00Z"}},
		{webhook.HealthChange{Kind: webhook.HealthDisabled, FailingSince: since, At: at, Reason: "failed for 5 days"},
			domain.EventWebhookEndpointDisabled, map[string]any{"endpoint_id": ep.String(), "failing_since": "2026-12-01T09:00:00Z", "reason": "failed for 5 days"}},
	}
	for _, c := range cases {
		t.Run(string(c.change.Kind), func(t *testing.T) {
			t.Parallel()
			rec := domaintest.NewRecorder()
			c.change.EndpointID, c.change.OwnerID = ep, owner
			require.NoError(t, webhook.RecordHealth(context.Background(), rec, []webhook.HealthChange{c.change}))
			evs := rec.Events()
			require.Len(t, evs, 1)
			require.Equal(t, c.typ, evs[0].Type)
			require.Equal(t, owner, evs[0].OwnerID)
			require.Equal(t, webhook.HealthSubject(ep), evs[0].Subject)
			raw, err := json.Marshal(evs[0].Data)
			require.NoError(t, err)
			var got map[string]any
			require.NoError(t, json.Unmarshal(raw, &got))
			require.Equal(t, c.data, got)
		})
	}
}

func TestRecordHealthRefusesAnUnknownChange(t *testing.T) {
	t.Parallel()
	err := webhook.RecordHealth(context.Background(), domaintest.NewRecorder(), []webhook.HealthChange{{Kind: "exploded"}})
	require.ErrorContains(t, err, "unknown change")
}
