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
	"unicode"
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
// bytes must be valid UTF-8 with no lone UTF-16 surrogate escape ("\ud800",
// which a decoder would silently turn into U+FFFD), hold exactly one JSON
// value and nothing after it, and name no field the input does not have; a
// value of the wrong type names its field. Empty input (only white space)
// leaves in as it is. Refusals are domain validation errors.
func DecodeJSON(raw []byte, in any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if !utf8.Valid(raw) {
		return refuseAt(raw, invalidUTF8At(raw), "the JSON is not valid UTF-8", "not valid UTF-8")
	}
	if at := loneSurrogateAt(raw); at >= 0 {
		return refuseAt(raw, at, "the JSON holds a lone UTF-16 surrogate escape", "a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair) is not a character")
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

// refuseAt is the INVALID_INPUT refusal of the byte at off of raw, naming
// the member that holds it (whole when no member does).
func refuseAt(raw []byte, off int, whole, what string) error {
	field := fieldAt(raw, off)
	if field == "" {
		return domain.Validation(CodeInvalidInput, whole).WithField(field)
	}
	return domain.Validation(CodeInvalidInput, field+": "+what).WithField(field)
}

// loneSurrogateAt returns the offset of the first \u escape in a string of
// the JSON text b that is a UTF-16 surrogate without its pair (a high one
// not followed by a low one, or a low one alone), or -1.
func loneSurrogateAt(b []byte) int {
	hex4 := func(i int) (rune, bool) {
		if i+4 > len(b) {
			return 0, false
		}
		var r rune
		for _, c := range b[i : i+4] {
			var d byte
			switch {
			case c >= '0' && c <= '9':
				d = c - '0'
			case c >= 'a' && c <= 'f':
				d = c - 'a' + 10
			case c >= 'A' && c <= 'F':
				d = c - 'A' + 10
			default:
				return 0, false
			}
			r = r<<4 | rune(d)
		}
		return r, true
	}
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\' && i+1 < len(b) && b[i+1] == 'u':
			r, ok := hex4(i + 2)
			switch {
			case !ok || r < 0xD800 || r > 0xDFFF:
			case r >= 0xDC00:
				return i
			default:
				// A high surrogate counts only with a low one right after.
				if j := i + 6; j+1 < len(b) && b[j] == '\\' && b[j+1] == 'u' {
					if lo, ok := hex4(j + 2); ok && lo >= 0xDC00 && lo <= 0xDFFF {
						i = j + 5
						continue
					}
				}
				return i
			}
			i++
		case c == '\\':
			i++ // the escaped character, a quote or a backslash included
		}
	}
	return -1
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
			case '{', '[':
				// An object or array that is an element counts as one
				// when it opens, so the members inside it are named by
				// its index.
				if top >= 0 && !stack[top].object {
					stack[top].index++
				}
				stack = append(stack, level{object: v == '{', expectKey: v == '{', index: -1})
			default:
				stack = stack[:top]
				if dec.InputOffset() > int64(off) {
					return path()
				}
				if top--; top >= 0 && stack[top].object {
					stack[top].expectKey = true
				}
			}
			continue
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
// json.RawMessage, at any depth — must be valid UTF-8 without NUL bytes;
// every integer field tagged `range:"min,max"` must be zero (unset: the op's
// default) or within the range. A string field is single-line unless it is
// tagged `text:"multiline"`: a single-line string (map keys included) holds
// no control character but tab. A field tagged `text:"glob"` is single-line
// and each of its globs is in its one canonical form (domain.CanonicalGlob).
// Raw JSON also holds no lone UTF-16 surrogate escape; its strings are data
// and may hold any other character. The refusal names the field by its JSON
// path.
func Check(in any) error {
	v := reflect.ValueOf(in)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	return check(v, "", singleLine)
}

// textKind is what a string field may hold beyond valid UTF-8 without NUL.
type textKind int

const (
	// singleLine: no control character but tab.
	singleLine textKind = iota
	// multiLine: line breaks and other control characters too.
	multiLine
	// glob: single-line, and in its canonical form.
	glob
	// rawData: the strings of raw JSON, which are the client's data.
	rawData
)

// textKindOf reads a field's `text` tag.
func textKindOf(f reflect.StructField) textKind {
	switch f.Tag.Get("text") {
	case "multiline":
		return multiLine
	case "glob":
		return glob
	}
	return singleLine
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

func check(v reflect.Value, path string, kind textKind) error {
	if !v.IsValid() {
		return nil
	}
	if v.Type() == rawMessageType {
		// Raw JSON kept for later is text too (a jsonb column refuses
		// \u0000): its strings pass the same check.
		if v.Len() == 0 {
			return nil
		}
		if at := loneSurrogateAt(v.Bytes()); at >= 0 {
			return domain.Validation(CodeInvalidInput, path+": a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair) is not a character").WithField(path)
		}
		var x any
		if err := json.Unmarshal(v.Bytes(), &x); err != nil {
			return domain.Validation(CodeInvalidJSON, path+": not valid JSON").WithField(path)
		}
		if x == nil {
			return nil
		}
		return check(reflect.ValueOf(x), path, rawData)
	}
	switch v.Kind() {
	case reflect.String:
		return checkString(v.String(), path, kind)
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return check(v.Elem(), path, kind)
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return nil // bytes (json.RawMessage, ids): not text
		}
		for i := 0; i < v.Len(); i++ {
			if err := check(v.Index(i), path+"["+strconv.Itoa(i)+"]", kind); err != nil {
				return err
			}
		}
	case reflect.Map:
		keyKind := singleLine
		if kind == rawData {
			keyKind = rawData
		}
		iter := v.MapRange()
		for iter.Next() {
			k := iter.Key()
			p := join(path, fmt.Sprint(k.Interface()))
			if k.Kind() == reflect.String {
				if err := checkString(k.String(), p, keyKind); err != nil {
					return err
				}
			}
			if err := check(iter.Value(), p, kind); err != nil {
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
			if err := check(v.Field(i), p, textKindOf(f)); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkString(s, path string, kind textKind) error {
	if !utf8.ValidString(s) {
		return domain.Validation(CodeInvalidInput, path+": not valid UTF-8").WithField(path)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return domain.Validation(CodeInvalidInput, path+": contains a NUL byte").WithField(path)
	}
	if kind == singleLine || kind == glob {
		for _, r := range s {
			if r != '\t' && unicode.IsControl(r) {
				return domain.Validation(CodeInvalidInput, fmt.Sprintf("%s: contains the control character %U; a single-line field allows only tab", path, r)).WithField(path)
			}
		}
	}
	if kind == glob {
		if c := domain.CanonicalGlob(s); c != s {
			return domain.Validation(CodeInvalidInput, fmt.Sprintf("%s: the glob %q is not in its canonical form; write %q", path, s, c)).WithField(path)
		}
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
