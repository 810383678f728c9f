package op

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
)

type gateInner struct {
	Value string `json:"value"`
}

type gateInput struct {
	ID      uuid.UUID                  `json:"id" path:"id"`
	Name    string                     `json:"name"`
	Note    *string                    `json:"note,omitempty"`
	Body    string                     `json:"body" text:"multiline"`
	Types   []string                   `json:"event_types" text:"glob"`
	Headers map[string]string          `json:"headers"`
	Inner   *gateInner                 `json:"inner"`
	Search  string                     `query:"q"`
	Options map[string]json.RawMessage `json:"options"`
	PageInput
}

func TestDecodeJSONAndCheckNameTheField(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, code, field string
	}{
		{"NUL in a field", `{"name":"a\u0000b"}`, CodeInvalidInput, "name"},
		{"NUL in a pointer field", `{"note":"\u0000"}`, CodeInvalidInput, "note"},
		{"NUL in an element", `{"event_types":["ok","x\u0000"]}`, CodeInvalidInput, "event_types[1]"},
		{"NUL in a map value", `{"headers":{"X-Team":"a\u0000"}}`, CodeInvalidInput, "headers.X-Team"},
		{"NUL in a map key", `{"headers":{"X\u0000":"a"}}`, CodeInvalidInput, "headers.X\x00"},
		{"NUL in a nested object", `{"inner":{"value":"\u0000"}}`, CodeInvalidInput, "inner.value"},
		{"NUL in raw JSON", `{"options":{"mode":{"deep":["ok","\u0000"]}}}`, CodeInvalidInput, "options.mode.deep[1]"},
		{"invalid UTF-8 in a value", "{\"name\":\"ok\",\"event_types\":[\"a\",\"\xff\"]}", CodeInvalidInput, "event_types[1]"},
		{"invalid UTF-8 in a map value", "{\"headers\":{\"X-Team\":\"\xc3\x28\"}}", CodeInvalidInput, "headers.X-Team"},
		{"invalid UTF-8 in a key", "{\"na\xffme\":\"x\"}", CodeInvalidInput, "na\uFFFDme"},
		{"CR LF in a single-line field", `{"name":"a\r\nb"}`, CodeInvalidInput, "name"},
		{"an escape sequence in a pointer field", `{"note":"\u001b[31m"}`, CodeInvalidInput, "note"},
		{"DEL in a nested object", `{"inner":{"value":"a\u007f"}}`, CodeInvalidInput, "inner.value"},
		{"a C1 control", `{"name":"a\u0085"}`, CodeInvalidInput, "name"},
		{"CR LF after a glob", `{"event_types":["webhook.test\r\n"]}`, CodeInvalidInput, "event_types[0]"},
		{"LF in a map value", `{"headers":{"X-Team":"a\nInjected: 1"}}`, CodeInvalidInput, "headers.X-Team"},
		{"CR in a map key", `{"headers":{"X\r":"a"}}`, CodeInvalidInput, "headers.X\r"},
		{"a second spelling of *", `{"event_types":["corpus.*","**"]}`, CodeInvalidInput, "event_types[1]"},
		{"a run of stars inside a glob", `{"event_types":["corpus.**.changed"]}`, CodeInvalidInput, "event_types[0]"},
		{"space around a glob", `{"event_types":[" corpus.*"]}`, CodeInvalidInput, "event_types[0]"},
		{"a lone high surrogate", `{"name":"a\ud800"}`, CodeInvalidInput, "name"},
		{"a lone low surrogate", `{"name":"\udc00b"}`, CodeInvalidInput, "name"},
		{"a high surrogate before a non-surrogate escape", `{"body":"\ud800\u0041"}`, CodeInvalidInput, "body"},
		{"two high surrogates", `{"event_types":["ok","\uD83D\uD83D"]}`, CodeInvalidInput, "event_types[1]"},
		{"a lone surrogate in a map key", `{"headers":{"\ud800":"a"}}`, CodeInvalidInput, "headers.\uFFFD"},
		{"a lone surrogate in an object element", `{"inner":{"value":"v"},"event_types":["a"],"options":{"list":[{"a":1},[2],{"b":"\ud800"}]}}`, CodeInvalidInput, "options.list[2].b"},
		{"invalid UTF-8 after nested elements", "{\"options\":{\"l\":[[1,[2]],{\"x\":{}},\"\xff\"]}}", CodeInvalidInput, "options.l[2]"},
		{"a lone surrogate in raw JSON", `{"options":{"mode":{"deep":["ok","\udfff"]}}}`, CodeInvalidInput, "options.mode.deep[1]"},
		{"trailing word", `{"name":"a"} xyz`, CodeInvalidJSON, ""},
		{"two objects", `{"name":"a"}{"name":"b"}`, CodeInvalidJSON, ""},
		{"trailing number", `{"name":"a"} 1`, CodeInvalidJSON, ""},
		{"unknown field", `{"nmae":"a"}`, CodeInvalidJSON, ""},
		{"wrong type", `{"name":1}`, CodeInvalidJSON, "name"},
		{"limit too large", `{"limit":201}`, CodeInvalidRange, "limit"},
		{"limit negative", `{"limit":-1}`, CodeInvalidRange, "limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var in gateInput
			err := DecodeJSON([]byte(c.body), &in)
			if err == nil {
				err = Check(&in)
			}
			de := domain.AsError(err)
			require.NotNil(t, de, "%v", err)
			require.Equal(t, domain.KindValidation, de.Kind)
			require.Equal(t, c.code, de.Code, de.Message)
			require.Equal(t, c.field, de.Field, de.Message)
			if c.field != "" {
				require.Contains(t, de.Message, c.field)
			}
		})
	}
	t.Run("the range is in the message", func(t *testing.T) {
		t.Parallel()
		err := Check(&gateInput{PageInput: PageInput{Limit: 1000}})
		require.ErrorContains(t, err, "between 1 and 200")
	})
}

func TestDecodeJSONAndCheckAcceptGoodInput(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		``, "  \n", `{}`, `{"name":"Zoë 🚀","event_types":["a.*"],"headers":{"X":"y"},"limit":200}`,
		"{\"name\":\"a\"}\n", `{"limit":1}`, `{"limit":0}`,
		// Tab is allowed on one line; a multi-line field and raw JSON data
		// take line breaks; a surrogate pair is a character; an escaped
		// backslash before "ud800" is no escape.
		`{"name":"a\tb","body":"line 1\r\nline 2\u001b","options":{"x":"a\nb"}}`,
		`{"name":"\ud83d\ude80 \uD83D\uDE80","event_types":["*","code.*.x"]}`, `{"name":"\\ud800"}`,
	} {
		var in gateInput
		require.NoError(t, DecodeJSON([]byte(body), &in), body)
		require.NoError(t, Check(&in), body)
	}
	require.NoError(t, Check(nil))
	require.NoError(t, Check(&Empty{}))
}

func TestCallRunsTheGateBeforeTheHandler(t *testing.T) {
	t.Parallel()
	called := false
	o := New(Meta{Name: "t.x"}, func(_ context.Context, _ Caller, in gateInput) (Empty, error) {
		called = true
		return Empty{}, nil
	})
	_, err := o.Call(context.Background(), Caller{}, &gateInput{Search: "a\x00"})
	require.ErrorContains(t, err, "q: contains a NUL byte")
	require.False(t, called)
	_, err = o.Call(context.Background(), Caller{}, &gateInput{Search: "ok"})
	require.NoError(t, err)
	require.True(t, called)
}

// FuzzDecodeJSON: no input makes the gate panic, and whatever it lets
// through has no NUL byte or invalid UTF-8 in any string once checked.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"name":"a"}`, `{"headers":{"a":"b"}} x`, "{\"name\":\"\xff\"}", `{"event_types":["\u0000"]}`, `[`, `{"inner":{"value":"v"}}`, `{"name":"\ud800"}`, `{"body":"\ud83d\ude80\r\n"}`, `{"event_types":["**"]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var in gateInput
		if DecodeJSON(b, &in) != nil || Check(&in) != nil {
			return
		}
		for _, s := range append([]string{in.Name, in.Search}, in.Types...) {
			require.NoError(t, checkString(s, "s", singleLine))
		}
		for _, s := range in.Types {
			require.NoError(t, checkString(s, "s", glob))
		}
		require.NoError(t, checkString(in.Body, "body", multiLine))
		for k, v := range in.Headers {
			require.NoError(t, checkString(k, "k", singleLine))
			require.NoError(t, checkString(v, "v", singleLine))
		}
		// What passes holds no lone surrogate: it read back as it was sent.
		require.Negative(t, loneSurrogateAt(b))
	})
}
