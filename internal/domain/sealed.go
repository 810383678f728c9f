package domain

import (
	"encoding/base64"
	"strings"
)

// SealedTextPrefix marks a text value that carries sealed bytes (the
// instance's AEAD output) as base64, where a column or a JSON member holds
// text: a custom webhook header's value, for one.
const SealedTextPrefix = "sealed:v1:"

// SealedText writes sealed bytes as text.
func SealedText(sealed []byte) string {
	return SealedTextPrefix + base64.StdEncoding.EncodeToString(sealed)
}

// OpenSealedText returns the sealed bytes a SealedText value carries, and
// false for any other text (a value stored before it was sealed).
func OpenSealedText(s string) ([]byte, bool) {
	rest, ok := strings.CutPrefix(s, SealedTextPrefix)
	if !ok {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, false
	}
	return b, true
}
