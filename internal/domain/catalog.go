package domain

import "sort"

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
)

// catalogEntries returns the catalog. It is built on every call so no caller
// can mutate a shared copy.
func catalogEntries() []EventType {
	w := func(name, domain, desc string) EventType {
		return EventType{Name: name, Exposure: Webhook, Domain: domain, Description: desc}
	}
	return []EventType{
		w(EventCorpusNoteChanged, "corpus", "A note was created, changed in a watched column, or deleted (row trigger)."),
		w(EventWebhookTest, "owner", "A test event sent to one endpoint by webhooks.send_test."),
		w(EventAccessRequestCreated, "access", "A visitor asked for access."),
		w(EventAccessRequestApproved, "access", "The owner approved an access request and a code was issued."),
		w(EventAccessRequestStatusChanged, "access", "An access request changed status."),
		w(EventCodeIssued, "access", "An access code was issued."),
		w(EventCodeRevoked, "access", "An access code was revoked."),
		w(EventCodeRedeemed, "access", "A visitor redeemed an access code."),
		w("conversation.started", "conversation", "A conversation started."),
		w("conversation.message", "conversation", "A message was added to a conversation."),
		w("conversation.pruned", "conversation", "Old conversations were pruned."),
		w("ghost.accepted", "conversation", "A ghost-written reply was accepted."),
		w("booking.created", "booking", "A booking was made."),
		w("booking.cancelled", "booking", "A booking was cancelled."),
		w("booking.rescheduled", "booking", "A booking was moved."),
		w("application.committed", "jobs", "A job application was committed."),
		w("jobs.fetched", "jobs", "Job listings were fetched."),
		w(EventWritingPublished, "corpus", "A writing was published."),
		w(EventWritingUnpublished, "corpus", "A writing was unpublished."),
		w(EventVaultImported, "corpus", "A vault import committed many notes at once."),
		w("microsite.build.settled", "microsite", "A microsite build finished."),
		w("page.promoted_live", "microsite", "A page was promoted live."),
		w("page.rolled_back", "microsite", "A page was rolled back."),
		w("page.unpublished", "microsite", "A page was unpublished."),
		w("microsite.store.doc_inserted", "microsite", "A document was inserted into a microsite store."),
		w(EventAPIKeyIssued, "owner", "An API key was issued."),
		w(EventAPIKeyRevoked, "owner", "An API key was revoked."),
		w(EventSupplierConnected, "owner", "A supplier connection was created."),
		w(EventSupplierDisconnected, "owner", "A supplier connection was removed."),
		w(EventSupplierActivated, "owner", "A supplier connection received its first verified message."),
		w("block.installed", "blocks", "A block was installed."),
		w("block.failed", "blocks", "A block failed to install."),
		w("gas.exhausted", "instance", "The instance ran out of gas."),
		w("gas.refilled", "instance", "The instance's gas was refilled."),
		w(EventInstanceUpgradeRequested, "instance", "The owner requested an instance upgrade."),
		w(EventOwnerLogin, "owner", "The owner logged in."),
		w(EventOwnerEmailChanged, "owner", "The owner's email changed."),
		w(EventOwnerRecoveryRequested, "owner", "Account recovery was requested."),
		// Internal: who may use River's UI is the instance's own business.
		{Name: EventOwnerOperatorChanged, Exposure: Internal, Domain: "owner", Description: "The operator role (River's UI) was granted to or revoked from an owner."},
		w(EventIPBanAdded, "owner", "An IP address was banned after repeated abuse."),
	}
}

// EventTypes returns every declared event type, sorted by name.
func EventTypes() []EventType {
	all := catalogEntries()
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
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
	for _, t := range catalogEntries() {
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
