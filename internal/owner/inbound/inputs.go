package inbound

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain/op"
)

// CreateSourceInput creates a source. The kind's options may be given in
// "options" or, as the contract shows a source, flattened beside the other
// fields (UnmarshalJSON); giving one option both ways is refused.
type CreateSourceInput struct {
	Name     string `json:"name" doc:"a name for the sender, e.g. \"GitHub: standmeet repo\""`
	Verifier string `json:"verifier" doc:"provider kind: standard-webhooks, github, stripe or hmac"`
	// Options are the kind's options (see package verifier).
	Options map[string]json.RawMessage `json:"options,omitempty" doc:"the kind's options; may also be given at the top level"`
	// Secret is the provider's secret, for kinds that do not generate theirs.
	Secret           string `json:"secret,omitempty" doc:"the provider's secret; omit for kinds whose secret the instance generates (standard-webhooks)"`
	Enabled          *bool  `json:"enabled,omitempty" doc:"default true"`
	RecordEvents     *bool  `json:"record_events,omitempty" doc:"record inbound.message.received for each accepted message, so endpoints can be told; default true"`
	BodyLimitBytes   int64  `json:"body_limit_bytes,omitempty" doc:"largest accepted body, default 1048576"`
	ToleranceSeconds int    `json:"tolerance_seconds,omitempty" doc:"timestamp window both ways, default 300"`
}

// UnmarshalJSON takes the known fields and collects every other member as an
// option.
func (in *CreateSourceInput) UnmarshalJSON(b []byte) error {
	var nested map[string]json.RawMessage
	rest, err := splitObject(b, map[string]any{
		"name": &in.Name, "verifier": &in.Verifier, "options": &nested, "secret": &in.Secret,
		"enabled": &in.Enabled, "record_events": &in.RecordEvents, "body_limit_bytes": &in.BodyLimitBytes, "tolerance_seconds": &in.ToleranceSeconds,
	})
	if err != nil {
		return err
	}
	in.Options, err = mergeOptions(nested, rest)
	return err
}

// UpdateSourceInput changes a source; absent fields stay as they are.
// Options patch the stored ones member by member (null removes a member,
// which restores its default); they may be flattened as in create.
type UpdateSourceInput struct {
	ID               uuid.UUID                  `json:"id" path:"id"`
	Name             *string                    `json:"name,omitempty"`
	Verifier         *string                    `json:"verifier,omitempty" doc:"must equal the current kind: a source's kind never changes"`
	Options          map[string]json.RawMessage `json:"options,omitempty" doc:"options to change; null removes one"`
	Enabled          *bool                      `json:"enabled,omitempty"`
	RecordEvents     *bool                      `json:"record_events,omitempty" doc:"record inbound.message.received for each accepted message"`
	BodyLimitBytes   *int64                     `json:"body_limit_bytes,omitempty"`
	ToleranceSeconds *int                       `json:"tolerance_seconds,omitempty"`
}

// UnmarshalJSON takes the known fields and collects every other member as an
// option.
func (in *UpdateSourceInput) UnmarshalJSON(b []byte) error {
	var nested map[string]json.RawMessage
	rest, err := splitObject(b, map[string]any{
		"id": &in.ID, "name": &in.Name, "verifier": &in.Verifier, "options": &nested,
		"enabled": &in.Enabled, "record_events": &in.RecordEvents, "body_limit_bytes": &in.BodyLimitBytes, "tolerance_seconds": &in.ToleranceSeconds,
	})
	if err != nil {
		return err
	}
	in.Options, err = mergeOptions(nested, rest)
	return err
}

// SourceIDInput names one source.
type SourceIDInput struct {
	ID uuid.UUID `json:"id" path:"id"`
}

// RotateSecretInput rotates a source's secret: generated for kinds that
// generate theirs unless one is given, else the provider's new secret.
type RotateSecretInput struct {
	ID     uuid.UUID `json:"id" path:"id"`
	Secret string    `json:"secret,omitempty" doc:"the provider's new secret; omit to have the instance generate one (standard-webhooks)"`
}

// ListMessagesInput pages through a source's inbox.
type ListMessagesInput struct {
	ID    uuid.UUID `json:"id" path:"id"`
	State string    `json:"state,omitempty" query:"state" doc:"received, processing, done or dead; empty for all"`
	op.PageInput
}

// MessageInput names one message of a source.
type MessageInput struct {
	ID        uuid.UUID `json:"id" path:"id"`
	MessageID uuid.UUID `json:"message_id" path:"message_id" doc:"the inbox message's id (not the sender's)"`
}

// ListDeadLettersInput pages through a source's dead letters.
type ListDeadLettersInput struct {
	ID uuid.UUID `json:"id" path:"id"`
	op.PageInput
}

// ReplayDeadLetterInput replays one dead letter.
type ReplayDeadLetterInput struct {
	ID            uuid.UUID `json:"id" path:"id"`
	MessageID     uuid.UUID `json:"message_id" path:"message_id" doc:"the inbox message's id (not the sender's)"`
	ResetAttempts *bool     `json:"reset_attempts,omitempty" doc:"start the attempts again (default true); false leaves the message only the attempts it had left, at least one"`
}

// ReplayDeadLettersInput replays every dead letter of a source.
type ReplayDeadLettersInput struct {
	ID            uuid.UUID `json:"id" path:"id"`
	ResetAttempts *bool     `json:"reset_attempts,omitempty" doc:"start the attempts again (default true)"`
}

// splitObject decodes the JSON object b: members named in known decode into
// the pointers given, the others are returned.
func splitObject(b []byte, known map[string]any) (map[string]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("want a JSON object")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &obj); err != nil {
		return nil, err
	}
	rest := map[string]json.RawMessage{}
	for k, raw := range obj {
		dst, ok := known[k]
		if !ok {
			rest[k] = raw
			continue
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return nil, fmt.Errorf("field %q: %v", k, err)
		}
	}
	return rest, nil
}

// mergeOptions joins the nested and the flattened options.
func mergeOptions(nested, flat map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	if len(nested) == 0 && len(flat) == 0 {
		return nil, nil
	}
	out := make(map[string]json.RawMessage, len(nested)+len(flat))
	for k, v := range nested {
		out[k] = v
	}
	for k, v := range flat {
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("option %q given both in \"options\" and at the top level", k)
		}
		out[k] = v
	}
	return out, nil
}
