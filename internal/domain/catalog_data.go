package domain

import (
	"encoding/json"
	"fmt"
	"sort"
)

// The catalog's entries: for each type its producer, what its data holds
// (a JSON Schema) and an example. Data is thin: ids, flags, counts and
// times; an email address, an IP address or free text appears only where
// that value is the fact itself (an IP ban's address).

// prop is one property of a data schema.
type prop struct {
	name     string
	schema   map[string]any
	required bool
}

func req(name string, schema map[string]any) prop {
	return prop{name: name, schema: schema, required: true}
}
func opt(name string, schema map[string]any) prop { return prop{name: name, schema: schema} }

// object is a closed object schema: the named properties and no others.
func object(props ...prop) map[string]any {
	properties := map[string]any{}
	required := []string{}
	for _, p := range props {
		properties[p.name] = p.schema
		if p.required {
			required = append(required, p.name)
		}
	}
	return map[string]any{"type": "object", "properties": properties, "required": required, "additionalProperties": false}
}

func typed(t, desc string) map[string]any { return map[string]any{"type": t, "description": desc} }

func uuidOf(desc string) map[string]any {
	return map[string]any{"type": "string", "format": "uuid", "description": desc}
}

func timeOf(desc string) map[string]any {
	return map[string]any{"type": "string", "format": "date-time", "description": desc}
}

// extID is an identifier minted by the publishing service: any short
// string, a UUID or not.
func extID(desc string) map[string]any {
	return map[string]any{"type": "string", "minLength": 1, "maxLength": 128, "description": desc}
}

func enumOf(desc string, values ...string) map[string]any {
	return map[string]any{"type": "string", "enum": values, "description": desc}
}

func count(desc string) map[string]any {
	return map[string]any{"type": "integer", "minimum": 0, "description": desc}
}

// orNull lets a schema's value also be null.
func orNull(s map[string]any) map[string]any {
	c := map[string]any{}
	for k, v := range s {
		c[k] = v
	}
	c["type"] = []any{s["type"], "null"}
	return c
}

// entry is a catalog entry before its schema and example become JSON text.
// An entry that names no exposure is Internal: a type leaves the instance
// only where its entry says `exposure: Webhook`.
type entry struct {
	name, domain, desc string
	producer           Producer
	schema             map[string]any
	subject            string
	example            map[string]any
	exposure           Exposure
}

func useCase(name string) Producer { return Producer{Kind: ProducedByUseCase, Name: name} }

var external = Producer{Kind: ProducedExternally}

// Example identifiers, fixed so the documentation does not change between
// builds.
const (
	exOwner   = "0193b6a0-1d2c-7e3f-8a4b-5c6d7e8f9a01"
	exNote    = "0193b6a1-2e3d-7f40-9b5c-6d7e8f9a0b12"
	exParent  = "0193b6a1-2e3d-7f40-9b5c-6d7e8f9a0b00"
	exCode    = "0193b6a2-3f4e-7051-8c6d-7e8f9a0b1c23"
	exRole    = "0193b6a3-4051-7162-9d7e-8f9a0b1c2d34"
	exRequest = "0193b6a4-5162-7273-8e8f-9a0b1c2d3e45"
	exKey     = "0193b6a5-6273-7384-9f9a-0b1c2d3e4f56"
	exConn    = "0193b6a6-7384-7495-8a0b-1c2d3e4f5a67"
	exSource  = "0193b6a7-8495-75a6-9b1c-2d3e4f5a6b78"
	exMessage = "0193b6a8-95a6-76b7-8c2d-3e4f5a6b7c89"
	exSession = "0193b6a9-a6b7-77c8-9d3e-4f5a6b7c8d9a"
	exBan     = "0193b6aa-b7c8-78d9-8e4f-5a6b7c8d9eab"
	exEnd     = "0193b6ab-c8d9-79ea-9f5a-6b7c8d9eafbc"
	exTime    = "2026-12-01T09:30:00Z"
	exLater   = "2026-12-08T09:30:00Z"
)

func entries() []entry {
	codeIssued := object(
		req("code_id", uuidOf("the access code")),
		req("role_id", uuidOf("the role the code grants")),
		req("expires_at", orNull(timeOf("when the code expires; null: never"))),
		req("request_id", orNull(uuidOf("the access request the code answers; null: issued directly"))),
	)
	code := object(req("code_id", uuidOf("the access code")), req("role_id", uuidOf("the role the code grants")))
	writing := object(req("note_id", uuidOf("the writing's note")))
	apiKey := object(req("api_key_id", uuidOf("the API key (never its value, name or prefix)")))
	supplier := func(activated bool) map[string]any {
		props := []prop{
			req("connection_id", uuidOf("the supplier connection")),
			req("source_id", uuidOf("the inbound source it receives through")),
		}
		if activated {
			props = append(props, req("message_id", typed("string", "the first verified inbound message")))
		}
		return object(props...)
	}
	supplierEx := map[string]any{"connection_id": exConn, "source_id": exSource}
	page := object(req("page_id", extID("the page")), req("version", extID("the version now live")))
	booking := object(req("booking_id", extID("the booking")), req("starts_at", timeOf("when the booking starts")))
	return []entry{
		{name: EventCorpusNoteChanged, exposure: Webhook, domain: "corpus", desc: "A note was created, changed in a watched column (genre, title, slug, parent, published, body), or deleted.",
			producer: Producer{Kind: ProducedByTrigger, Name: "corpus_notes_emit (row trigger on corpus_notes)"},
			schema: object(
				req("op", enumOf("what happened to the note", "created", "updated", "deleted")),
				req("note_id", uuidOf("the note")),
				req("genre", enumOf("the note's genre", "wiki", "writing", "raw", "journal")),
				req("parent_id", orNull(uuidOf("the parent note; null at the top"))),
				req("published", typed("boolean", "whether the note is published now (false once deleted)")),
				req("was_published", typed("boolean", "whether it was published before a delete")),
				req("path_changed", typed("boolean", "the note's URI changed, and with it every descendant's")),
			), subject: "wiki://garden/notes", example: map[string]any{"op": "updated", "note_id": exNote, "genre": "wiki", "parent_id": exParent,
				"published": true, "was_published": false, "path_changed": false}},
		{name: EventWebhookTest, exposure: Webhook, domain: "owner", desc: "A test event sent to one endpoint by webhooks.send_test.",
			producer: useCase("webhook.Service.SendTest"),
			schema:   object(req("endpoint_id", uuidOf("the endpoint the test goes to")), req("test", map[string]any{"const": true, "description": "always true"})),
			subject:  "webhook:" + exEnd, example: map[string]any{"endpoint_id": exEnd, "test": true}},
		{name: EventAccessRequestCreated, exposure: Webhook, domain: "access", desc: "A visitor asked for access.",
			producer: useCase("access.Service.CreateAccessRequest"),
			schema:   object(req("request_id", uuidOf("the access request (the visitor's name and email stay inside)"))),
			subject:  "access_request/" + exRequest, example: map[string]any{"request_id": exRequest}},
		{name: EventAccessRequestApproved, exposure: Webhook, domain: "access", desc: "The owner approved an access request and a code was issued.",
			producer: useCase("access.Service.ApproveRequest"),
			schema:   object(req("request_id", uuidOf("the access request")), req("code_id", uuidOf("the code issued for it"))),
			subject:  "access_request/" + exRequest, example: map[string]any{"request_id": exRequest, "code_id": exCode}},
		{name: EventAccessRequestStatusChanged, exposure: Webhook, domain: "access", desc: "An access request changed status.",
			producer: useCase("access.Service.ApproveRequest, access.Service.RejectRequest"),
			schema: object(req("request_id", uuidOf("the access request")),
				req("from", enumOf("the previous status", "pending", "approved", "rejected")),
				req("to", enumOf("the new status", "pending", "approved", "rejected"))),
			subject: "access_request/" + exRequest, example: map[string]any{"request_id": exRequest, "from": "pending", "to": "approved"}},
		{name: EventCodeIssued, exposure: Webhook, domain: "access", desc: "An access code was issued.",
			producer: useCase("access.Service.IssueCode"), schema: codeIssued,
			subject: "code/" + exCode, example: map[string]any{"code_id": exCode, "role_id": exRole, "expires_at": exLater, "request_id": nil}},
		{name: EventCodeRevoked, exposure: Webhook, domain: "access", desc: "An access code was revoked.",
			producer: useCase("access.Service.RevokeCode"), schema: code, subject: "code/" + exCode, example: map[string]any{"code_id": exCode, "role_id": exRole}},
		{name: EventCodeRedeemed, exposure: Webhook, domain: "access", desc: "A visitor redeemed an access code.",
			producer: useCase("access.Service.Redeem"), schema: code, subject: "code/" + exCode, example: map[string]any{"code_id": exCode, "role_id": exRole}},
		{name: "conversation.started", exposure: Webhook, domain: "conversation", desc: "A conversation started.", producer: external,
			schema:  object(req("conversation_id", extID("the conversation"))),
			subject: "conversation://c_8f2k", example: map[string]any{"conversation_id": "c_8f2k"}},
		{name: "conversation.message", exposure: Webhook, domain: "conversation", desc: "A message was added to a conversation.", producer: external,
			schema: object(req("conversation_id", extID("the conversation")), req("message_id", extID("the message (its text stays with the service)")),
				opt("role", enumOf("who wrote it", "visitor", "owner", "assistant"))),
			subject: "conversation://c_8f2k/messages/m_31", example: map[string]any{"conversation_id": "c_8f2k", "message_id": "m_31", "role": "visitor"}},
		{name: "conversation.pruned", exposure: Webhook, domain: "conversation", desc: "Old conversations were pruned.", producer: external,
			schema:  object(req("pruned", count("how many conversations were removed")), req("before", timeOf("conversations older than this were removed"))),
			subject: "conversation://", example: map[string]any{"pruned": 12, "before": exTime}},
		{name: "ghost.accepted", exposure: Webhook, domain: "conversation", desc: "A ghost-written reply was accepted.", producer: external,
			schema:  object(req("conversation_id", extID("the conversation")), req("message_id", extID("the accepted reply"))),
			subject: "conversation://c_8f2k/messages/m_32", example: map[string]any{"conversation_id": "c_8f2k", "message_id": "m_32"}},
		{name: "booking.created", exposure: Webhook, domain: "booking", desc: "A booking was made.", producer: external, schema: booking,
			subject: "booking://b_41", example: map[string]any{"booking_id": "b_41", "starts_at": exLater}},
		{name: "booking.cancelled", exposure: Webhook, domain: "booking", desc: "A booking was cancelled.", producer: external,
			schema:  object(req("booking_id", extID("the booking"))),
			subject: "booking://b_41", example: map[string]any{"booking_id": "b_41"}},
		{name: "booking.rescheduled", exposure: Webhook, domain: "booking", desc: "A booking was moved.", producer: external,
			schema:  object(req("booking_id", extID("the booking")), req("starts_at", timeOf("the new start")), req("previous_starts_at", timeOf("the start before the move"))),
			subject: "booking://b_41", example: map[string]any{"booking_id": "b_41", "starts_at": exLater, "previous_starts_at": exTime}},
		{name: "application.committed", exposure: Webhook, domain: "jobs", desc: "A job application was committed.", producer: external,
			schema:  object(req("application_id", extID("the application")), req("job_id", extID("the job applied to"))),
			subject: "jobs://applications/a_7", example: map[string]any{"application_id": "a_7", "job_id": "j_193"}},
		{name: "jobs.fetched", exposure: Webhook, domain: "jobs", desc: "Job listings were fetched.", producer: external,
			schema:  object(req("fetched", count("listings fetched")), opt("new", count("listings not seen before"))),
			subject: "jobs://listings", example: map[string]any{"fetched": 40, "new": 3}},
		{name: EventWritingPublished, exposure: Webhook, domain: "corpus", desc: "A writing was published.",
			producer: useCase("corpus.Service (note create, update, publish)"), schema: writing, subject: "writing://an-essay", example: map[string]any{"note_id": exNote}},
		{name: EventWritingUnpublished, exposure: Webhook, domain: "corpus", desc: "A writing was unpublished.",
			producer: useCase("corpus.Service (note update, unpublish, delete)"), schema: writing, subject: "writing://an-essay", example: map[string]any{"note_id": exNote}},
		{name: EventVaultImported, exposure: Webhook, domain: "corpus", desc: "A vault import committed many notes at once.",
			producer: useCase("corpus.Service.Import"),
			schema: object(req("notes", count("notes created")), req("published", count("of which published")),
				req("parent_id", orNull(uuidOf("the note they were imported under; null at the top")))),
			subject: "vault", example: map[string]any{"notes": 42, "published": 30, "parent_id": nil}},
		{name: "microsite.build.settled", exposure: Webhook, domain: "microsite", desc: "A microsite build finished.", producer: external,
			schema:  object(req("build_id", extID("the build")), req("outcome", enumOf("how it ended", "succeeded", "failed"))),
			subject: "microsite://builds/bd_9", example: map[string]any{"build_id": "bd_9", "outcome": "succeeded"}},
		{name: "page.promoted_live", exposure: Webhook, domain: "microsite", desc: "A page was promoted live.", producer: external, schema: page,
			subject: "microsite://pages/p_home", example: map[string]any{"page_id": "p_home", "version": "v12"}},
		{name: "page.rolled_back", exposure: Webhook, domain: "microsite", desc: "A page was rolled back.", producer: external, schema: page,
			subject: "microsite://pages/p_home", example: map[string]any{"page_id": "p_home", "version": "v11"}},
		{name: "page.unpublished", exposure: Webhook, domain: "microsite", desc: "A page was unpublished.", producer: external,
			schema:  object(req("page_id", extID("the page"))),
			subject: "microsite://pages/p_home", example: map[string]any{"page_id": "p_home"}},
		{name: "microsite.store.doc_inserted", exposure: Webhook, domain: "microsite", desc: "A document was inserted into a microsite store.", producer: external,
			schema:  object(req("store", extID("the store")), req("doc_id", extID("the document (its content stays in the store)"))),
			subject: "microsite://stores/guestbook/docs/d_5", example: map[string]any{"store": "guestbook", "doc_id": "d_5"}},
		{name: EventAPIKeyIssued, exposure: Webhook, domain: "owner", desc: "An API key was issued.",
			producer: useCase("owner.Service.IssueAPIKey"), schema: apiKey, subject: "api_key/" + exKey, example: map[string]any{"api_key_id": exKey}},
		{name: EventAPIKeyRevoked, exposure: Webhook, domain: "owner", desc: "An API key was revoked.",
			producer: useCase("owner.Service.RevokeAPIKey"), schema: apiKey, subject: "api_key/" + exKey, example: map[string]any{"api_key_id": exKey}},
		{name: EventSupplierConnected, exposure: Webhook, domain: "owner", desc: "A supplier connection was created.",
			producer: useCase("supplier.Service.Create"), schema: supplier(false), subject: "supplier://" + exConn, example: supplierEx},
		{name: EventSupplierDisconnected, exposure: Webhook, domain: "owner", desc: "A supplier connection was removed.",
			producer: useCase("supplier.Service.Delete"), schema: supplier(false), subject: "supplier://" + exConn, example: supplierEx},
		{name: EventSupplierActivated, exposure: Webhook, domain: "owner", desc: "A supplier connection received its first verified message.",
			producer: useCase("supplier.Service.HandleInbound"), schema: supplier(true), subject: "supplier://" + exConn,
			example: map[string]any{"connection_id": exConn, "source_id": exSource, "message_id": exMessage}},
		{name: "block.installed", exposure: Webhook, domain: "blocks", desc: "A block was installed.", producer: external,
			schema:  object(req("block_id", extID("the block")), req("version", extID("the version installed"))),
			subject: "blocks://calendar", example: map[string]any{"block_id": "calendar", "version": "1.4.0"}},
		{name: "block.failed", exposure: Webhook, domain: "blocks", desc: "A block failed to install.", producer: external,
			schema: object(req("block_id", extID("the block")), req("version", extID("the version that failed")),
				opt("error_code", extID("a short machine-readable reason"))),
			subject: "blocks://calendar", example: map[string]any{"block_id": "calendar", "version": "1.4.1", "error_code": "checksum_mismatch"}},
		{name: "gas.exhausted", exposure: Webhook, domain: "instance", desc: "The instance ran out of gas.", producer: external,
			schema:  object(req("period", extID("the billing period whose allowance ran out"))),
			subject: "instance://gas", example: map[string]any{"period": "2026-12"}},
		{name: "gas.refilled", exposure: Webhook, domain: "instance", desc: "The instance's gas was refilled.", producer: external,
			schema:  object(req("period", extID("the billing period")), req("amount", count("units added"))),
			subject: "instance://gas", example: map[string]any{"period": "2026-12", "amount": 100000}},
		{name: EventInstanceUpgradeRequested, exposure: Webhook, domain: "instance", desc: "The owner requested an instance upgrade.",
			producer: useCase("owner.Service.RequestUpgrade"),
			schema: object(req("owner_id", uuidOf("the owner")), req("requested_at", timeOf("when")),
				req("has_note", typed("boolean", "whether the owner wrote a note (the note stays inside)"))),
			subject: "instance", example: map[string]any{"owner_id": exOwner, "requested_at": exTime, "has_note": true}},
		{name: EventOwnerLogin, exposure: Webhook, domain: "owner", desc: "The owner logged in.",
			producer: useCase("owner.Service.Login"),
			schema:   object(req("owner_id", uuidOf("the owner")), req("session_id", uuidOf("the new session (its client address stays inside)"))),
			subject:  "owner/" + exOwner, example: map[string]any{"owner_id": exOwner, "session_id": exSession}},
		{name: EventOwnerEmailChanged, exposure: Webhook, domain: "owner", desc: "The owner's email changed.",
			producer: useCase("owner.Service.ChangeEmail"),
			schema:   object(req("owner_id", uuidOf("the owner (the addresses stay inside)"))),
			subject:  "owner/" + exOwner, example: map[string]any{"owner_id": exOwner}},
		{name: EventOwnerRecoveryRequested, exposure: Webhook, domain: "owner", desc: "Account recovery was requested.",
			producer: useCase("owner.Service.RequestRecovery"),
			schema:   object(req("owner_id", uuidOf("the owner")), req("expires_at", timeOf("when the recovery link expires"))),
			subject:  "owner/" + exOwner, example: map[string]any{"owner_id": exOwner, "expires_at": exLater}},
		{name: EventIPBanAdded, exposure: Webhook, domain: "owner", desc: "An IP address was banned after repeated abuse.",
			producer: useCase("owner.Service.Login (a failed login past the ban limit)"),
			schema: object(req("ip_ban_id", uuidOf("the ban")), req("ip", typed("string", "the banned address: the fact itself")),
				req("reason", typed("string", "why, as the server states it")), req("expires_at", timeOf("when the ban lapses"))),
			subject: "ip_ban/" + exBan, example: map[string]any{"ip_ban_id": exBan, "ip": "203.0.113.7", "reason": "10 failed logins within 15m0s", "expires_at": exLater}},
		// Who may use River's UI is the instance's own business: Internal.
		{name: EventOwnerOperatorChanged, domain: "owner", desc: "The operator role (River's UI) was granted to or revoked from an owner.",
			producer: useCase("owner.Service.SetOperator"),
			schema:   object(req("owner_id", uuidOf("the owner")), req("operator", typed("boolean", "whether the owner now holds the operator role"))),
			subject:  "owner/" + exOwner, example: map[string]any{"owner_id": exOwner, "operator": true}},
		{name: EventWebhookEndpointFailing, exposure: Webhook, domain: "owner", desc: "A webhook endpoint failed a delivery after its last success: it is failing now. Never delivered to that endpoint.",
			producer: useCase("webhook.RecordHealth (the finish of a delivery)"),
			schema:   object(req("endpoint_id", uuidOf("the failing endpoint")), req("failing_since", timeOf("the failure that started the streak"))),
			subject:  "webhook:" + exEnd, example: map[string]any{"endpoint_id": exEnd, "failing_since": exTime}},
		{name: EventWebhookEndpointRecovered, exposure: Webhook, domain: "owner", desc: "A failing webhook endpoint accepted a delivery again. Never delivered to that endpoint.",
			producer: useCase("webhook.RecordHealth (the finish of a delivery)"),
			schema:   object(req("endpoint_id", uuidOf("the endpoint")), req("recovered_at", timeOf("the success that ended the failing streak"))),
			subject:  "webhook:" + exEnd, example: map[string]any{"endpoint_id": exEnd, "recovered_at": exLater}},
		{name: EventWebhookEndpointDisabled, exposure: Webhook, domain: "owner", desc: "A webhook endpoint was disabled after failing continuously for 5 days; it gets no deliveries until the owner enables it. Never delivered to that endpoint.",
			producer: useCase("webhook.RecordHealth (the finish of a delivery)"),
			schema: object(req("endpoint_id", uuidOf("the endpoint")), req("failing_since", timeOf("when the streak began")),
				req("reason", typed("string", "why, as the server states it"))),
			subject: "webhook:" + exEnd, example: map[string]any{"endpoint_id": exEnd, "failing_since": exTime,
				"reason": "deliveries failed continuously for 5 days; last: HTTP 503"}},
		{name: EventInboundMessageDeadLettered, exposure: Webhook, domain: "owner", desc: "An inbound message ran out of attempts or failed permanently and is a dead letter now, waiting for a replay.",
			producer: useCase("inbound.Processor.Process"),
			schema: object(req("source_id", uuidOf("the inbound source")), req("message_id", uuidOf("the inbox message (its body and error stay inside)")),
				req("attempts", count("attempts made"))),
			subject: "inbound:" + exSource, example: map[string]any{"source_id": exSource, "message_id": exMessage, "attempts": 5}},
		{name: EventInboundMessageReceived, exposure: Webhook, domain: "owner", desc: "An inbound source accepted a verified message (a duplicate or a refused request records none). The body stays inside: read it with inbound_sources.message.",
			producer: useCase("inbound.Gateway.Receive (the transaction that admits the message)"),
			schema: object(req("source_id", uuidOf("the inbound source")), req("message_id", uuidOf("the inbox message; inbound_sources.message returns its body")),
				opt("provider_type", typed("string", "the provider's event type where the source's kind carries one: Stripe's body type, GitHub's X-GitHub-Event, Standard Webhooks' body type, hmac's event type header")),
				req("received_at", timeOf("when the gateway accepted it"))),
			subject: "inbound:" + exSource, example: map[string]any{"source_id": exSource, "message_id": exMessage, "provider_type": "invoice.paid", "received_at": exTime}},
		// A new domain's entries go above this line (cmd/scaffold writes them here).
	}
}

// buildCatalog turns the entries into EventTypes, sorted by name. A schema
// or example that cannot be encoded is a programming error caught by every
// test that loads the package.
func buildCatalog(es []entry) []EventType {
	out := make([]EventType, 0, len(es))
	for _, e := range es {
		schema, err := json.Marshal(e.schema)
		if err != nil {
			panic(fmt.Sprintf("catalog schema of %s: %v", e.name, err))
		}
		example, err := json.Marshal(e.example)
		if err != nil {
			panic(fmt.Sprintf("catalog example of %s: %v", e.name, err))
		}
		out = append(out, EventType{
			Name: e.name, Exposure: e.exposure, Domain: e.domain, Description: e.desc, Producer: e.producer,
			DataSchema: string(schema), ExampleSubject: e.subject, Example: string(example),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
