// Package filter parses and evaluates a webhook endpoint's payload filter:
// a JSON object over the thin event's fields, in the style of Convoy's
// subscription filters.
//
// A filter maps field paths to conditions. The fields are "type",
// "subject" and "data.<key>[.<key>…]" (dotted keys into the event's
// data). A condition is either a JSON scalar (shorthand for $eq) or an
// object of operators, all of which must hold:
//
//	$eq, $neq     equal / not equal to a scalar (string, number, boolean, null)
//	$in, $nin     equal / equal to none of an array of scalars
//	$exists       true: the field is present (null included); false: absent
//	$gt $gte $lt $lte  compare with a number, or a string (byte order);
//	              a field of the other kind never compares
//	$glob         a string field matching a glob ('*' is any run)
//
// The top level, and the members of $and and $or, are filters; the fields
// of one filter must all hold. $and holds when each member does, $or when
// one does. Values of different JSON kinds are never equal: "5" is not 5.
// A missing field fails every operator but $neq, $nin and $exists false.
//
// Parsing bounds the filter's size, depth and number of conditions, so
// evaluating it costs at most a few hundred comparisons per event.
package filter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/standmeet/standmeet/internal/domain"
)

// Bounds enforced by Parse.
const (
	// MaxBytes bounds the filter's JSON text.
	MaxBytes = 4096
	// MaxDepth bounds the nesting of $and and $or.
	MaxDepth = 4
	// MaxConditions bounds the operators of a whole filter.
	MaxConditions = 32
	// MaxListLen bounds the array of $in, $nin, $and and $or.
	MaxListLen = 64
	// MaxPathLen bounds a field path.
	MaxPathLen = 128
	// MaxStringLen bounds a string operand.
	MaxStringLen = 256
)

// Error is a filter that does not parse. Field names the offending field
// path when there is one.
type Error struct {
	Field string
	Msg   string
}

// Error implements error.
func (e *Error) Error() string {
	if e.Field == "" {
		return "filter: " + e.Msg
	}
	return fmt.Sprintf("filter: field %q: %s", e.Field, e.Msg)
}

func fail(field, format string, args ...any) error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Filter is a parsed filter; the zero value and nil match every event. It
// is immutable and safe for concurrent use.
type Filter struct {
	root   all
	fields []string
}

// Parse parses a filter's JSON text. null, absent (empty) or {} is no
// filter: nil, nil. Errors are *Error.
func Parse(raw []byte) (*Filter, error) {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 || string(s) == "null" {
		return nil, nil
	}
	if len(s) > MaxBytes {
		return nil, fail("", "longer than %d bytes", MaxBytes)
	}
	if s[0] != '{' {
		return nil, fail("", "must be a JSON object of field paths to conditions")
	}
	dec := json.NewDecoder(bytes.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fail("", "is not valid JSON")
	}
	if dec.More() {
		return nil, fail("", "has data after the JSON object")
	}
	p := &parser{fields: map[string]bool{}}
	root, err := p.filter(v, 0)
	if err != nil {
		return nil, err
	}
	if len(root) == 0 {
		return nil, nil
	}
	f := &Filter{root: root}
	for k := range p.fields {
		f.fields = append(f.fields, k)
	}
	sort.Strings(f.fields)
	return f, nil
}

// Fields returns the field paths the filter names, sorted, each once.
func (f *Filter) Fields() []string {
	if f == nil {
		return nil
	}
	return append([]string(nil), f.fields...)
}

// Match reports whether the event passes the filter; a nil filter passes
// every event.
func (f *Filter) Match(ev *Event) bool {
	if f == nil {
		return true
	}
	return f.root.match(ev)
}

// Event is the thin event a filter reads. Its data is decoded at the
// first lookup of a data field, once however many filters read it.
type Event struct {
	Type    string
	Subject string
	// Data is the event's data as JSON text.
	Data json.RawMessage

	decoded bool
	data    any
}

// lookup returns the value at path and whether it is present. Data that
// does not decode has no fields.
func (ev *Event) lookup(p path) (any, bool) {
	switch p.root {
	case "type":
		return ev.Type, true
	case "subject":
		return ev.Subject, true
	}
	if !ev.decoded {
		ev.decoded = true
		if json.Unmarshal(ev.Data, &ev.data) != nil {
			ev.data = nil
		}
	}
	cur := ev.data
	for _, k := range p.keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// path is a parsed field path: "type", "subject", or "data" and its keys.
type path struct {
	root string
	keys []string
}

func parsePath(s string) (path, error) {
	if len(s) > MaxPathLen {
		return path{}, fail(truncate(s), "longer than %d bytes", MaxPathLen)
	}
	switch s {
	case "type", "subject":
		return path{root: s}, nil
	}
	rest, ok := strings.CutPrefix(s, "data.")
	if !ok {
		return path{}, fail(s, "is not a field: use type, subject or data.<key>")
	}
	keys := strings.Split(rest, ".")
	for _, k := range keys {
		if k == "" || !keyChars(k) {
			return path{}, fail(s, "keys may contain only letters, digits, '_' and '-', separated by '.'")
		}
	}
	return path{root: "data", keys: keys}, nil
}

func keyChars(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func truncate(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:64] + "…"
}

// node is one condition of a parsed filter.
type node interface {
	match(ev *Event) bool
}

// all holds when each of its nodes does.
type all []node

func (a all) match(ev *Event) bool {
	for _, n := range a {
		if !n.match(ev) {
			return false
		}
	}
	return true
}

// anyOf holds when one of its nodes does.
type anyOf []node

func (a anyOf) match(ev *Event) bool {
	for _, n := range a {
		if n.match(ev) {
			return true
		}
	}
	return false
}

// cond is one operator on one field.
type cond struct {
	at      path
	op      string
	operand any   // a scalar: string, float64, bool or nil
	list    []any // $in, $nin
	exists  bool  // $exists
}

func (c cond) match(ev *Event) bool {
	v, ok := ev.lookup(c.at)
	switch c.op {
	case "$exists":
		return ok == c.exists
	case "$eq":
		return ok && equal(v, c.operand)
	case "$neq":
		return !ok || !equal(v, c.operand)
	case "$in":
		return ok && member(v, c.list)
	case "$nin":
		return !ok || !member(v, c.list)
	case "$glob":
		s, isStr := v.(string)
		return ok && isStr && domain.MatchGlob(c.operand.(string), s)
	}
	if !ok {
		return false
	}
	cmp, comparable := compare(v, c.operand)
	if !comparable {
		return false
	}
	switch c.op {
	case "$gt":
		return cmp > 0
	case "$gte":
		return cmp >= 0
	case "$lt":
		return cmp < 0
	default: // $lte
		return cmp <= 0
	}
}

// equal compares a decoded JSON value with a scalar operand: same kind
// and same value. Arrays and objects equal no scalar.
func equal(v, operand any) bool {
	switch o := operand.(type) {
	case nil:
		return v == nil
	case string:
		s, ok := v.(string)
		return ok && s == o
	case float64:
		n, ok := v.(float64)
		return ok && n == o
	case bool:
		b, ok := v.(bool)
		return ok && b == o
	}
	return false
}

func member(v any, list []any) bool {
	for _, o := range list {
		if equal(v, o) {
			return true
		}
	}
	return false
}

// compare orders v against a number or string operand of the same kind.
func compare(v, operand any) (int, bool) {
	switch o := operand.(type) {
	case float64:
		n, ok := v.(float64)
		switch {
		case !ok:
			return 0, false
		case n < o:
			return -1, true
		case n > o:
			return 1, true
		}
		return 0, true
	case string:
		s, ok := v.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(s, o), true
	}
	return 0, false
}

type parser struct {
	conditions int
	fields     map[string]bool
}

// filter parses an object of fields (and $and/$or) at depth.
func (p *parser) filter(v any, depth int) (all, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fail("", "every member of $and and $or must be an object")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	// Sorted, so the first error reported does not depend on map order.
	sort.Strings(keys)
	var out all
	for _, k := range keys {
		switch {
		case k == "$and" || k == "$or":
			n, err := p.logical(k, obj[k], depth)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		case strings.HasPrefix(k, "$"):
			return nil, fail("", "unknown operator %q at the top of a filter (use $and or $or)", truncate(k))
		default:
			ns, err := p.field(k, obj[k])
			if err != nil {
				return nil, err
			}
			out = append(out, ns...)
		}
	}
	return out, nil
}

func (p *parser) logical(op string, v any, depth int) (node, error) {
	if depth+1 > MaxDepth {
		return nil, fail("", "$and and $or nest deeper than %d", MaxDepth)
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 || len(list) > MaxListLen {
		return nil, fail("", "%s takes an array of 1..%d filters", op, MaxListLen)
	}
	members := make([]node, 0, len(list))
	for _, m := range list {
		f, err := p.filter(m, depth+1)
		if err != nil {
			return nil, err
		}
		members = append(members, f)
	}
	if op == "$and" {
		return all(members), nil
	}
	return anyOf(members), nil
}

// field parses the condition of one field path.
func (p *parser) field(name string, v any) ([]node, error) {
	at, err := parsePath(name)
	if err != nil {
		return nil, err
	}
	p.fields[name] = true
	ops, isObj := v.(map[string]any)
	if !isObj {
		// A scalar is $eq.
		ops = map[string]any{"$eq": v}
	}
	if len(ops) == 0 {
		return nil, fail(name, "has no operator")
	}
	keys := make([]string, 0, len(ops))
	for k := range ops {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]node, 0, len(keys))
	for _, op := range keys {
		if p.conditions++; p.conditions > MaxConditions {
			return nil, fail(name, "the filter has more than %d conditions", MaxConditions)
		}
		c := cond{at: at, op: op}
		arg := ops[op]
		switch op {
		case "$eq", "$neq":
			c.operand, err = scalar(name, op, arg)
		case "$in", "$nin":
			c.list, err = scalars(name, op, arg)
		case "$exists":
			b, ok := arg.(bool)
			if !ok {
				err = fail(name, "$exists takes true or false")
			}
			c.exists = b
		case "$gt", "$gte", "$lt", "$lte":
			c.operand, err = scalar(name, op, arg)
			switch c.operand.(type) {
			case float64, string:
			default:
				if err == nil {
					err = fail(name, "%s takes a number or a string", op)
				}
			}
		case "$glob":
			s, ok := arg.(string)
			switch {
			case !ok || s == "" || len(s) > MaxStringLen:
				err = fail(name, "$glob takes a pattern of 1..%d bytes", MaxStringLen)
			case domain.CanonicalGlob(s) != s:
				err = fail(name, "$glob takes a pattern in its one canonical form: write %q", domain.CanonicalGlob(s))
			}
			c.operand = s
		default:
			if strings.HasPrefix(op, "$") {
				return nil, fail(name, "unknown operator %q", truncate(op))
			}
			return nil, fail(name, "nested objects are not conditions: name nested keys with dotted paths (data.a.b)")
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// scalar converts a decoded operand to string, float64, bool or nil.
func scalar(field, op string, v any) (any, error) {
	switch x := v.(type) {
	case nil, bool:
		return x, nil
	case string:
		if len(x) > MaxStringLen {
			return nil, fail(field, "%s: string longer than %d bytes", op, MaxStringLen)
		}
		return x, nil
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, fail(field, "%s: number out of range", op)
		}
		return f, nil
	}
	return nil, fail(field, "%s takes a string, number, boolean or null", op)
}

func scalars(field, op string, v any) ([]any, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 || len(list) > MaxListLen {
		return nil, fail(field, "%s takes an array of 1..%d values", op, MaxListLen)
	}
	out := make([]any, len(list))
	for i, x := range list {
		s, err := scalar(field, op, x)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}
