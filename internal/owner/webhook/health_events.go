package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// HealthChangeKind is how a finished delivery changed its endpoint's health.
type HealthChangeKind string

// The health changes a finished delivery can make.
const (
	// HealthFailing: the first failure since the endpoint last succeeded
	// (or since it was enabled).
	HealthFailing HealthChangeKind = "failing"
	// HealthRecovered: a success that ended a failing streak.
	HealthRecovered HealthChangeKind = "recovered"
	// HealthDisabled: a failure that found the endpoint failing for the
	// disable bound, and disabled it.
	HealthDisabled HealthChangeKind = "disabled"
)

// HealthChange is one change of an endpoint's health, as the statement that
// made it reports it.
type HealthChange struct {
	Kind       HealthChangeKind
	EndpointID uuid.UUID
	OwnerID    uuid.UUID
	// FailingSince is the start of the streak (failing, disabled); zero
	// for a recovery.
	FailingSince time.Time
	// At is the time of the delivery's outcome that made the change.
	At time.Time
	// Reason is why the endpoint was disabled (disabled only).
	Reason string
}

// healthEvents maps each kind to its operational event type.
var healthEvents = map[HealthChangeKind]string{
	HealthFailing:   domain.EventWebhookEndpointFailing,
	HealthRecovered: domain.EventWebhookEndpointRecovered,
	HealthDisabled:  domain.EventWebhookEndpointDisabled,
}

// HealthSubject is the subject of an operational event about endpoint id.
// The fan-out reads it to keep such an event away from that endpoint.
func HealthSubject(id uuid.UUID) string { return "webhook:" + id.String() }

// RecordHealth records the operational event of each change with rec, which
// is bound to the transaction that made the changes: an event exists only if
// its change commits. The data is thin: the endpoint's id and times, and a
// disabling's reason as the server states it.
func RecordHealth(ctx context.Context, rec domain.Recorder, changes []HealthChange) error {
	for _, c := range changes {
		typ, ok := healthEvents[c.Kind]
		if !ok {
			return fmt.Errorf("record health of endpoint %s: unknown change %q", c.EndpointID, c.Kind)
		}
		data := map[string]any{"endpoint_id": c.EndpointID}
		switch c.Kind {
		case HealthRecovered:
			data["recovered_at"] = c.At.UTC()
		case HealthDisabled:
			data["failing_since"], data["reason"] = c.FailingSince.UTC(), c.Reason
		default:
			data["failing_since"] = c.FailingSince.UTC()
		}
		if _, err := rec.Record(ctx, c.OwnerID, typ, HealthSubject(c.EndpointID), data); err != nil {
			return fmt.Errorf("record health of endpoint %s: %w", c.EndpointID, err)
		}
	}
	return nil
}
