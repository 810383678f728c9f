package webhooks

import (
	"context"
	"net/http"

	"github.com/standmeet/standmeet/internal/domain/op"
)

// Ops declares the webhooks ops once; the REST routes of the contract, the
// MCP tools and the admin UI are projections of this list.
func (s *Service) Ops() op.Set {
	const base = "/api/admin/webhooks"
	return op.Set{
		op.New(op.Meta{
			Name: "webhooks.list", Summary: "List webhook endpoints, filtered and sorted, each with its last success, last failure and success rate over the last day",
			Description: "state: enabled, failing, disabled or deleted (default: every endpoint not deleted); event_type: endpoints " +
				"subscribed to it; url: URL contains; sort: created, -created, url, -url. Errors: INVALID_STATE, INVALID_EVENT_TYPE, " +
				"INVALID_URL_FILTER, INVALID_SORT, INVALID_CURSOR.",
			Method: http.MethodGet, Path: base,
		}, func(ctx context.Context, c op.Caller, in ListInput) (op.Page[View], error) {
			return s.List(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "webhooks.get", Summary: "Show one webhook endpoint (never its secret)",
			Method: http.MethodGet, Path: base + "/{id}",
		}, func(ctx context.Context, c op.Caller, in IDInput) (View, error) {
			return s.Get(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "webhooks.create", Summary: "Create a webhook endpoint; its signing secret is shown this once",
			Description: "Validation errors: INVALID_URL, INVALID_EVENT_TYPES, INVALID_HEADERS, INVALID_DESCRIPTION, " +
				"INVALID_MAX_IN_FLIGHT, INVALID_TIMEOUT, INVALID_MAX_ATTEMPTS, UNKNOWN_EMBED; ENDPOINT_LIMIT (409) past the per-owner limit.",
			Method: http.MethodPost, Path: base, Status: http.StatusCreated,
		}, func(ctx context.Context, c op.Caller, in CreateInput) (WithSecret, error) {
			return s.Create(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "webhooks.update", Summary: "Change a webhook endpoint; enabled:true clears its failure state",
			Description: "Validation errors as for create; ENDPOINT_DELETED (409) for a deleted endpoint.",
			Method:      http.MethodPatch, Path: base + "/{id}",
		}, func(ctx context.Context, c op.Caller, in UpdateInput) (View, error) {
			return s.Update(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "webhooks.delete", Summary: "Delete a webhook endpoint: it gets no more deliveries; it and its delivery log stay readable until the retention purges them",
			Method: http.MethodDelete, Path: base + "/{id}",
		}, func(ctx context.Context, c op.Caller, in IDInput) (op.Empty, error) {
			return op.Empty{}, s.Delete(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "webhooks.rotate_secret", Summary: "Give an endpoint a new signing secret, shown once; the old one stays valid 24 h",
			Method: http.MethodPost, Path: base + "/{id}/rotate-secret",
		}, func(ctx context.Context, c op.Caller, in IDInput) (SecretOutput, error) {
			return s.RotateSecret(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "webhooks.send_test", Summary: "Send a webhook.test event to this endpoint only",
			Method: http.MethodPost, Path: base + "/{id}/test", Status: http.StatusAccepted,
		}, func(ctx context.Context, c op.Caller, in IDInput) (TestOutput, error) {
			return s.SendTest(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "webhooks.deliveries", Summary: "The endpoint's delivery log: River job state, attempts and the last answer",
			Method: http.MethodGet, Path: base + "/{id}/deliveries",
		}, func(ctx context.Context, c op.Caller, in DeliveriesInput) (op.Page[Delivery], error) {
			return s.Deliveries(ctx, c.OwnerID, in)
		}),
		op.New(op.Meta{
			Name: "webhooks.redeliver", Summary: "Queue again every discarded delivery of the endpoint",
			Method: http.MethodPost, Path: base + "/{id}/redeliver",
		}, func(ctx context.Context, c op.Caller, in IDInput) (RedeliverOutput, error) {
			return s.Redeliver(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "webhooks.event_deliveries", Summary: "The webhook deliveries of one event, each with its endpoint",
			Description: "NOT_FOUND when the event is not yours or was pruned by the retention.",
			Method:      http.MethodGet, Path: "/api/admin/events/{id}/deliveries",
		}, func(ctx context.Context, c op.Caller, in EventIDInput) (op.List[EventDelivery], error) {
			return s.EventDeliveries(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "webhooks.event_types", Summary: "The event types an endpoint can subscribe to",
			Method: http.MethodGet, Path: base + "/event-types",
		}, func(context.Context, op.Caller, op.Empty) (op.List[EventTypeView], error) {
			return s.EventTypes(), nil
		}),
	}
}
