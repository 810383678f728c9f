package openapi

import (
	"encoding/json"
	"fmt"

	"github.com/standmeet/standmeet/internal/domain"
)

// webhooksTag groups the webhooks the instance sends.
const webhooksTag = "webhook events"

// AddWebhooks adds the OpenAPI 3.1 webhooks section to doc: one entry per
// event type an endpoint can receive, a POST whose body is the thin event
// (id, type, subject, occurred_at, data, with data described by the type's
// schema and an example), signed with the Standard Webhooks headers. The
// receiver's answers are described as the sender reads them.
func AddWebhooks(doc map[string]any, types []domain.EventType) error {
	if len(types) == 0 {
		return nil
	}
	hooks := map[string]any{}
	for _, t := range types {
		var data, example any
		if err := json.Unmarshal([]byte(t.DataSchema), &data); err != nil {
			return fmt.Errorf("openapi: data schema of %s: %w", t.Name, err)
		}
		if err := json.Unmarshal([]byte(t.ExampleBody()), &example); err != nil {
			return fmt.Errorf("openapi: example of %s: %w", t.Name, err)
		}
		producer := "external: the owner's services publish it with events.publish (POST /api/admin/events)"
		if !t.Publishable() {
			producer = fmt.Sprintf("%s %s, inside this server", t.Producer.Kind, t.Producer.Name)
		}
		hooks[t.Name] = map[string]any{
			"post": map[string]any{
				"operationId": "webhook:" + t.Name,
				"summary":     t.Description,
				"description": fmt.Sprintf("Sent to every enabled endpoint whose event_types match %q (globs such as \"*\" or %q). "+
					"Producer: %s. The body is thin: fetch anything more through the API. "+
					"Verify the Standard Webhooks signature with the endpoint's secret before trusting it; webhook-id is the event id "+
					"(the same on every retry, so deduplicate by it). An endpoint's custom headers are sent too.",
					t.Name, t.Domain+".*", producer),
				"tags":       []any{webhooksTag},
				"security":   []any{},
				"parameters": webhookHeaders(),
				"requestBody": map[string]any{
					"required": true,
					"content": map[string]any{"application/json": map[string]any{
						"schema":  envelope(t.Name, data),
						"example": example,
					}},
				},
				"responses": map[string]any{
					"2XX":     map[string]any{"description": "delivered; the body of the answer is ignored (its first bytes are kept in the delivery log)"},
					"410":     map[string]any{"description": "gone: the delivery ends at once and is not retried; the endpoint is disabled"},
					"429":     map[string]any{"description": "too many requests: retried after Retry-After (seconds or an HTTP date) without spending an attempt"},
					"default": map[string]any{"description": "any other answer, or none within the timeout, is retried with backoff; after the last attempt the delivery is discarded (redeliver brings it back)"},
				},
			},
		}
	}
	doc["webhooks"] = hooks
	tags, _ := doc["tags"].([]any)
	doc["tags"] = append(tags, map[string]any{"name": webhooksTag,
		"description": "The webhooks this instance sends to the endpoints an owner registers (webhooks.create), one per event type; see webhooks.event_types."})
	return nil
}

// envelope is the schema of a webhook body of eventType.
func envelope(eventType string, data any) map[string]any {
	return map[string]any{
		"type":                 "object",
		"required":             []any{"id", "type", "subject", "occurred_at", "data"},
		"additionalProperties": false,
		"properties": map[string]any{
			"id":          map[string]any{"type": "string", "format": "uuid", "description": "the event id, also the webhook-id header"},
			"type":        map[string]any{"type": "string", "const": eventType},
			"subject":     map[string]any{"type": "string", "description": "what the event is about (a URI for published events)"},
			"occurred_at": map[string]any{"type": "string", "format": "date-time"},
			"data":        data,
		},
	}
}

// webhookHeaders are the Standard Webhooks headers every delivery carries.
func webhookHeaders() []any {
	h := func(name, desc, example string) map[string]any {
		return map[string]any{"name": name, "in": "header", "required": true, "description": desc,
			"schema": map[string]any{"type": "string"}, "example": example}
	}
	return []any{
		h("webhook-id", "the event id: the same on every attempt, the idempotency key for the receiver", "0193b6a8-7c2e-7d4a-9f61-3c5e8a2b1d90"),
		h("webhook-timestamp", "Unix seconds when this attempt was signed; refuse ones too far from now", "1796117400"),
		h("webhook-signature", "space-separated v1,<base64 HMAC-SHA256 of id.timestamp.body> signatures: two during the 24 h after a secret rotation",
			"v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="),
	}
}
