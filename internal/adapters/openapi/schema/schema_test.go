package schema_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/openapi/schema"
	"github.com/standmeet/standmeet/internal/domain/op"
)

type item struct {
	ID        uuid.UUID         `json:"id"`
	Name      string            `json:"name" doc:"display name"`
	Tags      []string          `json:"tags,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	EmbedID   *uuid.UUID        `json:"embed_id"`
	Enabled   *bool             `json:"enabled,omitempty"`
	At        time.Time         `json:"at"`
	Data      json.RawMessage   `json:"data,omitempty"`
	Count     int               `json:"count,string"`
	hidden    string            // unexported: left out
	Ignored   string            `json:"-"`
	NoTag     string
	Recursive *item `json:"recursive,omitempty"`
}

type listIn struct {
	op.PageInput
	ID uuid.UUID `json:"id" path:"id"`
}

// compiled is a derived schema checked to be a well-formed JSON Schema
// 2020-12 (the dialect of OpenAPI 3.1 and of MCP tool schemas) by
// kin-openapi, ready to validate values.
type compiled struct{ s *openapi3.Schema }

func compile(t *testing.T, s schema.Schema) compiled {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var sch openapi3.Schema
	require.NoError(t, json.Unmarshal(b, &sch))
	require.NoError(t, sch.Validate(context.Background(), openapi3.IsOpenAPI31OrLater()), "schema %s", b)
	return compiled{&sch}
}

// Validate checks a value decoded from JSON against the schema.
func (c compiled) Validate(v any) error {
	return c.s.VisitJSON(v, openapi3.EnableJSONSchema2020())
}

func TestForDescribesWhatEncodingJSONWrites(t *testing.T) {
	t.Parallel()
	id := uuid.New()
	yes := true
	cases := []struct {
		name  string
		typ   reflect.Type
		value any
	}{
		{"full item", reflect.TypeFor[item](), item{hidden: "x", ID: id, Name: "n", Tags: []string{"a"}, Headers: map[string]string{"x": "y"}, EmbedID: &id, Enabled: &yes, At: time.Now(), Data: json.RawMessage(`{"k":[1]}`), Count: 3, NoTag: "x", Recursive: &item{}}},
		{"zero item", reflect.TypeFor[item](), item{}},
		{"page", reflect.TypeFor[op.Page[item]](), op.NewPage([]item{{}, {}}, 1, func(item) string { return "c" })},
		{"empty page", reflect.TypeFor[op.Page[item]](), op.Page[item]{}},
		{"empty", reflect.TypeFor[op.Empty](), op.Empty{}},
		{"pointer to struct", reflect.TypeFor[*item](), (*item)(nil)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := compile(t, schema.For(c.typ, schema.Options{}))
			b, err := json.Marshal(c.value)
			require.NoError(t, err)
			var v any
			require.NoError(t, json.Unmarshal(b, &v))
			require.NoError(t, r.Validate(v), "value %s", b)
		})
	}
}

func TestForShape(t *testing.T) {
	t.Parallel()
	s := schema.For(reflect.TypeFor[item](), schema.Options{Strict: true})
	require.Equal(t, "object", s["type"])
	require.Equal(t, false, s["additionalProperties"])
	props := s["properties"].(schema.Schema)
	require.NotContains(t, props, "hidden")
	require.NotContains(t, props, "Ignored")
	require.Contains(t, props, "NoTag")
	require.Equal(t, schema.Schema{"type": "string", "format": "uuid"}, props["id"])
	require.Equal(t, schema.Schema{"type": "string", "description": "display name"}, props["name"])
	require.Equal(t, schema.Schema{"type": []any{"string", "null"}, "format": "uuid"}, props["embed_id"])
	require.Equal(t, schema.Schema{"type": "string"}, props["count"])
	require.Equal(t, schema.Schema{}, props["data"])
	// Pointers are optional: absent on input means "not given".
	require.Equal(t, []any{"id", "name", "at", "count", "NoTag"}, s["required"])
	// A recursive type is cut at the second level, not expanded forever.
	require.Equal(t, schema.Schema{}, props["recursive"])
}

func TestForFlattensEmbeddedAndSkips(t *testing.T) {
	t.Parallel()
	s := schema.For(reflect.TypeFor[listIn](), schema.Options{Strict: true, Skip: func(f reflect.StructField) bool {
		_, ok := f.Tag.Lookup("path")
		return ok
	}})
	props := s["properties"].(schema.Schema)
	require.Len(t, props, 2)
	require.Equal(t, "page size, default 50, at most 200", props["limit"].(schema.Schema)["description"])
	require.Contains(t, props, "cursor")
	require.NotContains(t, s, "required")
}

func TestStrictSchemaRefusesUnknownFields(t *testing.T) {
	t.Parallel()
	r := compile(t, schema.For(reflect.TypeFor[listIn](), schema.Options{Strict: true}))
	require.Error(t, r.Validate(map[string]any{"id": uuid.NewString(), "nope": 1}))
	require.NoError(t, r.Validate(map[string]any{"id": uuid.NewString(), "limit": 5}))
}

// flat encodes its fields plus extra members, as the inbound source view does.
type flat struct {
	ID    string            `json:"id"`
	Extra map[string]string `json:"-"`
}

func (f flat) MarshalJSON() ([]byte, error) {
	m := map[string]string{"id": f.ID}
	for k, v := range f.Extra {
		m[k] = v
	}
	return json.Marshal(m)
}

// lenient decodes members beyond its fields.
type lenient struct {
	Name string `json:"name"`
}

func (l *lenient) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	l.Name, _ = m["name"].(string)
	return nil
}

type stamp struct{}

func (stamp) MarshalJSON() ([]byte, error) { return []byte(`"x"`), nil }

func TestOwnEncodings(t *testing.T) {
	t.Parallel()
	f := schema.For(reflect.TypeFor[flat](), schema.Options{Strict: true})
	require.Contains(t, f["properties"], "id")
	require.NotContains(t, f, "required")
	require.NotContains(t, f, "additionalProperties")
	r := compile(t, f)
	b, err := json.Marshal(flat{ID: "a", Extra: map[string]string{"tolerance": "5"}})
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	require.NoError(t, r.Validate(v))

	l := schema.For(reflect.TypeFor[lenient](), schema.Options{Strict: true})
	require.NotContains(t, l, "additionalProperties")
	require.Equal(t, []any{"name"}, l["required"])

	require.Equal(t, schema.Schema{}, schema.For(reflect.TypeFor[stamp](), schema.Options{}))
}
