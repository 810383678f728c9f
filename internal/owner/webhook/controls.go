package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/filter"
)

// Signing schemes an endpoint chooses at creation.
const (
	// SigningHMAC signs v1 entries with a "whsec_" secret the receiver
	// shares (the default).
	SigningHMAC = "hmac-sha256"
	// SigningEd25519 signs v1a entries with a sealed "whsk_" private key;
	// the receiver holds only its "whpk_" public key.
	SigningEd25519 = "ed25519"
)

// Error codes of the endpoint controls.
const (
	CodeInvalidFilter  = "INVALID_FILTER"
	CodeInvalidSigning = "INVALID_SIGNING"
)

// ValidateSigning checks a signing choice: "" is SigningHMAC.
func ValidateSigning(s string) (string, error) {
	switch s {
	case "", SigningHMAC:
		return SigningHMAC, nil
	case SigningEd25519:
		return SigningEd25519, nil
	}
	return "", domain.Validation(CodeInvalidSigning, fmt.Sprintf("signing must be %q or %q", SigningHMAC, SigningEd25519)).WithField("signing")
}

// ValidateFilter checks a payload filter (see package filter for its
// language) against the endpoint's event-type globs: every data field it
// names must be a field of at least one subscribed type's data schema, so
// a typo is refused rather than filtering out every event. It returns the
// filter as compact JSON text, nil for no filter (null or {}). A filter at
// fault is INVALID_FILTER, its field "filter.<path>" when a path is.
func ValidateFilter(raw json.RawMessage, eventTypes []string) (json.RawMessage, error) {
	f, err := filter.Parse(raw)
	if err != nil {
		field := "filter"
		msg := err.Error()
		if fe, ok := err.(*filter.Error); ok && fe.Field != "" {
			field += "." + fe.Field
		}
		return nil, domain.Validation(CodeInvalidFilter, msg).WithField(field)
	}
	if f == nil {
		return nil, nil
	}
	types := domain.ExpandGlobs(eventTypes, domain.Webhook)
	for _, path := range f.Fields() {
		keys, ok := strings.CutPrefix(path, "data.")
		if !ok {
			continue
		}
		if !anySchemaHas(types, strings.Split(keys, ".")) {
			return nil, domain.Validation(CodeInvalidFilter, fmt.Sprintf(
				"filter: field %q is in the data of none of the subscribed event types (%s); see GET /api/admin/webhooks/event-types",
				path, truncate(strings.Join(types, ", "), 200))).WithField("filter." + path)
		}
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, domain.Validation(CodeInvalidFilter, "filter is not valid JSON").WithField("filter")
	}
	return b.Bytes(), nil
}

// anySchemaHas reports whether the data schema of one of types has the
// property path keys.
func anySchemaHas(types []string, keys []string) bool {
	for _, name := range types {
		t, ok := domain.LookupEventType(name)
		if !ok {
			continue
		}
		var s map[string]any
		if json.Unmarshal([]byte(t.DataSchema), &s) != nil {
			continue
		}
		if schemaHas(s, keys) {
			return true
		}
	}
	return false
}

// schemaHas walks keys down a schema's properties. An object schema that
// does not close its properties (additionalProperties absent or true)
// admits any key below it.
func schemaHas(s map[string]any, keys []string) bool {
	if len(keys) == 0 {
		return true
	}
	if props, ok := s["properties"].(map[string]any); ok {
		if sub, ok := props[keys[0]].(map[string]any); ok {
			return schemaHas(sub, keys[1:])
		}
	}
	if closed, ok := s["additionalProperties"].(bool); ok && !closed {
		return false
	}
	return isObjectSchema(s)
}

func isObjectSchema(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		return t == "object"
	case []any:
		for _, x := range t {
			if x == "object" {
				return true
			}
		}
	}
	return false
}
