package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// CreateInput is the body of webhooks.create.
type CreateInput struct {
	URL         string            `json:"url" doc:"absolute http or https URL of the receiver, without credentials"`
	Description string            `json:"description,omitempty" doc:"free text, at most 500 bytes"`
	EventTypes  []string          `json:"event_types" text:"glob" doc:"event types or globs (\"*\", \"corpus.*\"), each matching a webhook event type"`
	EmbedID     *uuid.UUID        `json:"embed_id,omitempty" doc:"scope corpus events to this embed's access code; omit for the published slice"`
	Headers     map[string]string `json:"headers,omitempty" doc:"custom request headers, name to string value"`
	Enabled     *bool             `json:"enabled,omitempty" doc:"default true"`
	MaxInFlight *int              `json:"max_in_flight,omitempty" doc:"deliveries in flight at once, 1..8, default 1"`
	// TimeoutSeconds and MaxAttempts default to their caps.
	TimeoutSeconds *int `json:"timeout_seconds,omitempty" doc:"HTTP timeout of one delivery attempt in seconds, 1..10, default 10"`
	MaxAttempts    *int `json:"max_attempts,omitempty" doc:"attempts per delivery before it fails, 1..18 (the first of the retry schedule), default 18"`
	// Signing and Filter are the endpoint's controls.
	Signing string          `json:"signing,omitempty" doc:"hmac-sha256 (default: v1 signatures with a shared whsec_ secret) or ed25519 (v1a signatures; receivers verify with the whpk_ public_key); fixed at creation"`
	Filter  json.RawMessage `json:"filter,omitempty" doc:"payload filter over type, subject and data.<path>: a JSON object of field paths to a value or operators ($eq $neq $in $nin $exists $gt $gte $lt $lte $glob), combined with $and / $or; data fields must exist in a subscribed type's schema"`
	// RateLimitPerSecond and RateLimitBurst bound how fast deliveries
	// start, across every replica.
	RateLimitPerSecond *int `json:"rate_limit_per_second,omitempty" doc:"at most this many deliveries start per second, 1..1000; omit or 0 for no limit. A delivery over it waits without spending an attempt"`
	RateLimitBurst     *int `json:"rate_limit_burst,omitempty" doc:"how many deliveries may start at once after a quiet spell, 1..1000, default the rate"`

	// rawHeaders is the headers field as sent, kept so a malformed one is
	// reported as INVALID_HEADERS rather than as a JSON type error.
	rawHeaders json.RawMessage
	// by is who creates the endpoint (op.Caller.Actor), set by the op.
	by string
}

// actorOr is by, or op.ActorOwner for a call that names no actor (the
// owner acting directly).
func actorOr(by string) string {
	if by == "" {
		return op.ActorOwner
	}
	return by
}

// UnmarshalJSON decodes strictly (unknown fields refused) and keeps the raw
// headers for validation.
func (in *CreateInput) UnmarshalJSON(b []byte) error {
	type fields CreateInput
	var shadow struct {
		fields
		Headers json.RawMessage `json:"headers,omitempty"`
	}
	if err := strictDecode(b, &shadow); err != nil {
		return err
	}
	*in = CreateInput(shadow.fields)
	in.Headers, in.rawHeaders = gateHeaders(shadow.Headers), shadow.Headers
	return nil
}

// gateHeaders returns raw headers that are a JSON object of strings as a
// map, so the input gate (op.Check) sees their names and values as it sees
// every other text; any other JSON is left to ParseHeaders' INVALID_HEADERS.
func gateHeaders(raw json.RawMessage) map[string]string {
	var m map[string]string
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

func (in CreateInput) headers() (map[string]string, error) {
	if in.rawHeaders != nil {
		return ParseHeaders(in.rawHeaders)
	}
	return ValidateHeaders(in.Headers)
}

// UpdateInput is the body of webhooks.update: any of the create fields;
// absent (or null) fields stay as they are, except embed_id, where null
// detaches the endpoint from its embed.
type UpdateInput struct {
	ID          uuid.UUID         `json:"id" path:"id"`
	URL         *string           `json:"url,omitempty"`
	Description *string           `json:"description,omitempty"`
	EventTypes  []string          `json:"event_types,omitempty" text:"glob"`
	EmbedID     *uuid.UUID        `json:"embed_id,omitempty" doc:"an embed id, or null to detach"`
	Headers     map[string]string `json:"headers,omitempty" doc:"replaces all custom headers; {} removes them"`
	Enabled     *bool             `json:"enabled,omitempty" doc:"true also clears the failure state"`
	MaxInFlight *int              `json:"max_in_flight,omitempty"`
	// TimeoutSeconds and MaxAttempts apply to attempts that start after
	// the change.
	TimeoutSeconds *int            `json:"timeout_seconds,omitempty" doc:"HTTP timeout of one delivery attempt in seconds, 1..10"`
	MaxAttempts    *int            `json:"max_attempts,omitempty" doc:"attempts per delivery, 1..18"`
	Filter         json.RawMessage `json:"filter,omitempty" doc:"replaces the payload filter; null or {} removes it"`
	// RateLimitPerSecond 0 removes the limit; RateLimitBurst applies with
	// it (default the rate).
	RateLimitPerSecond *int `json:"rate_limit_per_second,omitempty" doc:"1..1000 deliveries started per second; 0 removes the limit"`
	RateLimitBurst     *int `json:"rate_limit_burst,omitempty" doc:"1..1000, default the rate"`

	rawHeaders json.RawMessage
	// embedSet records that embed_id was present in the body (null
	// included).
	embedSet bool
	// by is who changes the endpoint (op.Caller.Actor), set by the op.
	by string
}

// UnmarshalJSON decodes strictly and records which of the fields whose
// null is meaningful were present.
func (in *UpdateInput) UnmarshalJSON(b []byte) error {
	type fields UpdateInput
	var shadow struct {
		fields
		Headers json.RawMessage `json:"headers,omitempty"`
		EmbedID json.RawMessage `json:"embed_id,omitempty"`
	}
	if err := strictDecode(b, &shadow); err != nil {
		return err
	}
	*in = UpdateInput(shadow.fields)
	in.Headers, in.rawHeaders = nil, nil
	if h := strings.TrimSpace(string(shadow.Headers)); h != "" && h != "null" {
		in.Headers, in.rawHeaders = gateHeaders(shadow.Headers), shadow.Headers
	}
	in.EmbedID = nil
	if shadow.EmbedID != nil {
		in.embedSet = true
		if strings.TrimSpace(string(shadow.EmbedID)) != "null" {
			var id uuid.UUID
			if err := json.Unmarshal(shadow.EmbedID, &id); err != nil {
				return fmt.Errorf("embed_id: %w", err)
			}
			in.EmbedID = &id
		}
	}
	return nil
}

// headers returns the new headers, or nil when they stay.
func (in UpdateInput) headers() (map[string]string, error) {
	switch {
	case in.rawHeaders != nil:
		return ParseHeaders(in.rawHeaders)
	case in.Headers != nil:
		return ValidateHeaders(in.Headers)
	}
	return nil, nil
}

// embedChange says whether embed_id changes and to what (nil: detach).
func (in UpdateInput) embedChange() (bool, *uuid.UUID) {
	return in.embedSet || in.EmbedID != nil, in.EmbedID
}

// DetachEmbed makes the update detach the endpoint from its embed, as
// "embed_id": null in a body does (a nil EmbedID alone leaves it as it is).
func (in *UpdateInput) DetachEmbed() {
	in.EmbedID, in.embedSet = nil, true
}

// strictDecode decodes one JSON value refusing unknown fields and trailing
// data, as the REST projection does for inputs without an UnmarshalJSON.
func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

// IDInput names one endpoint.
type IDInput struct {
	ID uuid.UUID `json:"id" path:"id"`
}

// ListInput filters, orders and pages the endpoints.
type ListInput struct {
	op.PageInput
	State     string `json:"state,omitempty" query:"state" doc:"enabled, failing, disabled or deleted; default every endpoint not deleted"`
	EventType string `json:"event_type,omitempty" query:"event_type" doc:"only endpoints subscribed to this webhook event type (through their globs)"`
	URL       string `json:"url,omitempty" query:"url" doc:"only endpoints whose URL contains this text (case-insensitive)"`
	Sort      string `json:"sort,omitempty" query:"sort" doc:"-created (default, newest first), created (oldest first), url or -url"`
}

// DeliveriesInput filters and pages an endpoint's delivery log.
type DeliveriesInput struct {
	ID uuid.UUID `json:"id" path:"id"`
	op.PageInput
	Before    string `json:"before,omitempty" query:"before" doc:"opaque cursor from prev_cursor: the page of newer deliveries"`
	State     string `json:"state,omitempty" query:"state" doc:"delivered, sending, waiting, retrying, failed or cancelled"`
	EventType string `json:"event_type,omitempty" query:"event_type" doc:"only deliveries of events of this type"`
	Since     string `json:"since,omitempty" query:"since" doc:"RFC 3339: deliveries queued at or after it"`
	Until     string `json:"until,omitempty" query:"until" doc:"RFC 3339: deliveries queued before it"`
}

// EventIDInput names one event.
type EventIDInput struct {
	ID uuid.UUID `json:"id" path:"id" doc:"event id"`
}

// SecretOutput is a new secret, shown once, or an ed25519 endpoint's new
// public key.
type SecretOutput struct {
	Secret string `json:"secret,omitempty"`
	// PublicKey is an ed25519 endpoint's new "whpk_…" key.
	PublicKey string `json:"public_key,omitempty"`
	// RotationGraceUntil is when the secret this one replaces stops
	// signing (set by a rotation).
	RotationGraceUntil *time.Time `json:"rotation_grace_until,omitempty"`
}

// TestOutput names the test event and its delivery job.
type TestOutput struct {
	EventID uuid.UUID `json:"event_id"`
	JobID   int64     `json:"job_id"`
}

// RedeliverOutput counts the deliveries queued again, in all and by the
// River state they were in.
type RedeliverOutput struct {
	Count int `json:"count"`
	// States are the River states redeliver takes (RedeliverStates).
	States  []string       `json:"states"`
	ByState map[string]int `json:"by_state" doc:"how many deliveries of each taken state were queued again"`
	// Skipped are the failed deliveries left alone because the fan-out's
	// rules keep their event from the endpoint now (or it was pruned).
	Skipped []SkippedEvent `json:"skipped"`
}

// EventTypeView is one Webhook-exposed event type, documented: who
// produces it, the JSON Schema of its data and an example webhook body.
type EventTypeView struct {
	Name        string          `json:"name"`
	Domain      string          `json:"domain"`
	Description string          `json:"description"`
	Producer    domain.Producer `json:"producer" doc:"kind: trigger, use_case or external; name: the trigger or use case"`
	// Publishable is true for external types: events.publish accepts them.
	Publishable bool            `json:"publishable" doc:"true when the owner's services may publish it through events.publish"`
	DataSchema  json.RawMessage `json:"data_schema" doc:"JSON Schema (draft 2020-12) of the event's data"`
	Example     json.RawMessage `json:"example" doc:"an example webhook body: id, type, subject, occurred_at, data"`
}
