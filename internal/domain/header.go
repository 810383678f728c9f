package domain

import "net/textproto"

// Header is the header of an HTTP message as the domains see it: names in
// canonical form (CanonicalHeaderKey) mapped to their values, in order. It
// has the shape of net/http's Header, so an adapter converts one into the
// other with a plain conversion, and the domains need no HTTP package.
type Header map[string][]string

// CanonicalHeaderKey returns the canonical form of a header name
// ("content-type" → "Content-Type"), as HTTP/1 servers present them.
func CanonicalHeaderKey(name string) string { return textproto.CanonicalMIMEHeaderKey(name) }

// Get returns the first value of name, or "".
func (h Header) Get(name string) string {
	if vs := h[CanonicalHeaderKey(name)]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

// Values returns every value of name.
func (h Header) Values(name string) []string { return h[CanonicalHeaderKey(name)] }

// Set replaces the values of name with value.
func (h Header) Set(name, value string) { h[CanonicalHeaderKey(name)] = []string{value} }

// Add appends value to the values of name.
func (h Header) Add(name, value string) {
	k := CanonicalHeaderKey(name)
	h[k] = append(h[k], value)
}

// Del removes name.
func (h Header) Del(name string) { delete(h, CanonicalHeaderKey(name)) }

// Clone returns a copy whose value slices are copies too; nil stays nil.
func (h Header) Clone() Header {
	if h == nil {
		return nil
	}
	out := make(Header, len(h))
	for k, vs := range h {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
