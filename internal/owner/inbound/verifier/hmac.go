package verifier

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/standmeet/standmeet/internal/domain"
)

// Values of HMACOptions fields.
const (
	// EncodingHex: the signature is hex (either case).
	EncodingHex = "hex"
	// EncodingBase64: the signature is standard base64 with padding.
	EncodingBase64 = "base64"

	// PayloadBody signs the raw body.
	PayloadBody = "body"
	// PayloadTimestampBody signs "<timestamp header value>.<raw body>".
	PayloadTimestampBody = "timestamp.body"
	// PayloadIDTimestampBody signs "<id>.<timestamp header value>.<raw body>".
	PayloadIDTimestampBody = "id.timestamp.body"

	// TimestampUnix is plain decimal unix seconds.
	TimestampUnix = "unix"
	// TimestampUnixMs is plain decimal unix milliseconds.
	TimestampUnixMs = "unix_ms"
	// TimestampRFC3339 is an RFC 3339 date-time.
	TimestampRFC3339 = "rfc3339"
)

// maxPrefixLen bounds HMACOptions.SignaturePrefix.
const maxPrefixLen = 32

// HMACOptions configure the generic hmac kind: HMAC-SHA256 keyed with the raw
// bytes of the pasted secret. Header names are matched case-insensitively and
// stored canonical.
type HMACOptions struct {
	// SignatureHeader carries the signature (required), e.g. "X-Signature".
	SignatureHeader string `json:"signature_header"`
	// SignaturePrefix precedes the encoded signature, e.g. "sha256=" (case-sensitive; default none).
	SignaturePrefix string `json:"signature_prefix,omitempty"`
	// Encoding of the signature: "hex" (default) or "base64".
	Encoding string `json:"encoding"`
	// Payload is what is signed: "body" (default), "timestamp.body" or "id.timestamp.body".
	Payload string `json:"payload"`
	// TimestampHeader carries the timestamp; required exactly when Payload signs one.
	TimestampHeader string `json:"timestamp_header,omitempty"`
	// TimestampFormat is "unix" (default), "unix_ms" or "rfc3339"; only with TimestampHeader.
	TimestampFormat string `json:"timestamp_format,omitempty"`
	// IDHeader carries the message id; required when Payload signs one. Without
	// it the id is the hex SHA-256 of the body.
	IDHeader string `json:"id_header,omitempty"`
	// EventTypeHeader optionally carries the event type (unsigned).
	EventTypeHeader string `json:"event_type_header,omitempty"`
	// ToleranceSeconds is the window both ways (default 300); only with TimestampHeader.
	ToleranceSeconds int `json:"tolerance_seconds,omitempty"`
}

type hmacFactory struct{}

// HMAC returns the factory of the generic hmac kind, for providers that sign
// with HMAC-SHA256 in their own header layout (see HMACOptions). The secret
// is pasted from the provider and used as raw bytes, as most such providers
// do. A timestamp header is accepted only when the payload signs it: an
// unsigned timestamp would look like replay protection without being any.
func HMAC() Factory { return hmacFactory{} }

// GeneratesSecret is false: the owner pastes the provider's secret.
func (hmacFactory) GeneratesSecret() bool { return false }

// NewSecret fails: the secret comes from the provider.
func (hmacFactory) NewSecret() ([]byte, error) {
	return nil, invalidSecret("the hmac kind takes the provider's secret; paste it")
}

// ValidateSecret applies the pasted-secret rules (MinPastedSecretLen bytes).
func (hmacFactory) ValidateSecret(secret []byte) error { return validatePastedSecret(secret, "") }

// ValidateOptions normalizes HMACOptions: defaults filled in, header names
// canonical.
func (hmacFactory) ValidateOptions(raw json.RawMessage) (json.RawMessage, error) {
	o, err := parseHMACOptions(raw)
	if err != nil {
		return nil, err
	}
	return encodeOptions(o)
}

// New builds the verifier.
func (hmacFactory) New(options json.RawMessage) (Verifier, error) {
	o, err := parseHMACOptions(options)
	if err != nil {
		return nil, err
	}
	return hmacVerifier{o: o}, nil
}

func parseHMACOptions(raw json.RawMessage) (HMACOptions, error) {
	var o HMACOptions
	if err := decodeOptions(raw, &o); err != nil {
		return o, err
	}
	if o.SignatureHeader == "" {
		return o, invalidOptions("signature_header is required")
	}
	names := map[string]string{}
	for _, h := range []struct {
		field string
		name  *string
	}{
		{"signature_header", &o.SignatureHeader},
		{"timestamp_header", &o.TimestampHeader},
		{"id_header", &o.IDHeader},
		{"event_type_header", &o.EventTypeHeader},
	} {
		if *h.name == "" {
			continue
		}
		if !validHeaderName(*h.name) {
			return o, invalidOptions("%s is not a valid HTTP header name", h.field)
		}
		*h.name = domain.CanonicalHeaderKey(*h.name)
		if other, dup := names[*h.name]; dup {
			return o, invalidOptions("%s and %s name the same header", other, h.field)
		}
		names[*h.name] = h.field
	}

	if len(o.SignaturePrefix) > maxPrefixLen || !visibleASCII(o.SignaturePrefix) {
		return o, invalidOptions("signature_prefix must be at most %d visible ASCII characters", maxPrefixLen)
	}
	switch o.Encoding {
	case "":
		o.Encoding = EncodingHex
	case EncodingHex, EncodingBase64:
	default:
		return o, invalidOptions("encoding must be %q or %q", EncodingHex, EncodingBase64)
	}
	switch o.Payload {
	case "":
		o.Payload = PayloadBody
	case PayloadBody, PayloadTimestampBody, PayloadIDTimestampBody:
	default:
		return o, invalidOptions("payload must be %q, %q or %q", PayloadBody, PayloadTimestampBody, PayloadIDTimestampBody)
	}

	signsTimestamp := o.Payload != PayloadBody
	switch {
	case signsTimestamp && o.TimestampHeader == "":
		return o, invalidOptions("payload %q needs timestamp_header", o.Payload)
	case !signsTimestamp && o.TimestampHeader != "":
		return o, invalidOptions("timestamp_header needs a payload that signs the timestamp (%q or %q); an unsigned timestamp protects nothing", PayloadTimestampBody, PayloadIDTimestampBody)
	case o.Payload == PayloadIDTimestampBody && o.IDHeader == "":
		return o, invalidOptions("payload %q needs id_header", o.Payload)
	}
	if !signsTimestamp {
		if o.TimestampFormat != "" || o.ToleranceSeconds != 0 {
			return o, invalidOptions("timestamp_format and tolerance_seconds need timestamp_header")
		}
		return o, nil
	}
	switch o.TimestampFormat {
	case "":
		o.TimestampFormat = TimestampUnix
	case TimestampUnix, TimestampUnixMs, TimestampRFC3339:
	default:
		return o, invalidOptions("timestamp_format must be %q, %q or %q", TimestampUnix, TimestampUnixMs, TimestampRFC3339)
	}
	tol, err := tolerance(o.ToleranceSeconds)
	o.ToleranceSeconds = tol
	return o, err
}

type hmacVerifier struct {
	o HMACOptions
}

func (v hmacVerifier) Verify(req Request, secret []byte, now time.Time) (Result, error) {
	if err := validatePastedSecret(secret, ""); err != nil {
		return Result{}, misconfigured(err)
	}
	raw, err := signatureHeader(req.Headers, v.o.SignatureHeader)
	if err != nil {
		return Result{}, err
	}
	sig, err := v.parseSignature(raw)
	if err != nil {
		return Result{}, err
	}

	res := Result{MessageID: bodyDigest(req.Body), MessageIDSigned: true}
	var rawTS string
	if v.o.TimestampHeader != "" {
		if rawTS, err = requiredHeader(req.Headers, v.o.TimestampHeader); err != nil {
			return Result{}, err
		}
		if res.Timestamp, err = parseHMACTimestamp(rawTS, v.o.TimestampFormat); err != nil {
			return Result{}, malformed("header %s: %v", v.o.TimestampHeader, err)
		}
	}
	if v.o.IDHeader != "" {
		if res.MessageID, err = requiredHeader(req.Headers, v.o.IDHeader); err != nil {
			return Result{}, err
		}
		if err := messageID(v.o.IDHeader, res.MessageID); err != nil {
			return Result{}, err
		}
		res.MessageIDSigned = v.o.Payload == PayloadIDTimestampBody
	}
	if v.o.EventTypeHeader != "" {
		if res.EventType, err = requiredHeader(req.Headers, v.o.EventTypeHeader); err != nil {
			return Result{}, err
		}
		if !validEventType(res.EventType) {
			return Result{}, malformed("header %s is not 1..%d visible ASCII characters", v.o.EventTypeHeader, MaxEventTypeLen)
		}
	}

	m := hmac.New(sha256.New, secret)
	switch v.o.Payload {
	case PayloadIDTimestampBody:
		m.Write([]byte(res.MessageID + "." + rawTS + "."))
	case PayloadTimestampBody:
		m.Write([]byte(rawTS + "."))
	}
	m.Write(req.Body)
	if sig == nil || !hmac.Equal(sig, m.Sum(nil)) {
		return Result{}, unauthorized("%s does not match", v.o.SignatureHeader)
	}
	if v.o.TimestampHeader != "" {
		if err := checkWindow(res.Timestamp, now, v.o.ToleranceSeconds); err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

// parseSignature strips the configured prefix and decodes a trimmed
// signature value. A missing prefix is ErrUnauthorized (no signature in the
// expected form); a value that does not decode to 32 bytes returns a nil
// signature, which never matches.
func (v hmacVerifier) parseSignature(raw string) ([]byte, error) {
	enc, ok := strings.CutPrefix(raw, v.o.SignaturePrefix)
	if !ok {
		return nil, unauthorized("header %s lacks the prefix %q", v.o.SignatureHeader, v.o.SignaturePrefix)
	}
	var (
		sig []byte
		err error
	)
	if v.o.Encoding == EncodingBase64 {
		sig, err = base64.StdEncoding.Strict().DecodeString(enc)
	} else {
		sig, err = hex.DecodeString(enc)
	}
	if err != nil || len(sig) != sha256.Size {
		return nil, nil
	}
	return sig, nil
}

// errTimestamp describes a timestamp that is not in its configured format.
type errTimestamp string

func (e errTimestamp) Error() string { return string(e) }

// parseHMACTimestamp parses a timestamp header value verbatim (it is signed
// as received, so nothing is trimmed): unix and unix_ms as plain decimal
// (no sign, leading zeros, spaces or fraction), rfc3339 as Go's
// time.RFC3339 (fractional seconds allowed; a zone is required).
func parseHMACTimestamp(s, format string) (time.Time, error) {
	if len(s) > maxTimestampLen {
		return time.Time{}, errTimestamp("timestamp too long")
	}
	switch format {
	case TimestampUnix, TimestampUnixMs:
		n, ok := parseDecimal(s)
		if !ok {
			return time.Time{}, errTimestamp("not plain decimal " + format)
		}
		if format == TimestampUnixMs {
			return time.UnixMilli(n), nil
		}
		return time.Unix(n, 0), nil
	case TimestampRFC3339:
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return time.Time{}, errTimestamp("not an RFC 3339 date-time")
		}
		return t, nil
	}
	return time.Time{}, errTimestamp("unknown timestamp format")
}

// validHeaderName reports whether s is an RFC 9110 token of at most 128 bytes.
func validHeaderName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// visibleASCII reports whether s has only 0x21..0x7e bytes (empty is fine).
func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}
