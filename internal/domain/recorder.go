package domain

import (
	"context"

	"github.com/google/uuid"
)

// Recorder records an event in the caller's transaction: the event exists
// only if that transaction commits, and the relay is woken when it does.
//
// A domain never builds a Recorder itself; its unit of work hands out one
// bound to the transaction (the infra side is recorder.With(tx)). Record
// refuses an event type that is not in the catalog and data that is not a
// JSON object, and returns the new event's id.
type Recorder interface {
	Record(ctx context.Context, ownerID uuid.UUID, eventType, subject string, data any) (uuid.UUID, error)
}
