package op

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/standmeet/standmeet/internal/domain"
)

// Codes of the input gate's refusals.
const (
	CodeInvalidJSON  = "INVALID_JSON"
	CodeInvalidInput = "INVALID_INPUT"
	CodeInvalidRange = "INVALID_RANGE"
)

// DecodeJSON is the one way every surface turns a JSON request (a REST body,
// MCP tool arguments, an admin form's arguments) into an op's input: the
// bytes must be valid UTF-8, hold exactly one JSON value and nothing after
// it, and name no field the input does not have; a value of the wrong type
// names its field. Empty input (only white space) leaves in as it is.
// Refusals are domain validation errors.
func DecodeJSON(raw []byte, in any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if !utf8.Valid(raw) {
		field := fieldAt(raw, invalidUTF8At(raw))
		msg := "the JSON is not valid UTF-8"
		if field != "" {
			msg = field + ": not valid UTF-8"
		}
		return domain.Validation(CodeInvalidInput, msg).WithField(field)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return domain.Validation(CodeInvalidJSON, fmt.Sprintf("%s must be %s", ute.Field, jsonKind(ute.Type))).WithField(ute.Field)
		}
		return domain.Validation(CodeInvalidJSON, "the JSON cannot be read: "+strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return domain.Validation(CodeInvalidJSON, "trailing data after the JSON value")
	}
	return nil
}

// jsonKind names a Go type the way a JSON client thinks of it.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// fieldAt names the member whose key or value holds byte offset off of the
// JSON document raw ("name", "headers.X-Team", "event_types[1]"), or "" when
// it is not inside one.
func fieldAt(raw []byte, off int) string {
	if off < 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	type level struct {
		object    bool
		key       string
		index     int
		expectKey bool
	}
	var stack []level
	path := func() string {
		var b strings.Builder
		for _, l := range stack {
			if l.object {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(l.key)
			} else {
				b.WriteString("[" + strconv.Itoa(l.index) + "]")
			}
		}
		return b.String()
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return path()
		}
		top := len(stack) - 1
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, level{object: true, expectKey: true})
				continue
			case '[':
				stack = append(stack, level{index: -1})
				continue
			default:
				stack = stack[:top]
				if dec.InputOffset() > int64(off) {
					return path()
				}
				top = len(stack) - 1
			}
		case string:
			if top >= 0 && stack[top].object && stack[top].expectKey {
				stack[top].key, stack[top].expectKey = v, false
				if dec.InputOffset() > int64(off) {
					return path()
				}
				continue
			}
		}
		if top >= 0 && !stack[top].object {
			stack[top].index++
		}
		if dec.InputOffset() > int64(off) {
			return path()
		}
		if top >= 0 && stack[top].object {
			stack[top].expectKey = true
		}
	}
}

// Check is the input gate every op runs before its handler (Op.Call): every
// string of in — fields, elements, map keys and values, raw JSON kept as
// json.RawMessage, at any depth — must
// be valid UTF-8 without NUL bytes, and every integer field tagged
// `range:"min,max"` must be zero (unset: the op's default) or within the
// range. The refusal names the field by its JSON path.
func Check(in any) error {
	v := reflect.ValueOf(in)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	return check(v, "")
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

func check(v reflect.Value, path string) error {
	if !v.IsValid() {
		return nil
	}
	if v.Type() == rawMessageType {
		// Raw JSON kept for later is text too (a jsonb column refuses
		// \u0000): its strings pass the same check.
		if v.Len() == 0 {
			return nil
		}
		var x any
		if err := json.Unmarshal(v.Bytes(), &x); err != nil {
			return domain.Validation(CodeInvalidJSON, path+": not valid JSON").WithField(path)
		}
		if x == nil {
			return nil
		}
		return check(reflect.ValueOf(x), path)
	}
	switch v.Kind() {
	case reflect.String:
		return checkString(v.String(), path)
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return check(v.Elem(), path)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // bytes (json.RawMessage, ids): not text
		}
		for i := 0; i < v.Len(); i++ {
			if err := check(v.Index(i), path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			k := iter.Key()
			p := join(path, fmt.Sprint(k.Interface()))
			if k.Kind() == reflect.String {
				if err := checkString(k.String(), p); err != nil {
					return err
				}
			}
			if err := check(iter.Value(), p); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			p := path
			if !f.Anonymous {
				p = join(path, fieldName(f))
			}
			if err := checkRange(f, v.Field(i), p); err != nil {
				return err
			}
			if err := check(v.Field(i), p); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkString(s, path string) error {
	if !utf8.ValidString(s) {
		return domain.Validation(CodeInvalidInput, path+": not valid UTF-8").WithField(path)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return domain.Validation(CodeInvalidInput, path+": contains a NUL byte").WithField(path)
	}
	return nil
}

// Range returns the bounds of a field tagged `range:"min,max"`.
func Range(f reflect.StructField) (lo, hi int64, ok bool) {
	tag, ok := f.Tag.Lookup("range")
	if !ok {
		return 0, 0, false
	}
	a, b, found := strings.Cut(tag, ",")
	lo, err1 := strconv.ParseInt(a, 10, 64)
	hi, err2 := strconv.ParseInt(b, 10, 64)
	if !found || err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return lo, hi, true
}

func checkRange(f reflect.StructField, v reflect.Value, path string) error {
	lo, hi, ok := Range(f)
	if !ok {
		return nil
	}
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if !v.CanInt() {
		return nil
	}
	if n := v.Int(); n != 0 && (n < lo || n > hi) {
		return domain.Validation(CodeInvalidRange, fmt.Sprintf("%s must be between %d and %d (or left out for the default), not %d", path, lo, hi, n)).WithField(path)
	}
	return nil
}

// fieldName is the JSON name of a struct field.
func fieldName(f reflect.StructField) string {
	if tag, ok := f.Tag.Lookup("json"); ok {
		if name, _, _ := strings.Cut(tag, ","); name != "" && name != "-" {
			return name
		}
	}
	for _, k := range []string{"path", "query"} {
		if name, ok := f.Tag.Lookup(k); ok {
			return name
		}
	}
	return f.Name
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
