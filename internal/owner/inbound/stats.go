package inbound

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain/window"
)

// StatsBucket is one bucket of the inbound charts: messages accepted into
// the inbox, requests refused at the gateway, messages that became dead
// letters.
type StatsBucket struct {
	At           time.Time `json:"at" doc:"the bucket's start"`
	Accepted     int       `json:"accepted"`
	Refused      int       `json:"refused"`
	DeadLettered int       `json:"dead_lettered"`
}

// DeadLetterCount is a source with dead letters waiting for a replay.
type DeadLetterCount struct {
	SourceID uuid.UUID `json:"source_id"`
	Name     string    `json:"name"`
	Waiting  int       `json:"waiting"`
}

// Stats are the inbound charts of a window (every bucket, oldest first,
// empty ones included) and the sources with dead letters waiting.
type Stats struct {
	Window      string            `json:"window"`
	Since       time.Time         `json:"since"`
	Until       time.Time         `json:"until"`
	StepSeconds int               `json:"step_seconds"`
	Buckets     []StatsBucket     `json:"buckets"`
	DeadLetters []DeadLetterCount `json:"dead_letters" doc:"sources with dead letters waiting, most first"`
}

// StatsReader reads the inbound charts; every read is the owner's only and
// bounded in time, but for the dead letters waiting, which are counted
// whatever their age.
type StatsReader interface {
	// Stats returns the buckets of step between since and until of the
	// owner's sources (one source's when sourceID is set); buckets without
	// traffic may be left out.
	Stats(ctx context.Context, ownerID uuid.UUID, sourceID *uuid.UUID, since, until time.Time, step time.Duration) ([]StatsBucket, error)
	// DeadLetters counts the dead letters of each of the owner's sources
	// (one source's when sourceID is set) that has any.
	DeadLetters(ctx context.Context, ownerID uuid.UUID, sourceID *uuid.UUID) ([]DeadLetterCount, error)
}

// StatsInput names a chart window.
type StatsInput struct {
	Window string `json:"window,omitempty" query:"window" doc:"hour, day (default) or week"`
}

// SourceStatsInput names a source and a chart window.
type SourceStatsInput struct {
	ID     uuid.UUID `json:"id" path:"id"`
	Window string    `json:"window,omitempty" query:"window" doc:"hour, day (default) or week"`
}

// Stats returns the owner's inbound charts over the window.
func (s *Service) Stats(ctx context.Context, ownerID uuid.UUID, in StatsInput) (Stats, error) {
	return s.stats(ctx, ownerID, nil, in.Window)
}

// SourceStats returns one of the owner's sources' charts; a source of
// another owner is not found.
func (s *Service) SourceStats(ctx context.Context, ownerID uuid.UUID, in SourceStatsInput) (Stats, error) {
	if _, err := window.Of(in.Window); err != nil {
		return Stats{}, err
	}
	if _, err := s.GetSource(ctx, ownerID, in.ID); err != nil {
		return Stats{}, err
	}
	return s.stats(ctx, ownerID, &in.ID, in.Window)
}

func (s *Service) stats(ctx context.Context, ownerID uuid.UUID, sourceID *uuid.UUID, name string) (Stats, error) {
	w, err := window.Of(name)
	if err != nil {
		return Stats{}, err
	}
	since, until := w.Span(s.d.Clock.Now())
	out := Stats{Window: w.Name, Since: since, Until: until, StepSeconds: int(w.Step.Seconds()), DeadLetters: []DeadLetterCount{}}
	var got []StatsBucket
	if s.d.Stats != nil {
		if got, err = s.d.Stats.Stats(ctx, ownerID, sourceID, since, until, w.Step); err != nil {
			return Stats{}, fmt.Errorf("read inbound stats: %w", err)
		}
		dead, err := s.d.Stats.DeadLetters(ctx, ownerID, sourceID)
		if err != nil {
			return Stats{}, fmt.Errorf("count dead letters: %w", err)
		}
		out.DeadLetters = append(out.DeadLetters, dead...)
	}
	out.Buckets = window.Fill(w, since, until, got, func(b StatsBucket) time.Time { return b.At },
		func(b *StatsBucket, at time.Time) { b.At = at })
	return out, nil
}
