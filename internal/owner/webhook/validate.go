package webhook

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/standmeet/standmeet/internal/domain"
)

// Validation limits. Each is checked with a clear error code (see the
// Code* constants).
const (
	MaxURLLen         = 2048
	MaxDescriptionLen = 500
	MaxEventTypes     = 64
	MaxEventTypeLen   = 128
	MaxHeaders        = 20
	MaxHeaderNameLen  = 64
	MaxHeaderValueLen = 1024
	// MaxHeadersBytes bounds names plus values of all custom headers.
	MaxHeadersBytes = 8 << 10
	// MaxInFlightCap is the largest max_in_flight an endpoint may ask for.
	MaxInFlightCap = 8
	// DefaultMaxEndpoints is the soft limit of endpoints per owner.
	DefaultMaxEndpoints = 50
	// MaxTimeoutSeconds bounds an endpoint's HTTP timeout: one POST,
	// connect to last body byte, must end inside the delivery job's own
	// timeout. It is also the default.
	MaxTimeoutSeconds = 10
	// MaxAttemptsCap is the most attempts a delivery may make: the whole
	// retry schedule (about 1.5 days). It is also the default.
	MaxAttemptsCap = 18
)

// Error codes of the webhooks ops.
const (
	CodeInvalidURL         = "INVALID_URL"
	CodeInvalidEventTypes  = "INVALID_EVENT_TYPES"
	CodeInvalidHeaders     = "INVALID_HEADERS"
	CodeInvalidDescription = "INVALID_DESCRIPTION"
	CodeInvalidMaxInFlight = "INVALID_MAX_IN_FLIGHT"
	CodeInvalidTimeout     = "INVALID_TIMEOUT"
	CodeInvalidMaxAttempts = "INVALID_MAX_ATTEMPTS"
	CodeInvalidState       = "INVALID_STATE"
	CodeInvalidEventType   = "INVALID_EVENT_TYPE"
	CodeInvalidSort        = "INVALID_SORT"
	CodeInvalidURLFilter   = "INVALID_URL_FILTER"
	CodeEndpointDeleted    = "ENDPOINT_DELETED"
	CodeUnknownEmbed       = "UNKNOWN_EMBED"
	CodeEndpointLimit      = "ENDPOINT_LIMIT"
	CodeEndpointNotFound   = "NOT_FOUND"
	CodeEndpointDisabled   = "ENDPOINT_DISABLED"
)

// ValidateURL checks an endpoint URL and returns it trimmed: absolute http
// or https, a host that is a hostname or an IP address in its canonical form
// (a legacy form such as 127.1 is refused naming the canonical one), no
// credentials (Go would send them as Basic auth), no fragment, at most
// MaxURLLen bytes. Whether the host may be reached is the egress policy's
// business: Service checks IP literals and localhost at registration, and
// the delivery client every address it dials.
func ValidateURL(raw string) (string, error) {
	bad := func(msg string) error {
		return domain.Validation(CodeInvalidURL, msg).WithField("url")
	}
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return "", bad("url is required")
	case len(raw) > MaxURLLen:
		return "", bad(fmt.Sprintf("url is longer than %d bytes", MaxURLLen))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", bad("url does not parse")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", bad("url must be absolute http or https")
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return "", bad("url must have a host")
	case u.User != nil:
		return "", bad("url must not carry credentials; use a custom header instead")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "", bad("url must not have a fragment")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", bad("url port must be 1..65535")
		}
	}
	if err := checkHost(u.Hostname()); err != nil {
		return "", err
	}
	return raw, nil
}

// ValidateEventTypes checks an endpoint's event-type globs: at least one, at
// most MaxEventTypes, each a declared Webhook-exposed type or a glob ('*'
// matches any run of characters) matching at least one. Duplicates are
// dropped, order is kept.
func ValidateEventTypes(types []string) ([]string, error) {
	bad := func(msg string) error {
		return domain.Validation(CodeInvalidEventTypes, msg).WithField("event_types")
	}
	if len(types) == 0 {
		return nil, bad("event_types needs at least one type or glob, such as \"*\" or \"corpus.*\"")
	}
	if len(types) > MaxEventTypes {
		return nil, bad(fmt.Sprintf("event_types has more than %d entries", MaxEventTypes))
	}
	seen := map[string]bool{}
	out := make([]string, 0, len(types))
	for _, t := range types {
		t = strings.TrimSpace(t)
		switch {
		case t == "":
			return nil, bad("event_types contains an empty entry")
		case len(t) > MaxEventTypeLen:
			return nil, bad(fmt.Sprintf("event type %.40q… is longer than %d bytes", t, MaxEventTypeLen))
		case !eventTypeChars(t):
			return nil, bad(fmt.Sprintf("event type %q may contain only a-z, 0-9, '_', '.' and '*'", t))
		case len(domain.ExpandGlobs([]string{t}, domain.Webhook)) == 0:
			return nil, bad(fmt.Sprintf("event type %q matches no webhook event type (see GET /api/admin/webhooks/event-types)", t))
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

func eventTypeChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '*') {
			return false
		}
	}
	return true
}

// reservedHeaders are header names a custom header may not set (lower
// case): the delivery's own (content type, user agent, the Standard
// Webhooks headers, which are refused as the whole webhook- prefix), those
// the transport owns, and hop-by-hop ones.
var reservedHeaders = map[string]bool{
	"content-type": true, "content-length": true, "content-encoding": true, "host": true, "user-agent": true,
	"transfer-encoding": true, "connection": true, "keep-alive": true, "proxy-connection": true,
	"proxy-authenticate": true, "proxy-authorization": true, "te": true, "trailer": true,
	"trailers": true, "upgrade": true, "expect": true,
}

// ParseHeaders decodes the raw JSON of a headers field and validates it
// (see ValidateHeaders). null or absent means no headers.
func ParseHeaders(raw json.RawMessage) (map[string]string, error) {
	bad := func(msg string) error {
		return domain.Validation(CodeInvalidHeaders, msg).WithField("headers")
	}
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return map[string]string{}, nil
	}
	if s[0] != '{' {
		return nil, bad("headers must be a JSON object of header name to string value")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, bad("headers must be a JSON object of header name to string value")
	}
	h := make(map[string]string, len(fields))
	for name, v := range fields {
		var str string
		if t := strings.TrimSpace(string(v)); t == "" || t[0] != '"' || json.Unmarshal(v, &str) != nil {
			return nil, bad(fmt.Sprintf("the value of header %q must be a string", truncate(name, 64)))
		}
		h[name] = str
	}
	return ValidateHeaders(h)
}

// ValidateHeaders checks custom request headers: at most MaxHeaders; names
// are HTTP tokens of at most MaxHeaderNameLen bytes, unique regardless of
// case, neither reserved nor starting with "webhook-"; values are at most
// MaxHeaderValueLen bytes without control characters (so no header
// injection); names plus values at most MaxHeadersBytes. Values are trimmed.
func ValidateHeaders(h map[string]string) (map[string]string, error) {
	bad := func(msg string) error {
		return domain.Validation(CodeInvalidHeaders, msg).WithField("headers")
	}
	if len(h) > MaxHeaders {
		return nil, bad(fmt.Sprintf("at most %d custom headers", MaxHeaders))
	}
	out := make(map[string]string, len(h))
	lower := map[string]bool{}
	total := 0
	for name, value := range h {
		ln := strings.ToLower(name)
		switch {
		case name == "":
			return nil, bad("a header name is empty")
		case len(name) > MaxHeaderNameLen:
			return nil, bad(fmt.Sprintf("header name %q is longer than %d bytes", truncate(name, 64), MaxHeaderNameLen))
		case !isToken(name):
			return nil, bad(fmt.Sprintf("header name %q is not a valid HTTP header name", truncate(name, 64)))
		case strings.HasPrefix(ln, "webhook-"):
			return nil, bad(fmt.Sprintf("header %q is reserved: webhook-* headers carry the signature", name))
		case reservedHeaders[ln]:
			return nil, bad(fmt.Sprintf("header %q is reserved for the delivery itself", name))
		case lower[ln]:
			return nil, bad(fmt.Sprintf("header %q is given twice (names are case-insensitive)", name))
		}
		lower[ln] = true
		value = strings.Trim(value, " \t")
		if len(value) > MaxHeaderValueLen {
			return nil, bad(fmt.Sprintf("the value of header %q is longer than %d bytes", name, MaxHeaderValueLen))
		}
		for i := 0; i < len(value); i++ {
			if c := value[i]; c < 0x20 && c != '\t' || c == 0x7f {
				return nil, bad(fmt.Sprintf("the value of header %q contains a control character", name))
			}
		}
		total += len(name) + len(value)
		out[name] = value
	}
	if total > MaxHeadersBytes {
		return nil, bad(fmt.Sprintf("custom headers exceed %d bytes in all", MaxHeadersBytes))
	}
	return out, nil
}

// isToken reports whether s is an RFC 9110 token (a valid field name).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}

// ValidateDescription checks the free-text description.
func ValidateDescription(s string) (string, error) {
	s = strings.TrimSpace(s)
	if strings.ContainsRune(s, 0) {
		return "", domain.Validation(CodeInvalidDescription, "description contains a NUL character").WithField("description")
	}
	if len(s) > MaxDescriptionLen {
		return "", domain.Validation(CodeInvalidDescription, fmt.Sprintf("description is longer than %d bytes", MaxDescriptionLen)).WithField("description")
	}
	return s, nil
}

// MaxRatePerSecond bounds an endpoint's rate limit and its burst.
const MaxRatePerSecond = 1000

// CodeInvalidRateLimit refuses a rate limit or burst out of range.
const CodeInvalidRateLimit = "INVALID_RATE_LIMIT"

// RateLimit resolves a create's or an update's rate_limit_per_second and
// rate_limit_burst against the current ones (0, 0 for none): a rate of 0
// removes the limit, a burst defaults to the rate, and either out of
// 1..MaxRatePerSecond is INVALID_RATE_LIMIT naming its field.
func RateLimit(rate, burst *int, curRate, curBurst int) (int, int, error) {
	r, b := curRate, curBurst
	if rate != nil {
		if *rate < 0 || *rate > MaxRatePerSecond {
			return 0, 0, domain.Validation(CodeInvalidRateLimit, fmt.Sprintf("rate_limit_per_second must be 1..%d, or 0 for no limit", MaxRatePerSecond)).WithField("rate_limit_per_second")
		}
		r = *rate
		if burst == nil && (b == 0 || curRate == 0) {
			b = r
		}
	}
	if burst != nil {
		if *burst < 1 || *burst > MaxRatePerSecond {
			return 0, 0, domain.Validation(CodeInvalidRateLimit, fmt.Sprintf("rate_limit_burst must be 1..%d", MaxRatePerSecond)).WithField("rate_limit_burst")
		}
		if r == 0 {
			return 0, 0, domain.Validation(CodeInvalidRateLimit, "rate_limit_burst needs rate_limit_per_second").WithField("rate_limit_burst")
		}
		b = *burst
	}
	if r == 0 {
		return 0, 0, nil
	}
	return r, b, nil
}

// ValidateMaxInFlight checks max_in_flight: 1..MaxInFlightCap.
func ValidateMaxInFlight(n int) error {
	if n < 1 || n > MaxInFlightCap {
		return domain.Validation(CodeInvalidMaxInFlight, fmt.Sprintf("max_in_flight must be 1..%d", MaxInFlightCap)).WithField("max_in_flight")
	}
	return nil
}

// ValidateTimeout checks timeout_seconds: 1..MaxTimeoutSeconds.
func ValidateTimeout(n int) error {
	if n < 1 || n > MaxTimeoutSeconds {
		return domain.Validation(CodeInvalidTimeout, fmt.Sprintf("timeout_seconds must be 1..%d (one request must end inside the delivery job's timeout)", MaxTimeoutSeconds)).WithField("timeout_seconds")
	}
	return nil
}

// ValidateMaxAttempts checks max_attempts: 1..MaxAttemptsCap, the first
// attempts of the retry schedule.
func ValidateMaxAttempts(n int) error {
	if n < 1 || n > MaxAttemptsCap {
		return domain.Validation(CodeInvalidMaxAttempts, fmt.Sprintf("max_attempts must be 1..%d (the retry schedule has %d attempts)", MaxAttemptsCap, MaxAttemptsCap)).WithField("max_attempts")
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
