package webhook

import (
	"context"

	"github.com/standmeet/standmeet/internal/domain/op"
)

// Ops declares the webhooks ops once; the REST routes of the contract, the
// MCP tools and the admin UI are projections of this list.
func (s *Service) Ops() op.Set {
	return op.Set{
		op.New(op.Meta{
			Name: "webhooks.list", Scopes: op.ReadsIn(op.ScopeWebhooks), Summary: "List webhook endpoints, filtered and sorted, each with its last success, last failure and success rate over the last day",
			Description: "state: enabled, failing, disabled or deleted (default: every endpoint not deleted); event_type: endpoints " +
				"subscribed to it; url: URL contains; sort: created, -created, url, -url. Errors: INVALID_STATE, INVALID_EVENT_TYPE, " +
				"INVALID_URL_FILTER, INVALID_SORT, INVALID_CURSOR.",
		}, func(ctx context.Context, c op.Caller, in ListInput) (op.Page[View], error) {
			return s.List(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "webhooks.get", Scopes: op.ReadsIn(op.ScopeWebhooks), Summary: "Show one webhook endpoint (never its secret)",
		}, func(ctx context.Context, c op.Caller, in IDInput) (View, error) {
			return s.Get(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "webhooks.create", Scopes: op.WritesIn(op.ScopeWebhooks), Summary: "Create a webhook endpoint; its signing secret is shown this once",
			Description: "Validation errors: INVALID_URL, INVALID_EVENT_TYPES, INVALID_HEADERS, INVALID_DESCRIPTION, " +
				"INVALID_MAX_IN_FLIGHT, INVALID_TIMEOUT, INVALID_MAX_ATTEMPTS, UNKNOWN_EMBED, INVALID_SIGNING, INVALID_FILTER (field names the path at fault); " +
				"ENDPOINT_LIMIT (409) past the per-owner limit. signing ed25519: no secret is returned; receivers verify v1a signatures with public_key.",
		}, func(ctx context.Context, c op.Caller, in CreateInput) (WithSecret, error) {
			in.by = c.Actor()
			return s.Create(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "webhooks.update", Scopes: op.WritesIn(op.ScopeWebhooks), Summary: "Change a webhook endpoint; enabled:true clears its failure state",
			Description: "Validation errors as for create; ENDPOINT_DELETED (409) for a deleted endpoint.",
		}, func(ctx context.Context, c op.Caller, in UpdateInput) (View, error) {
			in.by = c.Actor()
			return s.Update(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "webhooks.delete", Scopes: op.WritesIn(op.ScopeWebhooks), Summary: "Delete a webhook endpoint: it gets no more deliveries; it and its delivery log stay readable until the retention purges them",
		}, func(ctx context.Context, c op.Caller, in IDInput) (op.Empty, error) {
			return op.Empty{}, s.Delete(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "webhooks.rotate_secret", Scopes: op.WritesIn(op.ScopeWebhooks), Summary: "Give an endpoint a new signing secret, shown once; the old one stays valid 24 h",
			Description: "An ed25519 endpoint gets a new key pair: public_key is returned instead of secret, and the previous public key " +
				"keeps verifying (both sign) during the grace.",
		}, func(ctx context.Context, c op.Caller, in IDInput) (SecretOutput, error) {
			return s.RotateSecret(ctx, c.OwnerID, in.ID, c.Actor())
		}),
		op.New(op.Meta{
			Name: "webhooks.send_test", Scopes: op.WritesIn(op.ScopeWebhooks), Summary: "Send a webhook.test event to this endpoint only",
		}, func(ctx context.Context, c op.Caller, in IDInput) (TestOutput, error) {
			return s.SendTest(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "webhooks.deliveries", Scopes: op.ReadsIn(op.ScopeWebhooks), Summary: "The endpoint's delivery log, newest first: River's state and the owner's status, the latest attempt's outcome",
			Description: "state: delivered, sending, waiting, retrying, failed or cancelled; event_type; since/until (RFC 3339, " +
				"when the delivery was queued); cursor pages to older deliveries (next_cursor), before to newer ones (prev_cursor), as events.list does. " +
				"Errors: INVALID_STATE, INVALID_EVENT_TYPE, INVALID_TIME, INVALID_CURSOR.",
		}, func(ctx context.Context, c op.Caller, in DeliveriesInput) (DeliveryPage, error) {
			return s.Deliveries(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "webhooks.delivery", Scopes: op.ReadsIn(op.ScopeWebhooks), Summary: "One delivery with every attempt (time, status, latency, answer or error) and the body and headers it sends",
			Description: "The body is rebuilt from the event (it is a function of the event alone); custom header values are masked; " +
				"webhook-timestamp and webhook-signature change with every attempt: each attempt carries the values it sent (the signatures, never the secret) and its headers. " +
				"request, and the attempts' headers, are null once the event was pruned.",
		}, func(ctx context.Context, c op.Caller, in DeliveryIDInput) (DeliveryDetail, error) {
			return s.Delivery(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "webhooks.retry_delivery", Scopes: op.WritesIn(op.ScopeWebhooks), Summary: "Retry now: run a retrying or waiting delivery at once (River states retryable, scheduled, pending)",
			Description: "DELIVERY_STATE (409) for any other state; ENDPOINT_DISABLED (409); ENDPOINT_DELETED (409).",
		}, func(ctx context.Context, c op.Caller, in DeliveryIDInput) (RetryOutput, error) {
			return s.RetryNow(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "webhooks.resend_delivery", Scopes: op.WritesIn(op.ScopeWebhooks), Summary: "Send again a finished delivery (River states completed, discarded, cancelled): the same job and webhook-id",
			Description: "DELIVERY_STATE (409) for any other state; ENDPOINT_DISABLED (409); ENDPOINT_DELETED (409).",
		}, func(ctx context.Context, c op.Caller, in DeliveryIDInput) (RetryOutput, error) {
			return s.SendAgain(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "webhooks.redeliver", Scopes: op.WritesIn(op.ScopeWebhooks), Summary: "Redeliver failed: queue again every failed (River: discarded) and cancelled delivery of the endpoint",
			Description: "Retrying and waiting deliveries are not taken (retry now runs one at once). A failed delivery whose event the " +
				"fan-out's rules keep from the endpoint now (another endpoint's webhook.test, out of scope, filtered out, about the endpoint " +
				"itself), or whose event was pruned (event_gone), is left alone and listed in skipped with its reason. " +
				"The answer counts the others by River state.",
		}, func(ctx context.Context, c op.Caller, in IDInput) (RedeliverOutput, error) {
			return s.Redeliver(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "webhooks.recover", Scopes: op.WritesIn(op.ScopeWebhooks), Summary: "Recover: send the endpoint, as new deliveries, the events of [since, until) it subscribes to and has no delivery of",
			Description: "Events still in retention only. The fan-out's rules apply: another endpoint's webhook.test, an event out of the " +
				"endpoint's scope, one its payload filter refuses and one about the endpoint itself are not queued but listed in skipped " +
				"with their reasons. An event the endpoint has a delivery of (in any state) is left alone, so a second " +
				"recover of the same range queues nothing; redeliver sends failed ones again. At most 1000 events per call. " +
				"Errors: INVALID_TIME, RANGE_TOO_LARGE, ENDPOINT_DISABLED (409), ENDPOINT_DELETED (409).",
		}, func(ctx context.Context, c op.Caller, in RecoverInput) (RecoverOutput, error) {
			return s.Recover(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "webhooks.event_deliveries", Scopes: op.ReadsIn(op.ScopeWebhooks), Summary: "The webhook deliveries of one event, each with its endpoint",
			Description: "NOT_FOUND when the event is not yours or was pruned by the retention.",
		}, func(ctx context.Context, c op.Caller, in EventIDInput) (op.List[EventDelivery], error) {
			return s.EventDeliveries(ctx, c.OwnerID, in.ID)
		}),
		s.eventFanoutOp(),
		s.eventOutcomesOp(),
		op.New(op.Meta{
			Name: "webhooks.stats", Scopes: op.ReadsIn(op.ScopeWebhooks), Summary: "Delivery charts of every endpoint over a window: attempts by outcome and latency p50/p99 per bucket",
			Description: "window: hour (5-minute buckets), day (hourly, the default) or week (6-hour buckets); every bucket is listed, " +
				"oldest first. Errors: INVALID_WINDOW.",
		}, func(ctx context.Context, c op.Caller, in WindowInput) (Stats, error) {
			return s.Stats(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "webhooks.endpoint_stats", Scopes: op.ReadsIn(op.ScopeWebhooks), Summary: "One endpoint's delivery charts over a window, as webhooks.stats",
			Description: "Errors: INVALID_WINDOW; NOT_FOUND for an endpoint that is not yours.",
		}, func(ctx context.Context, c op.Caller, in EndpointWindowInput) (Stats, error) {
			return s.EndpointStats(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "webhooks.attention", Scopes: op.ReadsIn(op.ScopeWebhooks), Summary: "The endpoints that need you: disabled by the server, or failing (alarm: disabled, or failing for an hour)",
		}, func(ctx context.Context, c op.Caller, _ op.Empty) (op.List[Attention], error) {
			return s.Attention(ctx, c.OwnerID)
		}),
		op.New(op.Meta{
			Name: "webhooks.event_types", Scopes: op.ReadsIn(op.ScopeWebhooks), Summary: "The event types an endpoint can subscribe to",
		}, func(context.Context, op.Caller, op.Empty) (op.List[EventTypeView], error) {
			return s.EventTypes(), nil
		}),
	}
}
