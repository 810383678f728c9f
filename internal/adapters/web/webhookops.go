package web

import (
	"strings"

	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// webhookOps are the webhook endpoint ops as the webhook pages call them:
// typed handles with the webhook domain's own types, resolved once when
// the UI is built.
type webhookOps struct {
	list       op.Handle[webhook.ListInput, op.Page[webhook.View]]
	get        op.Handle[webhook.IDInput, webhook.View]
	create     op.Handle[webhook.CreateInput, webhook.WithSecret]
	update     op.Handle[webhook.UpdateInput, webhook.View]
	delete     op.Handle[webhook.IDInput, op.Empty]
	rotate     op.Handle[webhook.IDInput, webhook.SecretOutput]
	sendTest   op.Handle[webhook.IDInput, webhook.TestOutput]
	deliveries op.Handle[webhook.DeliveriesInput, webhook.DeliveryPage]
	delivery   op.Handle[webhook.DeliveryIDInput, webhook.DeliveryDetail]
	redeliver  op.Handle[webhook.IDInput, webhook.RedeliverOutput]
	recover    op.Handle[webhook.RecoverInput, webhook.RecoverOutput]
	// retry and resend steer one delivery; the log offers its buttons only
	// when both are declared.
	retry, resend *op.Handle[webhook.DeliveryIDInput, webhook.RetryOutput]
}

// webhookOpsOf resolves the webhook pages' handles in ops. It returns nil
// when ops has no webhook section (no webhooks.list), and fails, naming
// the op, when the section is there but one of its ops is missing or has
// other types.
func webhookOpsOf(ops op.Set) (*webhookOps, error) {
	if _, ok := ops.Find("webhooks.list"); !ok {
		return nil, nil
	}
	var o webhookOps
	hs := handles{ops: ops}
	bind(&hs, &o.list, "webhooks.list")
	bind(&hs, &o.get, "webhooks.get")
	bind(&hs, &o.create, "webhooks.create")
	bind(&hs, &o.update, "webhooks.update")
	bind(&hs, &o.delete, "webhooks.delete")
	bind(&hs, &o.rotate, "webhooks.rotate_secret")
	bind(&hs, &o.sendTest, "webhooks.send_test")
	bind(&hs, &o.deliveries, "webhooks.deliveries")
	bind(&hs, &o.delivery, "webhooks.delivery")
	bind(&hs, &o.redeliver, "webhooks.redeliver")
	bind(&hs, &o.recover, "webhooks.recover")
	bindOptional(&hs, &o.retry, "webhooks.retry_delivery")
	bindOptional(&hs, &o.resend, "webhooks.resend_delivery")
	if err := hs.err("the webhook pages need the webhook endpoint ops"); err != nil {
		return nil, err
	}
	return &o, nil
}

// endpointOf is the page's view of an endpoint.
func endpointOf(v webhook.View) endpoint {
	e := endpoint{ID: v.ID, URL: v.URL, Description: v.Description, EventTypes: v.EventTypes, EmbedID: v.EmbedID, Headers: v.Headers,
		MaxInFlight: v.MaxInFlight, TimeoutSeconds: v.TimeoutSeconds, MaxAttempts: v.MaxAttempts, Enabled: v.Enabled, State: v.State,
		DisabledReason: v.DisabledReason, FailingSince: v.FailingSince, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt,
		DeletedAt: v.DeletedAt, RotationGraceUntil: v.RotationGraceUntil,
		Signing: v.Signing, PublicKey: v.PublicKey, PreviousPublicKey: v.PreviousPublicKey,
		RateLimitPerSecond: v.RateLimitPerSecond, RateLimitBurst: v.RateLimitBurst,
		CreatedBy: actorText(v.CreatedBy), UpdatedBy: actorText(v.UpdatedBy)}
	if len(v.Filter) > 0 && string(v.Filter) != "null" {
		e.Filter = string(v.Filter)
	}
	if v.Health != nil {
		hl := health(*v.Health)
		e.Health = &hl
	}
	return e
}

// actorText says in words who an actor (op.Caller.Actor) is: an API key
// or a session by its id, the owner acting without either, or that
// it was not recorded.
func actorText(actor *string) string {
	if actor == nil {
		return "not recorded"
	}
	if kind, id, ok := strings.Cut(*actor, ":"); ok {
		switch kind {
		case "api_key":
			return "API key " + id
		case "session":
			return "signed-in session " + id
		}
	}
	if *actor == op.ActorOwner {
		return "the owner directly (no API key or session)"
	}
	return *actor
}

// deliveryDetailOf is the page's view of one delivery with its attempts.
func deliveryDetailOf(v webhook.DeliveryDetail) deliveryDetail {
	d := deliveryDetail{delivery: deliveryOf(v.Delivery), Request: v.Request}
	for _, a := range v.Attempts {
		d.Attempts = append(d.Attempts, deliveryAttempt{Attempt: a.Attempt, Outcome: a.Outcome, StatusCode: a.StatusCode,
			LatencyMS: a.LatencyMS, Response: a.Response, Error: a.Error, Location: a.Location, At: a.At, Headers: a.Headers})
	}
	return d
}
