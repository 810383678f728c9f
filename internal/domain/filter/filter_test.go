package filter_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain/filter"
)

func event() *filter.Event {
	return &filter.Event{
		Type:    "corpus.note.changed",
		Subject: "wiki://garden/notes",
		Data: json.RawMessage(`{"op":"deleted","genre":"wiki","published":false,"count":3,"parent_id":null,
			"nested":{"level":2,"tag":"b"},"list":[1,2]}`),
	}
}

func TestMatchOperators(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		filter string
		want   bool
	}{
		{"no filter", `{}`, true},
		{"eq shorthand", `{"data.op":"deleted"}`, true},
		{"eq", `{"data.op":{"$eq":"deleted"}}`, true},
		{"eq other", `{"data.op":{"$eq":"created"}}`, false},
		{"eq type mismatch number vs string", `{"data.count":{"$eq":"3"}}`, false},
		{"eq number", `{"data.count":{"$eq":3}}`, true},
		{"eq number as float", `{"data.count":{"$eq":3.0}}`, true},
		{"eq bool", `{"data.published":false}`, true},
		{"eq bool vs string", `{"data.published":"false"}`, false},
		{"eq null present", `{"data.parent_id":null}`, true},
		{"eq null missing", `{"data.absent":null}`, false},
		{"eq missing", `{"data.absent":{"$eq":"x"}}`, false},
		{"eq object never equals", `{"data.nested":{"$eq":"x"}}`, false},
		{"neq", `{"data.op":{"$neq":"created"}}`, true},
		{"neq same", `{"data.op":{"$neq":"deleted"}}`, false},
		{"neq missing", `{"data.absent":{"$neq":"x"}}`, true},
		{"neq type mismatch", `{"data.count":{"$neq":"3"}}`, true},
		{"in", `{"data.op":{"$in":["created","deleted"]}}`, true},
		{"in none", `{"data.op":{"$in":["created","updated"]}}`, false},
		{"in mixed kinds", `{"data.count":{"$in":["3",3]}}`, true},
		{"in missing", `{"data.absent":{"$in":["x"]}}`, false},
		{"nin", `{"data.op":{"$nin":["created","updated"]}}`, true},
		{"nin member", `{"data.op":{"$nin":["deleted"]}}`, false},
		{"nin missing", `{"data.absent":{"$nin":["x"]}}`, true},
		{"exists", `{"data.op":{"$exists":true}}`, true},
		{"exists null value", `{"data.parent_id":{"$exists":true}}`, true},
		{"exists missing", `{"data.absent":{"$exists":true}}`, false},
		{"not exists missing", `{"data.absent":{"$exists":false}}`, true},
		{"not exists present", `{"data.op":{"$exists":false}}`, false},
		{"gt", `{"data.count":{"$gt":2}}`, true},
		{"gt equal", `{"data.count":{"$gt":3}}`, false},
		{"gte equal", `{"data.count":{"$gte":3}}`, true},
		{"gte above", `{"data.count":{"$gte":4}}`, false},
		{"lt", `{"data.count":{"$lt":4}}`, true},
		{"lt equal", `{"data.count":{"$lt":3}}`, false},
		{"lte equal", `{"data.count":{"$lte":3}}`, true},
		{"lte below", `{"data.count":{"$lte":2}}`, false},
		{"range", `{"data.count":{"$gt":1,"$lt":5}}`, true},
		{"range outside", `{"data.count":{"$gt":3,"$lt":5}}`, false},
		{"gt string", `{"data.op":{"$gt":"a"}}`, true},
		{"lt string", `{"data.op":{"$lt":"a"}}`, false},
		{"gt type mismatch string field", `{"data.op":{"$gt":1}}`, false},
		{"lt type mismatch number field", `{"data.count":{"$lt":"z"}}`, false},
		{"gt bool field", `{"data.published":{"$gt":0}}`, false},
		{"gt missing", `{"data.absent":{"$gt":0}}`, false},
		{"lte missing", `{"data.absent":{"$lte":0}}`, false},
		{"nested path", `{"data.nested.level":2}`, true},
		{"path through scalar", `{"data.op.x":{"$exists":true}}`, false},
		{"path through array", `{"data.list.0":{"$exists":true}}`, false},
		{"type", `{"type":"corpus.note.changed"}`, true},
		{"type other", `{"type":"code.issued"}`, false},
		{"subject glob", `{"subject":{"$glob":"wiki://*"}}`, true},
		{"subject glob other", `{"subject":{"$glob":"writing://*"}}`, false},
		{"glob on number", `{"data.count":{"$glob":"*"}}`, false},
		{"fields are anded", `{"data.op":"deleted","data.genre":"writing"}`, false},
		{"fields all hold", `{"data.op":"deleted","data.genre":"wiki"}`, true},
		{"and", `{"$and":[{"data.op":"deleted"},{"data.count":{"$gte":3}}]}`, true},
		{"and one fails", `{"$and":[{"data.op":"deleted"},{"data.count":{"$gte":4}}]}`, false},
		{"or", `{"$or":[{"data.op":"created"},{"data.genre":"wiki"}]}`, true},
		{"or none", `{"$or":[{"data.op":"created"},{"data.genre":"raw"}]}`, false},
		{"or of and", `{"$or":[{"$and":[{"data.op":"deleted"},{"data.published":true}]},{"data.nested.tag":"b"}]}`, true},
		{"or beside field", `{"$or":[{"data.op":"deleted"}],"data.genre":"raw"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, err := filter.Parse([]byte(c.filter))
			require.NoError(t, err)
			require.Equal(t, c.want, f.Match(event()), c.filter)
		})
	}
}

func TestMatchUndecodableData(t *testing.T) {
	t.Parallel()
	f, err := filter.Parse([]byte(`{"data.op":{"$exists":false},"type":"x"}`))
	require.NoError(t, err)
	require.True(t, f.Match(&filter.Event{Type: "x", Data: json.RawMessage(`not json`)}))
	require.False(t, f.Match(&filter.Event{Type: "x", Data: json.RawMessage(`{"op":1}`)}))
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, filter, field string
	}{
		{"array", `[]`, ""},
		{"string", `"x"`, ""},
		{"not json", `{"data.op":`, ""},
		{"trailing", `{} {}`, ""},
		{"unknown root", `{"id":"x"}`, "id"},
		{"bare data", `{"data":{"$exists":true}}`, "data"},
		{"empty key", `{"data..op":"x"}`, "data..op"},
		{"odd key", `{"data.o p":"x"}`, "data.o p"},
		{"unknown operator", `{"data.op":{"$regex":"x"}}`, "data.op"},
		{"nested object", `{"data.op":{"a":"x"}}`, "data.op"},
		{"no operator", `{"data.op":{}}`, "data.op"},
		{"eq array", `{"data.op":{"$eq":[1]}}`, "data.op"},
		{"shorthand array", `{"data.op":[1]}`, "data.op"},
		{"in scalar", `{"data.op":{"$in":"x"}}`, "data.op"},
		{"in empty", `{"data.op":{"$in":[]}}`, "data.op"},
		{"in object", `{"data.op":{"$in":[{}]}}`, "data.op"},
		{"exists string", `{"data.op":{"$exists":"yes"}}`, "data.op"},
		{"gt bool", `{"data.op":{"$gt":true}}`, "data.op"},
		{"gt null", `{"data.op":{"$gt":null}}`, "data.op"},
		{"glob number", `{"subject":{"$glob":1}}`, "subject"},
		{"glob of two stars", `{"subject":{"$glob":"**"}}`, "subject"},
		{"glob with a run of stars", `{"data.op":{"$glob":"a**b"}}`, "data.op"},
		{"top operator", `{"$not":[{}]}`, ""},
		{"and object", `{"$and":{}}`, ""},
		{"and empty", `{"$and":[]}`, ""},
		{"or of scalar", `{"$or":[1]}`, ""},
		{"too deep", `{"$or":[{"$or":[{"$or":[{"$or":[{"$or":[{"type":"x"}]}]}]}]}]}`, ""},
		{"number out of range", `{"data.n":{"$eq":1e999}}`, "data.n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, err := filter.Parse([]byte(c.filter))
			require.Nil(t, f)
			var fe *filter.Error
			require.True(t, errors.As(err, &fe), "%v", err)
			require.Equal(t, c.field, fe.Field)
		})
	}
}

func TestParseBounds(t *testing.T) {
	t.Parallel()
	big := `{"data.op":"` + string(make([]byte, filter.MaxBytes)) + `"}`
	_, err := filter.Parse([]byte(big))
	require.Error(t, err)
	many := `{"$or":[`
	for i := 0; i < filter.MaxConditions+1; i++ {
		if i > 0 {
			many += ","
		}
		many += `{"type":"x"}`
	}
	many += `]}`
	_, err = filter.Parse([]byte(many))
	require.ErrorContains(t, err, "conditions")
}

func TestParseNoFilter(t *testing.T) {
	t.Parallel()
	for _, s := range []string{``, ` `, `null`, `{}`} {
		f, err := filter.Parse([]byte(s))
		require.NoError(t, err)
		require.Nil(t, f)
		require.True(t, f.Match(event()))
		require.Empty(t, f.Fields())
	}
}

func TestFields(t *testing.T) {
	t.Parallel()
	f, err := filter.Parse([]byte(`{"data.op":"x","$or":[{"subject":{"$glob":"*"}},{"data.op":{"$neq":"y"}}]}`))
	require.NoError(t, err)
	require.Equal(t, []string{"data.op", "subject"}, f.Fields())
}

// FuzzParse checks that any input either parses or fails with an *Error,
// never panics, and that a parsed filter evaluates on any data.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"data.op":{"$eq":"deleted"}}`, `{"$or":[{"type":"a"},{"data.n":{"$gte":1.5}}]}`,
		`{"subject":{"$glob":"wiki://*"},"data.x.y":{"$in":[1,"a",null,true]}}`, `{"data.a":{"$exists":false}}`,
		`null`, `{}`, `[`, `{"$and":[{"$and":[{}]}]}`,
	} {
		f.Add(s, `{"op":"deleted","n":2,"x":{"y":"a"}}`)
	}
	f.Fuzz(func(t *testing.T, raw, data string) {
		flt, err := filter.Parse([]byte(raw))
		if err != nil {
			var fe *filter.Error
			require.True(t, errors.As(err, &fe))
			require.Nil(t, flt)
			return
		}
		ev := &filter.Event{Type: "t", Subject: "s", Data: json.RawMessage(data)}
		first := flt.Match(ev)
		require.Equal(t, first, flt.Match(ev), "evaluation is deterministic")
	})
}
