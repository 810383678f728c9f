package webhook_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/window"
	"github.com/standmeet/standmeet/internal/owner/webhook"
	"github.com/standmeet/standmeet/internal/owner/webhook/webhooktest"
)

// statsFake answers StatsReader with fixed rows and records what it was
// asked.
type statsFake struct {
	buckets      []webhook.StatsBucket
	troubled     []webhook.Endpoint
	since, until time.Time
	step         time.Duration
	endpoint     *uuid.UUID
}

func (f *statsFake) Stats(_ context.Context, _ uuid.UUID, endpointID *uuid.UUID, since, until time.Time, step time.Duration) ([]webhook.StatsBucket, error) {
	f.since, f.until, f.step, f.endpoint = since, until, step, endpointID
	return f.buckets, nil
}

func (f *statsFake) Troubled(context.Context, uuid.UUID) ([]webhook.Endpoint, error) {
	return f.troubled, nil
}

func statsService(f *statsFake, now time.Time) *webhook.Service {
	return webhook.NewService(webhook.Deps{UnitOfWork: webhooktest.NewMemory(), Seal: seal, Stats: f,
		Clock: domain.ClockFunc(func() time.Time { return now })})
}

func TestStatsListEveryBucketOfTheWindowOldestFirst(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 5, 14, 37, 0, 0, time.UTC)
	p50 := 40
	f := &statsFake{buckets: []webhook.StatsBucket{{At: time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC), Succeeded: 3, Retrying: 1, P50MS: &p50}}}
	st, err := statsService(f, now).Stats(context.Background(), uuid.New(), webhook.WindowInput{})
	require.NoError(t, err)
	require.Equal(t, "day", st.Window)
	require.Equal(t, 3600, st.StepSeconds)
	require.Len(t, st.Buckets, 24)
	require.Equal(t, time.Date(2026, 12, 4, 15, 0, 0, 0, time.UTC), st.Buckets[0].At)
	last := st.Buckets[23]
	require.Equal(t, 3, last.Succeeded)
	require.Equal(t, &p50, last.P50MS)
	require.Zero(t, st.Buckets[0].Succeeded)
	require.Nil(t, st.Buckets[0].P50MS)
	require.Equal(t, time.Hour, f.step)
	require.Equal(t, st.Since, f.since)
	require.Equal(t, st.Until, f.until)
	require.Nil(t, f.endpoint)

	_, err = statsService(f, now).Stats(context.Background(), uuid.New(), webhook.WindowInput{Window: "month"})
	require.Equal(t, window.CodeInvalidWindow, domain.AsError(err).Code)
}

func TestEndpointStatsAreTheOwnersEndpointsOnly(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	f := &statsFake{}
	svc := webhook.NewService(webhook.Deps{UnitOfWork: b.store, Seal: seal, Stats: f, Clock: domain.ClockFunc(func() time.Time { return b.now })})
	created, err := svc.Create(context.Background(), b.owner, webhook.CreateInput{URL: "https://r.example/h", EventTypes: []string{"code.*"}})
	require.NoError(t, err)
	_, err = svc.EndpointStats(context.Background(), uuid.New(), webhook.EndpointWindowInput{ID: created.ID})
	require.ErrorIs(t, err, domain.ErrNotFound)
	require.Nil(t, f.endpoint, "nothing read for another owner")
	st, err := svc.EndpointStats(context.Background(), b.owner, webhook.EndpointWindowInput{ID: created.ID, Window: "hour"})
	require.NoError(t, err)
	require.Len(t, st.Buckets, 12)
	require.Equal(t, created.ID, *f.endpoint)
}

func TestAttentionSkipsWhatTheOwnerDisabledAndAlarmsAfterAnHour(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 5, 14, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	byOwner, byServer := webhook.ReasonDisabledByOwner, "deliveries failed continuously for 5 days"
	f := &statsFake{troubled: []webhook.Endpoint{
		{ID: uuid.New(), URL: "https://a/new", Enabled: true, FailingSince: ago(10 * time.Minute)},
		{ID: uuid.New(), URL: "https://a/old", Enabled: true, FailingSince: ago(2 * time.Hour)},
		{ID: uuid.New(), URL: "https://a/off", Enabled: false, DisabledReason: &byServer, FailingSince: ago(121 * time.Hour)},
		{ID: uuid.New(), URL: "https://a/mine", Enabled: false, DisabledReason: &byOwner},
	}}
	got, err := statsService(f, now).Attention(context.Background(), uuid.New())
	require.NoError(t, err)
	var urls []string
	var alarms []bool
	for _, a := range got.Data {
		urls, alarms = append(urls, a.URL), append(alarms, a.Alarm)
	}
	require.Equal(t, []string{"https://a/old", "https://a/off", "https://a/new"}, urls, "alarming first; the owner's own disable is no news")
	require.Equal(t, []bool{true, true, false}, alarms)
}
