package domain

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// countedDomains are the domains whose types the counts of this file pin. A
// domain added later passes every other check here; its types are counted
// by TestWebhookEventTypes (cmd/server), through the driver its e2e file
// registers for each.
var countedDomains = map[string]bool{"access": true, "blocks": true, "booking": true, "conversation": true,
	"corpus": true, "instance": true, "jobs": true, "microsite": true, "owner": true}

// counted keeps the names of the types of countedDomains.
func counted(names []string) []string {
	var out []string
	for _, n := range names {
		if et, ok := LookupEventType(n); ok && countedDomains[et.Domain] {
			out = append(out, n)
		}
	}
	return out
}

func webhookNames() []string {
	var out []string
	for _, et := range WebhookEventTypes() {
		out = append(out, et.Name)
	}
	return out
}

func TestCatalogDeclaresTheWebhookTypes(t *testing.T) {
	t.Parallel()
	all := EventTypes()
	seen := map[string]bool{}
	for _, et := range all {
		require.False(t, seen[et.Name], "declared twice: %s", et.Name)
		seen[et.Name] = true
		switch {
		case et.Name == EventOwnerOperatorChanged:
			require.Equal(t, Internal, et.Exposure, et.Name)
		case countedDomains[et.Domain]:
			require.Equal(t, Webhook, et.Exposure, et.Name)
		}
		require.NotEmpty(t, et.Domain, et.Name)
		require.NotEmpty(t, et.Description, et.Name)
		require.Equal(t, strings.ToLower(et.Name), et.Name)
	}
	require.Len(t, counted(webhookNames()), 44)
}

func TestExposureDefaultsToInternal(t *testing.T) {
	t.Parallel()
	var et EventType
	require.Equal(t, Internal, et.Exposure)
	require.Equal(t, "internal", et.Exposure.String())

	// A catalog entry that names no exposure builds an Internal type; only
	// `exposure: Webhook` lets a type leave.
	quiet := entry{name: "parcel.created", domain: "parcel", desc: "A parcel was created.", producer: useCase("parcel.Service.Create"),
		schema: object(req("parcel_id", uuidOf("the parcel"))), subject: "parcel/" + exOwner, example: map[string]any{"parcel_id": exOwner}}
	exposed := quiet
	exposed.name, exposed.exposure = "parcel.exposed", Webhook
	built := buildCatalog([]entry{quiet, exposed})
	require.Equal(t, "parcel.created", built[0].Name)
	require.Equal(t, Internal, built[0].Exposure, "an entry that says nothing stays inside")
	require.Equal(t, Webhook, built[1].Exposure)
}

func TestLookupAndExpand(t *testing.T) {
	t.Parallel()
	_, ok := LookupEventType("corpus.note.changed")
	require.True(t, ok)
	_, ok = LookupEventType("corpus.note.exploded")
	require.False(t, ok)
	require.Equal(t, []string{"code.issued", "code.redeemed", "code.revoked"}, ExpandGlobs([]string{"code.*"}))
	require.Len(t, ExpandGlobs([]string{"*"}), len(EventTypes()))
	require.Len(t, counted(ExpandGlobs([]string{"*"}, Webhook)), 44)
	require.Empty(t, ExpandGlobs([]string{"nothing.*"}))
}

func TestEveryTypeDeclaresProducerSchemaAndAValidExample(t *testing.T) {
	t.Parallel()
	kinds := map[ProducerKind]int{}
	for _, et := range EventTypes() {
		require.Contains(t, []ProducerKind{ProducedByTrigger, ProducedByUseCase, ProducedExternally}, et.Producer.Kind, et.Name)
		if et.Exposure == Webhook && countedDomains[et.Domain] {
			kinds[et.Producer.Kind]++
		}
		if et.Producer.Kind != ProducedExternally {
			require.NotEmpty(t, et.Producer.Name, "%s: name the trigger or use case", et.Name)
		}
		require.NotEmpty(t, et.DataSchema, et.Name)
		require.NotEmpty(t, et.ExampleSubject, et.Name)
		require.NoError(t, ValidateJSON(et.DataSchema, []byte(et.Example)), "%s: the example must validate", et.Name)
		var schema map[string]any
		require.NoError(t, json.Unmarshal([]byte(et.DataSchema), &schema), et.Name)
		require.Equal(t, "object", schema["type"], "%s: data is an object", et.Name)
		require.Equal(t, false, schema["additionalProperties"], "%s: data is closed, so it stays thin", et.Name)
		var body map[string]any
		require.NoError(t, json.Unmarshal([]byte(et.ExampleBody()), &body), et.Name)
		require.Equal(t, et.Name, body["type"])
		require.Equal(t, et.Publishable(), et.Producer.Kind == ProducedExternally)
	}
	require.Equal(t, map[ProducerKind]int{ProducedByTrigger: 1, ProducedByUseCase: 25, ProducedExternally: 18}, kinds)
}

func TestThinnessNoPersonalDataOrFreeTextInSchemas(t *testing.T) {
	t.Parallel()
	// Email addresses, IP addresses and free text leave the instance only
	// where the value is the fact itself.
	allowed := map[string]bool{EventIPBanAdded + ".ip": true, EventIPBanAdded + ".reason": true}
	for _, et := range EventTypes() {
		var schema struct {
			Properties map[string]map[string]any `json:"properties"`
		}
		require.NoError(t, json.Unmarshal([]byte(et.DataSchema), &schema))
		for name, ps := range schema.Properties {
			if ps["type"] == "boolean" {
				continue
			}
			for _, banned := range []string{"email", "ip", "note", "name", "body", "text", "title", "prefix"} {
				if name == banned || strings.HasSuffix(name, "_"+banned) {
					require.True(t, allowed[et.Name+"."+name], "%s carries %q", et.Name, name)
				}
			}
		}
	}
}

func TestValidateJSON(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object","properties":{"id":{"type":"string","format":"uuid"},"n":{"type":"integer","minimum":0},
"at":{"type":["string","null"],"format":"date-time"},"k":{"type":"string","enum":["a","b"]},"s":{"type":"string","maxLength":3},
"t":{"const":true}},"required":["id"],"additionalProperties":false}`
	for _, tc := range []struct {
		doc string
		ok  bool
	}{
		{`{"id":"0193b6a0-1d2c-7e3f-8a4b-5c6d7e8f9a01"}`, true},
		{`{"id":"0193b6a0-1d2c-7e3f-8a4b-5c6d7e8f9a01","n":3,"at":null,"k":"a","s":"abc","t":true}`, true},
		{`{"id":"0193b6a0-1d2c-7e3f-8a4b-5c6d7e8f9a01","at":"2026-12-01T09:30:00.123Z"}`, true},
		{`{}`, false},
		{`{"id":"nope"}`, false},
		{`{"id":"0193b6a0-1d2c-7e3f-8a4b-5c6d7e8f9a01","n":-1}`, false},
		{`{"id":"0193b6a0-1d2c-7e3f-8a4b-5c6d7e8f9a01","n":1.5}`, false},
		{`{"id":"0193b6a0-1d2c-7e3f-8a4b-5c6d7e8f9a01","at":"yesterday"}`, false},
		{`{"id":"0193b6a0-1d2c-7e3f-8a4b-5c6d7e8f9a01","k":"c"}`, false},
		{`{"id":"0193b6a0-1d2c-7e3f-8a4b-5c6d7e8f9a01","s":"abcd"}`, false},
		{`{"id":"0193b6a0-1d2c-7e3f-8a4b-5c6d7e8f9a01","t":false}`, false},
		{`{"id":"0193b6a0-1d2c-7e3f-8a4b-5c6d7e8f9a01","extra":1}`, false},
		{`[]`, false},
		{`{"id":"0193b6a0-1d2c-7e3f-8a4b-5c6d7e8f9a01"} {}`, false},
	} {
		err := ValidateJSON(schema, []byte(tc.doc))
		if tc.ok {
			require.NoError(t, err, tc.doc)
		} else {
			require.Error(t, err, tc.doc)
		}
	}
	require.Error(t, ValidateJSON(`{"type":"object","pattern":"x"}`, []byte(`{}`)), "unsupported keywords are refused")
}

func FuzzValidateJSON(f *testing.F) {
	f.Add(`{"booking_id":"b_1","starts_at":"2026-12-01T09:30:00Z"}`)
	f.Add(`{"a":[1,2,{"b":null}]}`)
	et, _ := LookupEventType("booking.rescheduled")
	f.Fuzz(func(t *testing.T, doc string) {
		// Never panics; a document that validates is a JSON object.
		if ValidateJSON(et.DataSchema, []byte(doc)) == nil {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(doc), &m))
		}
	})
}

func TestOperationalTypesAreWebhookExposedAndThin(t *testing.T) {
	t.Parallel()
	for _, name := range []string{EventWebhookEndpointFailing, EventWebhookEndpointRecovered, EventWebhookEndpointDisabled, EventInboundMessageDeadLettered} {
		et, ok := LookupEventType(name)
		require.True(t, ok, name)
		require.Equal(t, Webhook, et.Exposure, name)
		require.Equal(t, ProducedByUseCase, et.Producer.Kind, name)
		require.NotContains(t, et.DataSchema, "url", "%s carries no endpoint URL", name)
	}
}
