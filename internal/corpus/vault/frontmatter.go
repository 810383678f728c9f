// Package vault reads a vault — a zip of markdown files with front matter,
// as Obsidian and similar tools keep notes — into the items of a corpus
// import. It only parses; the corpus use case validates and writes.
package vault

import (
	"fmt"
	"strconv"
	"strings"
)

// FrontMatter is the metadata block at the top of a markdown file:
//
//	---
//	title: Architecture
//	tags: [go, postgres]
//	published: true
//	---
//
// Only a flat subset of YAML is read: "key: value" lines whose value is a
// scalar (plain, 'single' or "double" quoted), an inline list [a, b], or a
// block list of "- item" lines under an empty value. Comments (#) and blank
// lines are skipped, and so are the indented lines of nested maps, which no
// field here uses.
type FrontMatter map[string]Value

// Value is one front-matter value: a scalar or a list.
type Value struct {
	Scalar string
	List   []string
	IsList bool
}

// SplitFrontMatter separates the front matter from the body. A file that
// does not start with a "---" line has no front matter; one whose block is
// never closed is an error.
func SplitFrontMatter(src string) (FrontMatter, string, error) {
	src = strings.TrimPrefix(src, "\ufeff")
	first, rest, ok := cutLine(src)
	if !ok && first == "" || strings.TrimRight(first, " \t") != "---" {
		return FrontMatter{}, src, nil
	}
	var lines []string
	for {
		line, after, more := cutLine(rest)
		if t := strings.TrimRight(line, " \t"); t == "---" || t == "..." {
			fm, err := parseFrontMatter(lines)
			return fm, after, err
		}
		if !more {
			return nil, "", fmt.Errorf("front matter is not closed with a --- line")
		}
		lines = append(lines, line)
		rest = after
	}
}

// cutLine returns the first line of s (without its \n or \r\n), the rest,
// and whether a newline ended the line.
func cutLine(s string) (line, rest string, ok bool) {
	line, rest, ok = strings.Cut(s, "\n")
	return strings.TrimSuffix(line, "\r"), rest, ok
}

func parseFrontMatter(lines []string) (FrontMatter, error) {
	fm := FrontMatter{}
	var listKey string // the key whose block list is being read
	for i, raw := range lines {
		line := strings.TrimRight(raw, " \t")
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if item, ok := strings.CutPrefix(trimmed, "- "); ok || trimmed == "-" {
			if listKey == "" {
				continue // an item of something nested; not ours
			}
			v, err := scalar(strings.TrimSpace(item))
			if err != nil {
				return nil, fmt.Errorf("front matter line %d: %w", i+2, err)
			}
			cur := fm[listKey]
			cur.List = append(cur.List, v)
			cur.IsList = true
			fm[listKey] = cur
			continue
		}
		if trimmed != line {
			continue // indented: a nested map's line
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("front matter line %d: want \"key: value\", got %q", i+2, line)
		}
		key = strings.ToLower(strings.TrimSpace(key))
		val = strings.TrimSpace(val)
		listKey = ""
		switch {
		case val == "":
			fm[key] = Value{}
			listKey = key
		case strings.HasPrefix(val, "["):
			items, err := inlineList(val)
			if err != nil {
				return nil, fmt.Errorf("front matter line %d: %w", i+2, err)
			}
			fm[key] = Value{List: items, IsList: true}
		default:
			v, err := scalar(val)
			if err != nil {
				return nil, fmt.Errorf("front matter line %d: %w", i+2, err)
			}
			fm[key] = Value{Scalar: v}
		}
	}
	return fm, nil
}

// scalar unquotes a quoted value and drops a trailing " # comment" from a
// plain one.
func scalar(v string) (string, error) {
	switch {
	case strings.HasPrefix(v, `"`):
		end := closingQuote(v)
		if end < 0 {
			return "", fmt.Errorf("unclosed double quote in %q", v)
		}
		s, err := strconv.Unquote(v[:end+1])
		if err != nil {
			return "", fmt.Errorf("bad double-quoted value %q", v)
		}
		return s, nil
	case strings.HasPrefix(v, "'"):
		body := v[1:]
		var b strings.Builder
		for {
			i := strings.IndexByte(body, '\'')
			if i < 0 {
				return "", fmt.Errorf("unclosed single quote in %q", v)
			}
			b.WriteString(body[:i])
			if strings.HasPrefix(body[i+1:], "'") { // '' is an escaped quote
				b.WriteByte('\'')
				body = body[i+2:]
				continue
			}
			return b.String(), nil
		}
	default:
		if i := strings.Index(v, " #"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		return v, nil
	}
}

// closingQuote returns the index of the quote that closes the double-quoted
// string starting at v[0], or -1.
func closingQuote(v string) int {
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// inlineList parses "[a, 'b', "c, d"]".
func inlineList(v string) ([]string, error) {
	if !strings.HasSuffix(v, "]") {
		return nil, fmt.Errorf("unclosed list %q", v)
	}
	inner := strings.TrimSpace(v[1 : len(v)-1])
	var out []string
	for inner != "" {
		var item string
		switch inner[0] {
		case '"':
			end := closingQuote(inner)
			if end < 0 {
				return nil, fmt.Errorf("unclosed quote in list %q", v)
			}
			s, err := scalar(inner[:end+1])
			if err != nil {
				return nil, err
			}
			item, inner = s, inner[end+1:]
		case '\'':
			end := strings.IndexByte(inner[1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unclosed quote in list %q", v)
			}
			item, inner = inner[1:end+1], inner[end+2:]
		default:
			i := strings.IndexByte(inner, ',')
			if i < 0 {
				i = len(inner)
			}
			item, inner = strings.TrimSpace(inner[:i]), inner[i:]
		}
		out = append(out, item)
		inner = strings.TrimSpace(inner)
		if inner == "" {
			break
		}
		if inner[0] != ',' {
			return nil, fmt.Errorf("want ',' between list items in %q", v)
		}
		inner = strings.TrimSpace(inner[1:])
	}
	return out, nil
}

// String returns a scalar value, or "" for a list or an absent key.
func (fm FrontMatter) String(key string) string {
	return fm[key].Scalar
}

// Strings returns a list value; a scalar is split at commas (and, when it
// has none, at spaces), as tools write "tags: a, b" or "tags: a b".
func (fm FrontMatter) Strings(keys ...string) []string {
	for _, k := range keys {
		v, ok := fm[k]
		if !ok {
			continue
		}
		if v.IsList {
			return v.List
		}
		sep := func(r rune) bool { return r == ',' }
		if !strings.Contains(v.Scalar, ",") {
			sep = func(r rune) bool { return r == ' ' || r == '\t' }
		}
		var out []string
		for _, p := range strings.FieldsFunc(v.Scalar, sep) {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	return nil
}

// Bool returns a boolean value (true/false, yes/no, on/off); absent is
// false.
func (fm FrontMatter) Bool(key string) (bool, error) {
	v, ok := fm[key]
	if !ok {
		return false, nil
	}
	switch strings.ToLower(v.Scalar) {
	case "true", "yes", "on":
		return true, nil
	case "false", "no", "off", "":
		return false, nil
	}
	return false, fmt.Errorf("%s: want true or false, got %q", key, v.Scalar)
}
