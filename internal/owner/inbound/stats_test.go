package inbound_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/window"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

type statsFake struct {
	source *uuid.UUID
	asked  bool
}

func (f *statsFake) Stats(_ context.Context, _ uuid.UUID, sourceID *uuid.UUID, since, _ time.Time, step time.Duration) ([]inbound.StatsBucket, error) {
	f.source, f.asked = sourceID, true
	return []inbound.StatsBucket{{At: since.Add(step), Accepted: 4, Refused: 2, DeadLettered: 1}}, nil
}

func (f *statsFake) DeadLetters(context.Context, uuid.UUID, *uuid.UUID) ([]inbound.DeadLetterCount, error) {
	return []inbound.DeadLetterCount{{SourceID: uuid.New(), Name: "s", Waiting: 3}}, nil
}

func TestInboundStatsFillTheWindowAndStayTheOwners(t *testing.T) {
	t.Parallel()
	b := setup(t)
	src, _ := b.swSource(t)
	f := &statsFake{}
	svc := inbound.NewService(inbound.ServiceDeps{UoW: b.mem, Clock: b.clock, Stats: f})

	st, err := svc.Stats(context.Background(), b.owner, inbound.StatsInput{Window: "week"})
	require.NoError(t, err)
	require.Len(t, st.Buckets, 28)
	require.Equal(t, 4, st.Buckets[1].Accepted)
	require.Equal(t, 1, st.Buckets[1].DeadLettered)
	require.Len(t, st.DeadLetters, 1)
	require.Nil(t, f.source)

	f.asked = false
	_, err = svc.SourceStats(context.Background(), uuid.New(), inbound.SourceStatsInput{ID: src.ID})
	require.Equal(t, domain.KindNotFound, domain.AsError(err).Kind)
	require.False(t, f.asked, "nothing read for another owner")
	_, err = svc.SourceStats(context.Background(), b.owner, inbound.SourceStatsInput{ID: src.ID, Window: "1d"})
	require.Equal(t, window.CodeInvalidWindow, domain.AsError(err).Code)
	st, err = svc.SourceStats(context.Background(), b.owner, inbound.SourceStatsInput{ID: src.ID})
	require.NoError(t, err)
	require.Len(t, st.Buckets, 24)
	require.Equal(t, src.ID, *f.source)
}
