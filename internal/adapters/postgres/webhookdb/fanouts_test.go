package webhookdb_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/webhookdb"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

func TestEnqueueRecordsTheFanoutSummaryAndWhyADeliveryWaits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	got := b.endpoint(t, `{"url":"https://a.example/h","event_types":["*"]}`)
	sick := b.endpoint(t, `{"url":"https://b.example/h","event_types":["*"]}`)
	left := b.endpoint(t, `{"url":"https://c.example/h","event_types":["code.*"]}`)
	reader := webhookdb.NewFanoutReader(b.pool)

	// Nothing delivered: the summary alone.
	ev := b.event(t, "owner.login")
	sum := delivery.Summary{EventID: ev}
	sum.Add(delivery.ReasonNotSubscribed, left.ID)
	res, err := b.store.Enqueue(ctx, nil, sum)
	require.NoError(t, err)
	require.Empty(t, res)
	s, eps, err := reader.EventSummary(ctx, b.owner, ev)
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{left.ID}, s.Reasons["not_subscribed"])
	require.Equal(t, "https://c.example/h", eps[left.ID].URL)
	require.Equal(t, "enabled", eps[left.ID].State)

	// Deliveries and the summary in one transaction; a cooled-down delivery
	// says why it waits, until when.
	ev = b.event(t, "code.issued")
	until := time.Now().Add(5 * time.Minute).UTC().Truncate(time.Second)
	sum = delivery.Summary{EventID: ev, Until: &until}
	sum.Add(delivery.ReasonCoolingDown, sick.ID)
	res, err = b.store.Enqueue(ctx, []delivery.Delivery{
		{EndpointID: got.ID, EventID: ev},
		{EndpointID: sick.ID, EventID: ev, ScheduledAt: until, Wait: delivery.ReasonCoolingDown},
	}, sum)
	require.NoError(t, err)
	require.Len(t, res, 2)
	var md map[string]struct {
		Reason string    `json:"reason"`
		Until  time.Time `json:"until"`
	}
	require.NoError(t, json.Unmarshal(b.job(t, res[1].JobID).Metadata, &md))
	require.Equal(t, "cooling_down", md[webhookdb.WaitMetadataKey].Reason)
	require.True(t, until.Equal(md[webhookdb.WaitMetadataKey].Until))
	s, _, err = reader.EventSummary(ctx, b.owner, ev)
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{sick.ID}, s.Reasons["cooling_down"])
	require.True(t, until.Equal(*s.Until))

	// Run again (River runs a job at least once): still one row.
	_, err = b.store.Enqueue(ctx, nil, sum)
	require.NoError(t, err)
	var rows int
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_fanouts WHERE event_id = $1`, ev).Scan(&rows))
	require.Equal(t, 1, rows)

	// Another owner's event, a missing one: not found. An event with no
	// summary: none.
	_, _, err = reader.EventSummary(ctx, b.newOwner(t), ev)
	require.ErrorIs(t, err, domain.ErrNotFound)
	_, _, err = reader.EventSummary(ctx, b.owner, uuid.New())
	require.ErrorIs(t, err, domain.ErrNotFound)
	s, _, err = reader.EventSummary(ctx, b.owner, b.event(t, "code.revoked"))
	require.NoError(t, err)
	require.Nil(t, s)

	// The summary goes with its event.
	_, err = b.pool.Exec(ctx, `DELETE FROM events WHERE id = $1`, ev)
	require.NoError(t, err)
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_fanouts WHERE event_id = $1`, ev).Scan(&rows))
	require.Zero(t, rows)
}
