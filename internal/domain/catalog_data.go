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
type entry struct {
	name, domain, desc string
	producer           Producer
	schema             map[string]any
	subject            string
	example            map[string]any
}

// internalTypes stay inside the instance (Exposure Internal); every other
// entry may leave it as a webhook.
var internalTypes = map[string]bool{
	// Who may use River's UI is the instance's own business.
	EventOwnerOperatorChanged: true,
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
		{EventCorpusNoteChanged, "corpus", "A note was created, changed in a watched column (genre, title, slug, parent, published, body), or deleted.",
			Producer{Kind: ProducedByTrigger, Name: "corpus_notes_emit (row trigger on corpus_notes)"},
			object(
				req("op", enumOf("what happened to the note", "created", "updated", "deleted")),
				req("note_id", uuidOf("the note")),
				req("genre", enumOf("the note's genre", "wiki", "writing", "raw", "journal")),
				req("parent_id", orNull(uuidOf("the parent note; null at the top"))),
				req("published", typed("boolean", "whether the note is published now (false once deleted)")),
				req("was_published", typed("boolean", "whether it was published before a delete")),
				req("path_changed", typed("boolean", "the note's URI changed, and with it every descendant's")),
			), "wiki://garden/notes", map[string]any{"op": "updated", "note_id": exNote, "genre": "wiki", "parent_id": exParent,
				"published": true, "was_published": false, "path_changed": false}},
		{EventWebhookTest, "owner", "A test event sent to one endpoint by webhooks.send_test.",
			useCase("webhooks.Service.SendTest"),
			object(req("endpoint_id", uuidOf("the endpoint the test goes to")), req("test", map[string]any{"const": true, "description": "always true"})),
			"webhook:" + exEnd, map[string]any{"endpoint_id": exEnd, "test": true}},
		{EventAccessRequestCreated, "access", "A visitor asked for access.",
			useCase("access.Service.CreateAccessRequest"),
			object(req("request_id", uuidOf("the access request (the visitor's name and email stay inside)"))),
			"access_request/" + exRequest, map[string]any{"request_id": exRequest}},
		{EventAccessRequestApproved, "access", "The owner approved an access request and a code was issued.",
			useCase("access.Service.ApproveRequest"),
			object(req("request_id", uuidOf("the access request")), req("code_id", uuidOf("the code issued for it"))),
			"access_request/" + exRequest, map[string]any{"request_id": exRequest, "code_id": exCode}},
		{EventAccessRequestStatusChanged, "access", "An access request changed status.",
			useCase("access.Service.ApproveRequest, access.Service.RejectRequest"),
			object(req("request_id", uuidOf("the access request")),
				req("from", enumOf("the previous status", "pending", "approved", "rejected")),
				req("to", enumOf("the new status", "pending", "approved", "rejected"))),
			"access_request/" + exRequest, map[string]any{"request_id": exRequest, "from": "pending", "to": "approved"}},
		{EventCodeIssued, "access", "An access code was issued.",
			useCase("access.Service.IssueCode"), codeIssued,
			"code/" + exCode, map[string]any{"code_id": exCode, "role_id": exRole, "expires_at": exLater, "request_id": nil}},
		{EventCodeRevoked, "access", "An access code was revoked.",
			useCase("access.Service.RevokeCode"), code, "code/" + exCode, map[string]any{"code_id": exCode, "role_id": exRole}},
		{EventCodeRedeemed, "access", "A visitor redeemed an access code.",
			useCase("access.Service.Redeem"), code, "code/" + exCode, map[string]any{"code_id": exCode, "role_id": exRole}},
		{"conversation.started", "conversation", "A conversation started.", external,
			object(req("conversation_id", extID("the conversation"))),
			"conversation://c_8f2k", map[string]any{"conversation_id": "c_8f2k"}},
		{"conversation.message", "conversation", "A message was added to a conversation.", external,
			object(req("conversation_id", extID("the conversation")), req("message_id", extID("the message (its text stays with the service)")),
				opt("role", enumOf("who wrote it", "visitor", "owner", "assistant"))),
			"conversation://c_8f2k/messages/m_31", map[string]any{"conversation_id": "c_8f2k", "message_id": "m_31", "role": "visitor"}},
		{"conversation.pruned", "conversation", "Old conversations were pruned.", external,
			object(req("pruned", count("how many conversations were removed")), req("before", timeOf("conversations older than this were removed"))),
			"conversation://", map[string]any{"pruned": 12, "before": exTime}},
		{"ghost.accepted", "conversation", "A ghost-written reply was accepted.", external,
			object(req("conversation_id", extID("the conversation")), req("message_id", extID("the accepted reply"))),
			"conversation://c_8f2k/messages/m_32", map[string]any{"conversation_id": "c_8f2k", "message_id": "m_32"}},
		{"booking.created", "booking", "A booking was made.", external, booking,
			"booking://b_41", map[string]any{"booking_id": "b_41", "starts_at": exLater}},
		{"booking.cancelled", "booking", "A booking was cancelled.", external,
			object(req("booking_id", extID("the booking"))),
			"booking://b_41", map[string]any{"booking_id": "b_41"}},
		{"booking.rescheduled", "booking", "A booking was moved.", external,
			object(req("booking_id", extID("the booking")), req("starts_at", timeOf("the new start")), req("previous_starts_at", timeOf("the start before the move"))),
			"booking://b_41", map[string]any{"booking_id": "b_41", "starts_at": exLater, "previous_starts_at": exTime}},
		{"application.committed", "jobs", "A job application was committed.", external,
			object(req("application_id", extID("the application")), req("job_id", extID("the job applied to"))),
			"jobs://applications/a_7", map[string]any{"application_id": "a_7", "job_id": "j_193"}},
		{"jobs.fetched", "jobs", "Job listings were fetched.", external,
			object(req("fetched", count("listings fetched")), opt("new", count("listings not seen before"))),
			"jobs://listings", map[string]any{"fetched": 40, "new": 3}},
		{EventWritingPublished, "corpus", "A writing was published.",
			useCase("corpus.Service (note create, update, publish)"), writing, "writing://an-essay", map[string]any{"note_id": exNote}},
		{EventWritingUnpublished, "corpus", "A writing was unpublished.",
			useCase("corpus.Service (note update, unpublish, delete)"), writing, "writing://an-essay", map[string]any{"note_id": exNote}},
		{EventVaultImported, "corpus", "A vault import committed many notes at once.",
			useCase("corpus.Service.Import"),
			object(req("notes", count("notes created")), req("published", count("of which published")),
				req("parent_id", orNull(uuidOf("the note they were imported under; null at the top")))),
			"vault", map[string]any{"notes": 42, "published": 30, "parent_id": nil}},
		{"microsite.build.settled", "microsite", "A microsite build finished.", external,
			object(req("build_id", extID("the build")), req("outcome", enumOf("how it ended", "succeeded", "failed"))),
			"microsite://builds/bd_9", map[string]any{"build_id": "bd_9", "outcome": "succeeded"}},
		{"page.promoted_live", "microsite", "A page was promoted live.", external, page,
			"microsite://pages/p_home", map[string]any{"page_id": "p_home", "version": "v12"}},
		{"page.rolled_back", "microsite", "A page was rolled back.", external, page,
			"microsite://pages/p_home", map[string]any{"page_id": "p_home", "version": "v11"}},
		{"page.unpublished", "microsite", "A page was unpublished.", external,
			object(req("page_id", extID("the page"))),
			"microsite://pages/p_home", map[string]any{"page_id": "p_home"}},
		{"microsite.store.doc_inserted", "microsite", "A document was inserted into a microsite store.", external,
			object(req("store", extID("the store")), req("doc_id", extID("the document (its content stays in the store)"))),
			"microsite://stores/guestbook/docs/d_5", map[string]any{"store": "guestbook", "doc_id": "d_5"}},
		{EventAPIKeyIssued, "owner", "An API key was issued.",
			useCase("owner.Service.IssueAPIKey"), apiKey, "api_key/" + exKey, map[string]any{"api_key_id": exKey}},
		{EventAPIKeyRevoked, "owner", "An API key was revoked.",
			useCase("owner.Service.RevokeAPIKey"), apiKey, "api_key/" + exKey, map[string]any{"api_key_id": exKey}},
		{EventSupplierConnected, "owner", "A supplier connection was created.",
			useCase("supplier.Service.Create"), supplier(false), "supplier://" + exConn, supplierEx},
		{EventSupplierDisconnected, "owner", "A supplier connection was removed.",
			useCase("supplier.Service.Delete"), supplier(false), "supplier://" + exConn, supplierEx},
		{EventSupplierActivated, "owner", "A supplier connection received its first verified message.",
			useCase("supplier.Service.HandleInbound"), supplier(true), "supplier://" + exConn,
			map[string]any{"connection_id": exConn, "source_id": exSource, "message_id": exMessage}},
		{"block.installed", "blocks", "A block was installed.", external,
			object(req("block_id", extID("the block")), req("version", extID("the version installed"))),
			"blocks://calendar", map[string]any{"block_id": "calendar", "version": "1.4.0"}},
		{"block.failed", "blocks", "A block failed to install.", external,
			object(req("block_id", extID("the block")), req("version", extID("the version that failed")),
				opt("error_code", extID("a short machine-readable reason"))),
			"blocks://calendar", map[string]any{"block_id": "calendar", "version": "1.4.1", "error_code": "checksum_mismatch"}},
		{"gas.exhausted", "instance", "The instance ran out of gas.", external,
			object(req("period", extID("the billing period whose allowance ran out"))),
			"instance://gas", map[string]any{"period": "2026-12"}},
		{"gas.refilled", "instance", "The instance's gas was refilled.", external,
			object(req("period", extID("the billing period")), req("amount", count("units added"))),
			"instance://gas", map[string]any{"period": "2026-12", "amount": 100000}},
		{EventInstanceUpgradeRequested, "instance", "The owner requested an instance upgrade.",
			useCase("owner.Service.RequestUpgrade"),
			object(req("owner_id", uuidOf("the owner")), req("requested_at", timeOf("when")),
				req("has_note", typed("boolean", "whether the owner wrote a note (the note stays inside)"))),
			"instance", map[string]any{"owner_id": exOwner, "requested_at": exTime, "has_note": true}},
		{EventOwnerLogin, "owner", "The owner logged in.",
			useCase("owner.Service.Login"),
			object(req("owner_id", uuidOf("the owner")), req("session_id", uuidOf("the new session (its client address stays inside)"))),
			"owner/" + exOwner, map[string]any{"owner_id": exOwner, "session_id": exSession}},
		{EventOwnerEmailChanged, "owner", "The owner's email changed.",
			useCase("owner.Service.ChangeEmail"),
			object(req("owner_id", uuidOf("the owner (the addresses stay inside)"))),
			"owner/" + exOwner, map[string]any{"owner_id": exOwner}},
		{EventOwnerRecoveryRequested, "owner", "Account recovery was requested.",
			useCase("owner.Service.RequestRecovery"),
			object(req("owner_id", uuidOf("the owner")), req("expires_at", timeOf("when the recovery link expires"))),
			"owner/" + exOwner, map[string]any{"owner_id": exOwner, "expires_at": exLater}},
		{EventIPBanAdded, "owner", "An IP address was banned after repeated abuse.",
			useCase("owner.Service.Login (a failed login past the ban limit)"),
			object(req("ip_ban_id", uuidOf("the ban")), req("ip", typed("string", "the banned address: the fact itself")),
				req("reason", typed("string", "why, as the server states it")), req("expires_at", timeOf("when the ban lapses"))),
			"ip_ban/" + exBan, map[string]any{"ip_ban_id": exBan, "ip": "203.0.113.7", "reason": "10 failed logins within 15m0s", "expires_at": exLater}},
		{EventOwnerOperatorChanged, "owner", "The operator role (River's UI) was granted to or revoked from an owner.",
			useCase("owner.Service.SetOperator"),
			object(req("owner_id", uuidOf("the owner")), req("operator", typed("boolean", "whether the owner now holds the operator role"))),
			"owner/" + exOwner, map[string]any{"owner_id": exOwner, "operator": true}},
		{EventWebhookEndpointFailing, "owner", "A webhook endpoint failed a delivery after its last success: it is failing now. Never delivered to that endpoint.",
			useCase("webhook.RecordHealth (the finish of a delivery)"),
			object(req("endpoint_id", uuidOf("the failing endpoint")), req("failing_since", timeOf("the failure that started the streak"))),
			"webhook:" + exEnd, map[string]any{"endpoint_id": exEnd, "failing_since": exTime}},
		{EventWebhookEndpointRecovered, "owner", "A failing webhook endpoint accepted a delivery again. Never delivered to that endpoint.",
			useCase("webhook.RecordHealth (the finish of a delivery)"),
			object(req("endpoint_id", uuidOf("the endpoint")), req("recovered_at", timeOf("the success that ended the failing streak"))),
			"webhook:" + exEnd, map[string]any{"endpoint_id": exEnd, "recovered_at": exLater}},
		{EventWebhookEndpointDisabled, "owner", "A webhook endpoint was disabled after failing continuously for 5 days; it gets no deliveries until the owner enables it. Never delivered to that endpoint.",
			useCase("webhook.RecordHealth (the finish of a delivery)"),
			object(req("endpoint_id", uuidOf("the endpoint")), req("failing_since", timeOf("when the streak began")),
				req("reason", typed("string", "why, as the server states it"))),
			"webhook:" + exEnd, map[string]any{"endpoint_id": exEnd, "failing_since": exTime,
				"reason": "deliveries failed continuously for 120h0m0s; last: HTTP 503"}},
		{EventInboundMessageDeadLettered, "owner", "An inbound message ran out of attempts or failed permanently and is a dead letter now, waiting for a replay.",
			useCase("inbound.Processor.Process"),
			object(req("source_id", uuidOf("the inbound source")), req("message_id", uuidOf("the inbox message (its body and error stay inside)")),
				req("attempts", count("attempts made"))),
			"inbound:" + exSource, map[string]any{"source_id": exSource, "message_id": exMessage, "attempts": 5}},
		{EventInboundMessageReceived, "owner", "An inbound source accepted a verified message (a duplicate or a refused request records none). The body stays inside: read it with inbound_sources.message.",
			useCase("inbound.Gateway.Receive (the transaction that admits the message)"),
			object(req("source_id", uuidOf("the inbound source")), req("message_id", uuidOf("the inbox message; inbound_sources.message returns its body")),
				opt("provider_type", typed("string", "the provider's event type where the source's kind carries one: Stripe's body type, GitHub's X-GitHub-Event, Standard Webhooks' body type, hmac's event type header")),
				req("received_at", timeOf("when the gateway accepted it"))),
			"inbound:" + exSource, map[string]any{"source_id": exSource, "message_id": exMessage, "provider_type": "invoice.paid", "received_at": exTime}},
		// A new domain's entries go above this line (cmd/scaffold writes them here).
	}
}

// buildCatalog turns the entries into EventTypes, sorted by name. A schema
// or example that cannot be encoded is a programming error caught by every
// test that loads the package.
func buildCatalog() []EventType {
	es := entries()
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
		exposure := Webhook
		if internalTypes[e.name] {
			exposure = Internal
		}
		out = append(out, EventType{
			Name: e.name, Exposure: exposure, Domain: e.domain, Description: e.desc, Producer: e.producer,
			DataSchema: string(schema), ExampleSubject: e.subject, Example: string(example),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
