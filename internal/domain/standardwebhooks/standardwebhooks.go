// Package standardwebhooks signs and verifies webhooks as the Standard
// Webhooks specification v1 defines them: HMAC-SHA256 over
// "<webhook-id>.<webhook-timestamp>.<raw body>", sent as
// `webhook-signature: v1,<base64>`, with the key being the base64-decoded part
// of a `whsec_` secret; and its asymmetric v1a: ed25519 over the same
// bytes, sent as `v1a,<base64>`, with a `whsk_` private key whose `whpk_`
// public key is all a receiver holds (see Key).
//
// Signing is byte-for-byte what the reference libraries produce, so any
// receiver using them verifies StandMeet's deliveries. Verification is
// deliberately stricter than the reference Go library (see Verifier.Verify):
// it refuses short keys, duplicated headers, ids containing '.', and padded
// or signed timestamps, which the reference accepts.
//
// The package is pure: standard library only, no clock (callers pass now).
package standardwebhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header names of the specification, in canonical form.
const (
	// HeaderID carries the message id, the same on every retry.
	HeaderID = "Webhook-Id"
	// HeaderTimestamp carries the unix seconds of the attempt.
	HeaderTimestamp = "Webhook-Timestamp"
	// HeaderSignature carries the space-separated signature list.
	HeaderSignature = "Webhook-Signature"
)

// Limits enforced by Verify and ParseSecret.
const (
	// SecretPrefix starts every secret NewSecret returns.
	SecretPrefix = "whsec_"
	// MinKeyLen and MaxKeyLen bound the decoded key (the specification's range).
	MinKeyLen = 24
	// MaxKeyLen is the largest accepted decoded key.
	MaxKeyLen = 64
	// MaxMessageIDLen bounds webhook-id.
	MaxMessageIDLen = 256
	// MaxSignatures bounds the entries of webhook-signature.
	MaxSignatures = 10
	// MaxSignatureHeaderLen bounds webhook-signature before it is split, so a
	// huge header costs nothing. Ten v1 entries take under 500 bytes.
	MaxSignatureHeaderLen = 2048
	// DefaultTolerance is the clock skew accepted both ways, as in the
	// reference libraries.
	DefaultTolerance = 5 * time.Minute
)

// newKeyLen is the size of the keys NewSecret generates.
const newKeyLen = 32

// maxTimestampDigits keeps parsed timestamps far from int64 overflow; any
// value that long is outside every tolerance anyway.
const maxTimestampDigits = 18

// Sentinel errors; Verify wraps them with detail, compare with errors.Is.
var (
	// ErrMissingHeader: a required header is absent or empty.
	ErrMissingHeader = errors.New("standardwebhooks: missing header")
	// ErrInvalidHeader: a header is duplicated, too long or not in its strict form.
	ErrInvalidHeader = errors.New("standardwebhooks: invalid header")
	// ErrStale: the timestamp is older than the tolerance.
	ErrStale = errors.New("standardwebhooks: timestamp too old")
	// ErrFuture: the timestamp is further ahead than the tolerance.
	ErrFuture = errors.New("standardwebhooks: timestamp too far in the future")
	// ErrNoMatch: no v1 entry of the signature list matches any key.
	ErrNoMatch = errors.New("standardwebhooks: no matching signature")
	// ErrInvalidSecret: a secret or key is malformed or outside MinKeyLen..MaxKeyLen.
	ErrInvalidSecret = errors.New("standardwebhooks: invalid secret")
)

// HeaderError says which header is at fault. It wraps ErrMissingHeader or
// ErrInvalidHeader, so errors.Is works on it and errors.As recovers the name
// (a caller may treat a missing signature differently from a missing id).
type HeaderError struct {
	// Header is the canonical header name.
	Header string
	// Err is ErrMissingHeader or ErrInvalidHeader.
	Err error
	// Reason says what is wrong, without echoing the value.
	Reason string
}

// Error implements error.
func (e *HeaderError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("%v: %s", e.Err, e.Header)
	}
	return fmt.Sprintf("%v: %s: %s", e.Err, e.Header, e.Reason)
}

// Unwrap returns ErrMissingHeader or ErrInvalidHeader.
func (e *HeaderError) Unwrap() error { return e.Err }

func invalid(header, reason string) error {
	return &HeaderError{Header: header, Err: ErrInvalidHeader, Reason: reason}
}

// NewSecret returns a fresh secret: "whsec_" followed by standard base64 of
// 32 random bytes.
func NewSecret() (string, error) {
	key := make([]byte, newKeyLen)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("standardwebhooks: read random key: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// ParseSecret returns the key of a secret: the optional "whsec_" prefix is
// stripped and the rest decoded as standard base64 (with padding). The key
// must be MinKeyLen..MaxKeyLen bytes, the specification's range, which the
// reference Go library does not enforce (it accepts a 5-byte key). Errors
// wrap ErrInvalidSecret and never echo the secret.
func ParseSecret(s string) ([]byte, error) {
	key, err := base64.StdEncoding.Strict().DecodeString(strings.TrimPrefix(s, SecretPrefix))
	if err != nil {
		return nil, fmt.Errorf("%w: not whsec_ followed by standard base64", ErrInvalidSecret)
	}
	if err := checkKeyLen(key); err != nil {
		return nil, err
	}
	return key, nil
}

func checkKeyLen(key []byte) error {
	if len(key) < MinKeyLen || len(key) > MaxKeyLen {
		return fmt.Errorf("%w: key is %d bytes, want %d..%d", ErrInvalidSecret, len(key), MinKeyLen, MaxKeyLen)
	}
	return nil
}

// Sign returns the webhook-signature value for one key:
// "v1," + base64(HMAC-SHA256(key, msgID + "." + unix seconds + "." + body)).
// It signs whatever it is given; ids a strict receiver accepts are those
// ValidateMessageID accepts.
func Sign(key []byte, msgID string, ts time.Time, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, msgID, strconv.FormatInt(ts.Unix(), 10), body))
}

// SignAll returns one v1 entry per key, space-separated, in key order. During
// a secret rotation the sender signs with both secrets, so receivers holding
// either one verify the message.
func SignAll(keys [][]byte, msgID string, ts time.Time, body []byte) string {
	entries := make([]string, len(keys))
	for i, k := range keys {
		entries[i] = Sign(k, msgID, ts, body)
	}
	return strings.Join(entries, " ")
}

func mac(key []byte, msgID, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msgID))
	h.Write([]byte{'.'})
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Verifier checks incoming messages against one or more keys (several while
// the sender rotates its secret). It is immutable and safe for concurrent use.
type Verifier struct {
	keys      [][]byte
	tolerance time.Duration
}

// NewVerifier builds a Verifier accepting messages signed with any of keys
// (each MinKeyLen..MaxKeyLen bytes; see ParseSecret) whose timestamp is within
// tolerance of now, both ways. A zero tolerance means DefaultTolerance; it
// must otherwise be at least one second, the timestamp's resolution.
func NewVerifier(tolerance time.Duration, keys ...[]byte) (*Verifier, error) {
	if tolerance == 0 {
		tolerance = DefaultTolerance
	}
	if tolerance < time.Second {
		return nil, fmt.Errorf("standardwebhooks: tolerance %v is below one second", tolerance)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no key", ErrInvalidSecret)
	}
	v := &Verifier{tolerance: tolerance, keys: make([][]byte, len(keys))}
	for i, k := range keys {
		if err := checkKeyLen(k); err != nil {
			return nil, err
		}
		v.keys[i] = append([]byte(nil), k...)
	}
	return v, nil
}

// Verify authenticates a message from its headers and exact raw body, and
// returns its id and timestamp. Checks, in order:
//
//  1. webhook-id, webhook-timestamp and webhook-signature each appear exactly
//     once (header names match case-insensitively, also in a hand-built
//     header map; an http.Header or a domain.Header is passed as it is);
//     absent or empty is ErrMissingHeader, twice is ErrInvalidHeader. The reference library silently takes the first.
//  2. The id passes ValidateMessageID and the timestamp ParseTimestamp, both
//     verbatim: these values are signed, so nothing is trimmed.
//  3. The signature list: surrounding spaces/tabs are ignored and entries are
//     separated by one or more spaces or tabs (the specification says a
//     single space; extra blanks cannot change which entries exist, since
//     entries contain none). More than MaxSignatures entries, or an entry
//     without a "version," part, is ErrInvalidHeader. A list folded by a proxy
//     with ", " is not a valid list: its entries carry a trailing comma and
//     do not match. Entries with another version than "v1" (such as v1a) are
//     skipped; a v1 entry matches when its strict base64 decodes to the
//     HMAC of some key, compared in constant time (hmac.Equal). No match is
//     ErrNoMatch.
//  4. Only an authentic message has its timestamp checked: older than the
//     tolerance is ErrStale, further ahead is ErrFuture. So ErrStale and
//     ErrFuture always mean "genuine but out of window" (clock skew or a
//     replay), never noise from an attacker.
//
// Header problems are returned as *HeaderError.
func (v *Verifier) Verify(headers map[string][]string, body []byte, now time.Time) (msgID string, ts time.Time, err error) {
	msgID, err = single(headers, HeaderID)
	if err != nil {
		return "", time.Time{}, err
	}
	rawTS, err := single(headers, HeaderTimestamp)
	if err != nil {
		return "", time.Time{}, err
	}
	rawSig, err := single(headers, HeaderSignature)
	if err != nil {
		return "", time.Time{}, err
	}
	if err := ValidateMessageID(msgID); err != nil {
		return "", time.Time{}, err
	}
	ts, err = ParseTimestamp(rawTS)
	if err != nil {
		return "", time.Time{}, err
	}
	sigs, err := ParseSignatureList(rawSig)
	if err != nil {
		return "", time.Time{}, err
	}
	if !v.matches(sigs, msgID, rawTS, body) {
		return "", time.Time{}, ErrNoMatch
	}
	switch d := now.Sub(ts); {
	case d > v.tolerance:
		return "", time.Time{}, fmt.Errorf("%w: %s old, tolerance %s", ErrStale, d.Truncate(time.Second), v.tolerance)
	case d < -v.tolerance:
		return "", time.Time{}, fmt.Errorf("%w: %s ahead, tolerance %s", ErrFuture, (-d).Truncate(time.Second), v.tolerance)
	}
	return msgID, ts, nil
}

func (v *Verifier) matches(sigs []Signature, msgID, rawTS string, body []byte) bool {
	for _, k := range v.keys {
		want := mac(k, msgID, rawTS, body)
		for _, s := range sigs {
			if s.Version != "v1" {
				continue
			}
			got, err := base64.StdEncoding.Strict().DecodeString(s.Value)
			if err != nil {
				continue
			}
			if hmac.Equal(got, want) {
				return true
			}
		}
	}
	return false
}

// single returns the only value of the header name, matching names
// case-insensitively so a non-canonical key in a hand-built header map can
// neither hide a value nor smuggle in a second one.
func single(h map[string][]string, name string) (string, error) {
	var (
		val   string
		count int
	)
	for k, vs := range h {
		if !strings.EqualFold(k, name) {
			continue
		}
		for _, v := range vs {
			count++
			val = v
		}
	}
	switch {
	case count == 0 || count == 1 && val == "":
		return "", &HeaderError{Header: name, Err: ErrMissingHeader}
	case count > 1:
		return "", invalid(name, "given more than once")
	}
	return val, nil
}

// ValidateMessageID checks a message id: 1..MaxMessageIDLen bytes of visible
// ASCII (0x21..0x7e) other than '.'. The signed content is
// "id.timestamp.body", so a '.' in the id would let two different
// (id, timestamp) pairs sign the same bytes; spaces and control characters
// have no business in an id and break logs. Errors are *HeaderError.
func ValidateMessageID(id string) error {
	if id == "" {
		return &HeaderError{Header: HeaderID, Err: ErrMissingHeader}
	}
	if len(id) > MaxMessageIDLen {
		return invalid(HeaderID, fmt.Sprintf("longer than %d bytes", MaxMessageIDLen))
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c == '.':
			return invalid(HeaderID, "contains '.'")
		case c <= ' ' || c >= 0x7f:
			return invalid(HeaderID, "contains a space, control or non-ASCII character")
		}
	}
	return nil
}

// ParseTimestamp parses webhook-timestamp: unix seconds as plain decimal
// digits, without sign, leading zeros, spaces or fraction ("0" itself is
// allowed). The reference library uses strconv.ParseInt and so accepts
// "+1614265330" and "01614265330"; being strict means there is exactly one
// spelling of each signed timestamp. Errors are *HeaderError.
func ParseTimestamp(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, &HeaderError{Header: HeaderTimestamp, Err: ErrMissingHeader}
	}
	if len(s) > maxTimestampDigits {
		return time.Time{}, invalid(HeaderTimestamp, "too many digits")
	}
	if s[0] == '0' && len(s) > 1 {
		return time.Time{}, invalid(HeaderTimestamp, "leading zero")
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return time.Time{}, invalid(HeaderTimestamp, "not plain decimal unix seconds")
		}
		n = n*10 + int64(c-'0')
	}
	return time.Unix(n, 0), nil
}

// Signature is one entry of a webhook-signature list.
type Signature struct {
	// Version is the part before the first comma, such as "v1" or "v1a".
	Version string
	// Value is the rest, for v1 the base64 HMAC (not decoded here).
	Value string
}

// ParseSignatureList splits a webhook-signature value into its entries; see
// Verifier.Verify for the whitespace rules. It checks structure only (bounds,
// "version,value" form with both parts non-empty), not the values. Errors are
// *HeaderError.
func ParseSignatureList(s string) ([]Signature, error) {
	if len(s) > MaxSignatureHeaderLen {
		return nil, invalid(HeaderSignature, fmt.Sprintf("longer than %d bytes", MaxSignatureHeaderLen))
	}
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
	if len(fields) == 0 {
		return nil, &HeaderError{Header: HeaderSignature, Err: ErrMissingHeader}
	}
	if len(fields) > MaxSignatures {
		return nil, invalid(HeaderSignature, fmt.Sprintf("more than %d entries", MaxSignatures))
	}
	sigs := make([]Signature, len(fields))
	for i, f := range fields {
		version, value, ok := strings.Cut(f, ",")
		if !ok || version == "" || value == "" {
			return nil, invalid(HeaderSignature, fmt.Sprintf("entry %d is not \"version,signature\"", i+1))
		}
		for j := 0; j < len(f); j++ {
			if c := f[j]; c < 0x21 || c > 0x7e {
				return nil, invalid(HeaderSignature, fmt.Sprintf("entry %d contains a control or non-ASCII character", i+1))
			}
		}
		sigs[i] = Signature{Version: version, Value: value}
	}
	return sigs, nil
}
