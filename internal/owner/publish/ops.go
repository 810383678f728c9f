package publish

import (
	"github.com/standmeet/standmeet/internal/domain/op"
)

// Ops declares events.publish and events.publish_batch; REST, MCP and
// OpenAPI are projections of this list.
func (s *Service) Ops() op.Set {
	const refusals = " Refusals, nothing recorded: UNKNOWN_EVENT_TYPE (400), EVENT_TYPE_NOT_PUBLISHABLE (403: produced inside this server), " +
		"INVALID_SUBJECT (400: not an absolute URI, or raw://), DATA_NOT_OBJECT (400), DATA_TOO_LARGE (413: over 4096 bytes), " +
		"DATA_SCHEMA_MISMATCH (422: not the type's data_schema), INVALID_IDEMPOTENCY_KEY (400), IDEMPOTENCY_KEY_REUSED (409: the key was used for another type, subject or data; the message names the first event), RATE_LIMITED (429 with Retry-After: this key's events or bytes per second)."
	return op.Set{
		op.New(op.Meta{
			Name:    "events.publish",
			Scopes:  op.WritesIn(op.ScopePublish),
			Summary: "Publish an event from one of your services; 202 {id}, or 200 with the first event for a repeated idempotency_key",
			Description: "Records an event of an externally produced type (see webhooks.event_types: producer.kind \"external\") for this owner, " +
				"in one transaction, exactly like the events this server records itself: it flows through the relay, endpoint scopes and webhooks. " +
				"The same idempotency_key with the same type, subject and data (as a JSON value) within the event retention returns the first event (200, duplicate: true)." + refusals,
			// One event with room for JSON escaping of its data.
			MaxBodyBytes: 64 << 10,
		}, s.Publish),
		op.New(op.Meta{
			Name:    "events.publish_batch",
			Scopes:  op.WritesIn(op.ScopePublish),
			Summary: "Publish up to 100 events in one transaction: all or none",
			Description: "Each event as for events.publish, recorded in one transaction; if any is refused none is recorded and the error " +
				"names every refused item (field events[i].…; the code is the first one's). Answers 202 with the ids in input order; " +
				"an item whose idempotency_key was used already for the same request carries the first event's id and duplicate: true. " +
				"EMPTY_BATCH (400), BATCH_TOO_LARGE (413: over 100 events)." + refusals,
			// A full batch with room for JSON escaping of its data.
			MaxBodyBytes: 2 << 20,
		}, s.PublishBatch),
	}
}
