package domain

import (
	"encoding/json"
	"fmt"
)

// Exposure says where an event type may go. The zero value is Internal, so a
// type that nobody classified can never leave the instance by accident.
type Exposure int

const (
	// Internal events reach subscribers inside the instance only.
	Internal Exposure = iota
	// Webhook events may also leave the instance as thin, signed webhooks.
	Webhook
)

// String returns "internal" or "webhook".
func (e Exposure) String() string {
	if e == Webhook {
		return "webhook"
	}
	return "internal"
}

// EventType is one entry of the event catalog.
type EventType struct {
	// Name is the dotted type name, e.g. "corpus.note.changed".
	Name string `json:"name"`
	// Exposure defaults to Internal.
	Exposure Exposure `json:"-"`
	// Domain names the domain that produces the event.
	Domain string `json:"domain"`
	// Description says what fact the event records.
	Description string `json:"description"`
	// Producer says who records events of this type: exactly one kind.
	Producer Producer `json:"producer"`
	// DataSchema is the JSON Schema (draft 2020-12) of the event's data,
	// as JSON text; every declared type has one.
	DataSchema string `json:"data_schema"`
	// ExampleSubject and Example are an example event's subject and data
	// (JSON text); Example validates against DataSchema.
	ExampleSubject string `json:"example_subject"`
	Example        string `json:"example"`
}

// ProducerKind is how events of a type come to exist.
type ProducerKind string

// The kinds of producer. A type has exactly one.
const (
	// ProducedByTrigger: a database trigger records the event in the
	// writing transaction.
	ProducedByTrigger ProducerKind = "trigger"
	// ProducedByUseCase: a named use case of this server records it.
	ProducedByUseCase ProducerKind = "use_case"
	// ProducedExternally: the owner's other services publish it through
	// the events.publish op. Only these types may be published.
	ProducedExternally ProducerKind = "external"
)

// Producer names who records events of a type.
type Producer struct {
	Kind ProducerKind `json:"kind"`
	// Name is the trigger or the use case ("owner.Service.Login"); empty
	// for external types.
	Name string `json:"name,omitempty"`
}

// Publishable reports whether the owner's services may publish events of
// this type through the API: only externally produced types may.
func (t EventType) Publishable() bool { return t.Producer.Kind == ProducedExternally }

// ExampleBody returns the example as the webhook body a receiver gets:
// {"id","type","subject","occurred_at","data"}.
func (t EventType) ExampleBody() string {
	body := struct {
		ID         string          `json:"id"`
		Type       string          `json:"type"`
		Subject    string          `json:"subject"`
		OccurredAt string          `json:"occurred_at"`
		Data       json.RawMessage `json:"data"`
	}{"0193b6a8-7c2e-7d4a-9f61-3c5e8a2b1d90", t.Name, t.ExampleSubject, "2026-12-01T09:30:00Z", json.RawMessage(t.Example)}
	b, err := json.MarshalIndent(body, "", "  ")
	if err != nil {
		// Example is checked to be valid JSON when the catalog is built.
		panic(fmt.Sprintf("catalog example of %s: %v", t.Name, err))
	}
	return string(b)
}

// Event type names that code refers to directly.
const (
	EventCorpusNoteChanged          = "corpus.note.changed"
	EventWebhookTest                = "webhook.test"
	EventAccessRequestCreated       = "access_request.created"
	EventAccessRequestApproved      = "access_request.approved"
	EventAccessRequestStatusChanged = "access_request.status_changed"
	EventCodeIssued                 = "code.issued"
	EventCodeRevoked                = "code.revoked"
	EventCodeRedeemed               = "code.redeemed"
	EventWritingPublished           = "writing.published"
	EventWritingUnpublished         = "writing.unpublished"
	EventVaultImported              = "vault.imported"
	EventAPIKeyIssued               = "api_key.issued"
	EventAPIKeyRevoked              = "api_key.revoked"
	EventSupplierConnected          = "supplier.connected"
	EventSupplierDisconnected       = "supplier.disconnected"
	EventSupplierActivated          = "supplier.activated"
	EventInstanceUpgradeRequested   = "instance.upgrade_requested"
	EventOwnerLogin                 = "owner.login"
	EventOwnerEmailChanged          = "owner.email_changed"
	EventOwnerRecoveryRequested     = "owner.recovery_requested"
	EventOwnerOperatorChanged       = "owner.operator_changed"
	EventIPBanAdded                 = "ip_ban.added"
	EventWebhookEndpointFailing     = "webhook.endpoint.failing"
	EventWebhookEndpointRecovered   = "webhook.endpoint.recovered"
	EventWebhookEndpointDisabled    = "webhook.endpoint.disabled"
	EventInboundMessageDeadLettered = "inbound.message.dead_lettered"
	EventInboundMessageReceived     = "inbound.message.received"
)

// catalog is built once; entries hold only strings and values, so the
// copies callers get cannot change it.
var catalog = buildCatalog(entries())

// EventTypes returns every declared event type, sorted by name.
func EventTypes() []EventType {
	return append([]EventType(nil), catalog...)
}

// WebhookEventTypes returns the declared types whose Exposure is Webhook,
// sorted by name.
func WebhookEventTypes() []EventType {
	var out []EventType
	for _, t := range EventTypes() {
		if t.Exposure == Webhook {
			out = append(out, t)
		}
	}
	return out
}

// LookupEventType returns the declared type with that name.
func LookupEventType(name string) (EventType, bool) {
	for _, t := range catalog {
		if t.Name == name {
			return t, true
		}
	}
	return EventType{}, false
}

// EventTypeNames returns the names of the declared types, sorted.
func EventTypeNames() []string {
	all := EventTypes()
	names := make([]string, len(all))
	for i, t := range all {
		names[i] = t.Name
	}
	return names
}

// ExpandGlobs returns the declared type names matched by at least one of
// patterns, sorted. The composition root uses it to hand subscriptions to the
// relay as plain data.
func ExpandGlobs(patterns []string, exposure ...Exposure) []string {
	var out []string
	for _, t := range EventTypes() {
		if len(exposure) > 0 && t.Exposure != exposure[0] {
			continue
		}
		if MatchAnyGlob(patterns, t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}
