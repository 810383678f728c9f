package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// ValidateJSON checks the JSON document doc against schema, a JSON Schema
// (draft 2020-12) limited to what the catalog's data schemas use: type (one
// or a list), properties, required, additionalProperties (boolean), enum,
// const, minLength, maxLength, minimum, items, and the formats uuid,
// date-time and uri. It returns nil when doc conforms, else an error naming
// the first offending location ("data.booking_id: …"). A schema keyword
// outside that subset is an error, so a schema never silently checks less
// than it says.
func ValidateJSON(schema string, doc []byte) error {
	var s map[string]any
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("data: not JSON: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("data: trailing content after the JSON value")
	}
	return validate(s, v, "data")
}

var knownKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true, "enum": true,
	"const": true, "minLength": true, "maxLength": true, "minimum": true, "items": true, "format": true,
	"description": true,
}

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

func validate(s map[string]any, v any, at string) error {
	for k := range s {
		if !knownKeywords[k] {
			return fmt.Errorf("%s: schema keyword %q is not supported", at, k)
		}
	}
	if t, ok := s["type"]; ok {
		if err := checkType(t, v, at); err != nil {
			return err
		}
	}
	if c, ok := s["const"]; ok && !sameJSON(c, v) {
		return fmt.Errorf("%s: must be %v", at, c)
	}
	if e, ok := s["enum"].([]any); ok {
		found := false
		for _, x := range e {
			if sameJSON(x, v) {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%s: must be one of %v", at, e)
		}
	}
	switch x := v.(type) {
	case string:
		n := utf8.RuneCountInString(x)
		if m, ok := s["minLength"].(float64); ok && float64(n) < m {
			return fmt.Errorf("%s: shorter than %v characters", at, m)
		}
		if m, ok := s["maxLength"].(float64); ok && float64(n) > m {
			return fmt.Errorf("%s: longer than %v characters", at, m)
		}
		if f, ok := s["format"].(string); ok {
			if err := checkFormat(f, x); err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
		}
	case json.Number:
		if m, ok := s["minimum"].(float64); ok {
			f, err := x.Float64()
			if err != nil || f < m {
				return fmt.Errorf("%s: less than %v", at, m)
			}
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, it := range x {
				if err := validate(items, it, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				name, _ := r.(string)
				if _, ok := x[name]; !ok {
					return fmt.Errorf("%s.%s: required", at, name)
				}
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ps, declared := props[k].(map[string]any)
			if !declared {
				if ap, ok := s["additionalProperties"].(bool); ok && !ap {
					return fmt.Errorf("%s.%s: not a declared property", at, k)
				}
				continue
			}
			if err := validate(ps, x[k], at+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkType(t any, v any, at string) error {
	var names []string
	switch x := t.(type) {
	case string:
		names = []string{x}
	case []any:
		for _, n := range x {
			s, _ := n.(string)
			names = append(names, s)
		}
	}
	for _, n := range names {
		if isType(n, v) {
			return nil
		}
	}
	return fmt.Errorf("%s: must be %s", at, strings.Join(names, " or "))
}

func isType(name string, v any) bool {
	switch name {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil
	}
	return false
}

func checkFormat(f, s string) error {
	switch f {
	case "uuid":
		if !uuidPattern.MatchString(s) {
			return fmt.Errorf("not a UUID")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return fmt.Errorf("not an RFC 3339 date-time")
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return fmt.Errorf("not an absolute URI")
		}
	default:
		return fmt.Errorf("format %q is not supported", f)
	}
	return nil
}

// sameJSON compares a schema value (decoded without UseNumber) with a
// document value (decoded with it).
func sameJSON(schemaValue, v any) bool {
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		sv, isNum := schemaValue.(float64)
		return err == nil && isNum && f == sv
	}
	a, err1 := json.Marshal(schemaValue)
	b, err2 := json.Marshal(v)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}
