package webhook

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// The reasons a fan-out summary gives for an endpoint that got no delivery
// of an event now (the subscriber records them; see FanoutReasonText).
const (
	ReasonNotSubscribed = "not_subscribed"
	ReasonRaw           = "out_of_scope_raw"
	ReasonUnpublished   = "out_of_scope_unpublished"
	ReasonEmbedCode     = "out_of_scope_embed"
	ReasonOutOfScope    = "out_of_scope"
	ReasonDisabled      = "endpoint_disabled"
	ReasonCoolingDown   = "cooling_down"
	ReasonFilteredOut   = "filtered_out"
)

// FanoutReasonText says a reason in an owner's words.
func FanoutReasonText(reason string, until *time.Time) string {
	switch reason {
	case ReasonNotSubscribed:
		return "not subscribed to this event type"
	case ReasonRaw:
		return "out of scope: a raw note never leaves the instance"
	case ReasonUnpublished:
		return "out of scope: the note is not published"
	case ReasonEmbedCode:
		return "out of scope: the embed's access code does not admit this note"
	case ReasonOutOfScope:
		return "out of scope"
	case ReasonDisabled:
		return "endpoint disabled"
	case ReasonFilteredOut:
		return "filtered out: the endpoint's payload filter refused the event"
	case ReasonCoolingDown:
		if until != nil {
			return "endpoint failing: delivery waits out the cooldown until " + until.UTC().Format(time.RFC3339)
		}
		return "endpoint failing: delivery waits out the cooldown"
	}
	return reason
}

// Summary is an event's fan-out summary as stored: endpoint ids by reason,
// and the end of the cooldown.
type Summary struct {
	Reasons    map[string][]uuid.UUID `json:"reasons"`
	Until      *time.Time             `json:"until,omitempty"`
	RecordedAt time.Time              `json:"-"`
}

// FanoutEndpoint is an endpoint named by a fan-out summary, as it is now.
type FanoutEndpoint struct {
	ID    uuid.UUID
	URL   string
	State string
}

// FanoutReader reads fan-out summaries.
type FanoutReader interface {
	// EventSummary returns the fan-out summary of ownerID's event (nil when
	// none was recorded), with the endpoints it names that still exist,
	// deleted or not. domain.ErrNotFound when the event is not ownerID's or
	// was pruned.
	EventSummary(ctx context.Context, ownerID, eventID uuid.UUID) (*Summary, map[uuid.UUID]FanoutEndpoint, error)
}

// EventFanout is the fan-out of one event beyond its deliveries: the
// endpoints that got none, or got it late, and why.
type EventFanout struct {
	EventID uuid.UUID `json:"event_id"`
	// Recorded is false when the fan-out wrote no summary: it has not run
	// yet, or every endpoint that is not deleted got its delivery at once.
	Recorded   bool       `json:"recorded"`
	RecordedAt *time.Time `json:"recorded_at"`
	// Endpoints are the endpoints named, ordered by reason then URL.
	Endpoints []FanoutReason `json:"endpoints"`
}

// FanoutReason is one endpoint of a fan-out summary.
type FanoutReason struct {
	EndpointID    uuid.UUID `json:"endpoint_id"`
	EndpointURL   string    `json:"endpoint_url"`
	EndpointState string    `json:"endpoint_state"`
	// Reason is the code (not_subscribed, out_of_scope_raw,
	// out_of_scope_unpublished, out_of_scope_embed, out_of_scope,
	// endpoint_disabled, filtered_out, cooling_down), Text says it in
	// words.
	Reason string `json:"reason"`
	Text   string `json:"text"`
	// Delivered is true for cooling_down: a delivery was queued, to start
	// at Until.
	Delivered bool       `json:"delivered"`
	Until     *time.Time `json:"until"`
}

// EventFanout reads the fan-out summary of one of the owner's events.
func (s *Service) EventFanout(ctx context.Context, ownerID, eventID uuid.UUID) (EventFanout, error) {
	out := EventFanout{EventID: eventID, Endpoints: []FanoutReason{}}
	if s.fanouts == nil {
		return out, fmt.Errorf("fan-out of event %s: %w", eventID, domain.ErrNotFound)
	}
	sum, eps, err := s.fanouts.EventSummary(ctx, ownerID, eventID)
	if err != nil {
		return out, fmt.Errorf("fan-out of event %s: %w", eventID, err)
	}
	if sum == nil {
		return out, nil
	}
	out.Recorded, out.RecordedAt = true, &sum.RecordedAt
	for reason, ids := range sum.Reasons {
		for _, id := range ids {
			ep, ok := eps[id]
			if !ok {
				// Purged since.
				continue
			}
			r := FanoutReason{EndpointID: id, EndpointURL: ep.URL, EndpointState: ep.State, Reason: reason}
			if reason == ReasonCoolingDown {
				r.Delivered, r.Until = true, sum.Until
			}
			r.Text = FanoutReasonText(reason, r.Until)
			out.Endpoints = append(out.Endpoints, r)
		}
	}
	sort.Slice(out.Endpoints, func(i, j int) bool {
		a, b := out.Endpoints[i], out.Endpoints[j]
		if a.Reason != b.Reason {
			return a.Reason < b.Reason
		}
		return a.EndpointURL < b.EndpointURL
	})
	return out, nil
}

func (s *Service) eventFanoutOp() op.Descriptor {
	return op.New(op.Meta{
		Name: "webhooks.event_fanout", Scopes: op.ReadsIn(op.ScopeWebhooks), Summary: "Which endpoints got no delivery of one event, or got it late, and why",
		Description: "Reasons: not_subscribed, out_of_scope_raw, out_of_scope_unpublished, out_of_scope_embed, out_of_scope, " +
			"endpoint_disabled, filtered_out (the endpoint's payload filter refused the event), cooling_down (delivered, starting at until). Deleted endpoints are not listed. " +
			"recorded is false when every endpoint got its delivery at once, or the fan-out has not run yet. " +
			"NOT_FOUND when the event is not yours or was pruned by the retention.",
	}, func(ctx context.Context, c op.Caller, in EventIDInput) (EventFanout, error) {
		return s.EventFanout(ctx, c.OwnerID, in.ID)
	})
}
