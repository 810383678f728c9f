// Package schema derives JSON Schema (draft 2020-12, the dialect of OpenAPI
// 3.1 and of MCP tool schemas) from the Go input and output types of the
// declared ops, so the OpenAPI document and the MCP tool list describe exactly
// what the REST binder and the JSON encoder accept and produce.
//
// The mapping follows encoding/json: a struct is an object whose properties
// are its `json` names (fields tagged "-" and unexported fields are left out,
// embedded structs without a name are flattened), `omitempty`/`omitzero`
// fields and pointers are optional, pointers also admit null, a map with
// string keys is an object with additionalProperties, a slice is an array.
// A few types are known by name: uuid.UUID (string, format uuid), time.Time
// (string, format date-time), json.RawMessage and interfaces (any value),
// []byte (base64 string). A `doc:"…"` tag becomes the description. A struct
// with its own MarshalJSON is described by its fields, none required, more
// allowed; one with its own UnmarshalJSON is never strict.
package schema

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain/op"
)

// Schema is a JSON Schema object as it is encoded.
type Schema = map[string]any

// Options tune a derivation.
type Options struct {
	// Strict sets additionalProperties: false on every struct, which is what
	// the binders enforce on input (unknown fields are refused).
	Strict bool
	// Skip leaves out struct fields for which it returns true (e.g. fields
	// bound from the path, which are not part of a request body). Only the
	// top-level struct's fields (and embedded ones) are offered.
	Skip func(f reflect.StructField) bool
}

var (
	uuidType          = reflect.TypeFor[uuid.UUID]()
	timeType          = reflect.TypeFor[time.Time]()
	durationType      = reflect.TypeFor[time.Duration]()
	rawType           = reflect.TypeFor[json.RawMessage]()
	bytesType         = reflect.TypeFor[[]byte]()
	jsonMarshaler     = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshaler   = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// For derives the schema of t.
func For(t reflect.Type, opts Options) Schema {
	g := generator{opts: opts, seen: map[reflect.Type]bool{}}
	return g.of(t, true)
}

// FieldName returns the JSON property name of a struct field and whether it
// appears in JSON at all.
func FieldName(f reflect.StructField) (string, bool) {
	if !f.IsExported() && !f.Anonymous {
		return "", false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, true
}

// Optional tells whether a field may be left out of a JSON object: it is a
// pointer or tagged omitempty/omitzero.
func Optional(f reflect.StructField) bool {
	if f.Type.Kind() == reflect.Pointer {
		return true
	}
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	for _, o := range strings.Split(opts, ",") {
		if o == "omitempty" || o == "omitzero" {
			return true
		}
	}
	return false
}

type generator struct {
	opts Options
	// seen guards against recursive types: a type met again inside itself is
	// described as any value rather than expanded forever.
	seen map[reflect.Type]bool
}

func (g *generator) of(t reflect.Type, top bool) Schema {
	switch t {
	case uuidType:
		return Schema{"type": "string", "format": "uuid"}
	case timeType:
		return Schema{"type": "string", "format": "date-time"}
	case durationType:
		return Schema{"type": "integer", "description": "nanoseconds"}
	case rawType:
		return Schema{}
	case bytesType:
		return Schema{"type": "string", "contentEncoding": "base64"}
	}
	if t.Kind() == reflect.Pointer {
		return nullable(g.of(t.Elem(), top))
	}
	// A type with its own JSON encoding says little we can read: a struct is
	// taken to encode at least its fields (the views that flatten extra
	// members do), anything else may be any value; a text marshaler is at
	// least a string.
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		if t.Kind() != reflect.Struct {
			return Schema{}
		}
		s := g.object(t, top)
		if props, _ := s["properties"].(Schema); len(props) == 0 {
			return Schema{} // nothing says it is even an object
		}
		delete(s, "required")
		delete(s, "additionalProperties")
		return s
	}
	if t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return Schema{"type": "string"}
	}
	switch t.Kind() {
	case reflect.Bool:
		return Schema{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return Schema{"type": "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Schema{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return Schema{"type": "number"}
	case reflect.String:
		return Schema{"type": "string"}
	case reflect.Interface:
		return Schema{}
	case reflect.Slice, reflect.Array:
		// encoding/json writes a nil slice as null.
		s := Schema{"type": "array", "items": g.of(t.Elem(), false)}
		if t.Kind() == reflect.Slice {
			s["type"] = []any{"array", "null"}
		}
		return s
	case reflect.Map:
		if t.Key().Kind() != reflect.String && !t.Key().Implements(textMarshalerType) {
			return Schema{}
		}
		return Schema{"type": []any{"object", "null"}, "additionalProperties": g.of(t.Elem(), false)}
	case reflect.Struct:
		return g.object(t, top)
	default:
		return Schema{}
	}
}

func (g *generator) object(t reflect.Type, top bool) Schema {
	if g.seen[t] {
		return Schema{}
	}
	g.seen[t] = true
	defer delete(g.seen, t)
	props := Schema{}
	var required []any
	g.fields(t, top, props, &required)
	s := Schema{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	// A type with its own UnmarshalJSON decides what it accepts (some take
	// members beyond their fields); the others refuse unknown members.
	if g.opts.Strict && !reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		s["additionalProperties"] = false
	}
	return s
}

func (g *generator) fields(t reflect.Type, top bool, props Schema, required *[]any) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, ok := FieldName(f)
		if !ok {
			continue
		}
		if top && g.opts.Skip != nil && g.opts.Skip(f) {
			continue
		}
		ft := f.Type
		if f.Anonymous && f.Tag.Get("json") == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				g.fields(et, top, props, required)
				continue
			}
			if !f.IsExported() {
				continue
			}
		}
		fs := g.of(ft, false)
		if hasOption(f, "string") {
			fs = Schema{"type": "string"}
		}
		if doc := f.Tag.Get("doc"); doc != "" {
			fs = withDescription(fs, doc)
		}
		if lo, hi, ok := op.Range(f); ok {
			// Zero stays allowed: it means the op's default.
			fs["minimum"], fs["maximum"] = min(lo, 0), hi
		}
		props[name] = fs
		if !Optional(f) {
			*required = append(*required, name)
		}
	}
}

func hasOption(f reflect.StructField, opt string) bool {
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	for _, o := range strings.Split(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// withDescription returns a copy of s with a description.
func withDescription(s Schema, doc string) Schema {
	c := make(Schema, len(s)+1)
	for k, v := range s {
		c[k] = v
	}
	c["description"] = doc
	return c
}

// nullable returns s admitting null as well.
func nullable(s Schema) Schema {
	if len(s) == 0 {
		return s // any value already admits null
	}
	c := make(Schema, len(s))
	for k, v := range s {
		c[k] = v
	}
	switch typ := s["type"].(type) {
	case string:
		c["type"] = []any{typ, "null"}
	case []any:
		for _, x := range typ {
			if x == "null" {
				return c
			}
		}
		c["type"] = append(append([]any(nil), typ...), "null")
	default:
		return Schema{"anyOf": []any{s, Schema{"type": "null"}}}
	}
	return c
}
