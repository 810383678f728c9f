// Package verifier authenticates inbound webhooks: one Verifier per provider
// kind (standard-webhooks, github, stripe, and a configurable hmac), found in a
// Registry by the kind name stored with each inbound source.
//
// # Flow
//
// When the owner creates a source, the admin surface looks the kind up
// (Registry.Lookup), normalizes its options (Factory.ValidateOptions; the
// normalized JSON is what gets stored) and either generates the secret
// (Factory.GeneratesSecret, Factory.NewSecret; shown once) or checks the one
// the owner pasted from the provider (Factory.ValidateSecret). On every
// request, the gateway builds the Verifier from the stored options
// (Factory.New; cacheable per source) and calls Verify with the exact raw
// body, the secret unsealed by cmd/server, and the current time.
//
// Secrets are passed around as the text the owner saw or pasted (for
// example "whsec_…" for standard-webhooks); each kind knows how to turn that
// text into its HMAC key.
//
// # Errors and HTTP statuses
//
// Every error is a *domain.Error; compare with errors.Is against the
// sentinels (they match any error of the same Kind and Code, so the detailed
// errors Verify builds match them). The statuses the gateway answers:
//
//	ErrUnauthorized   401  signature header missing, or no signature matches
//	                       (wrong secret, altered body, a scheme we do not
//	                       accept, an undecodable signature value)
//	ErrMalformed      400  request shape: a header we read given twice, a
//	                       required id/timestamp/event header missing or not in
//	                       its strict form, a signature list too long or not
//	                       in key/value form, an authenticated body that
//	                       lacks what the kind needs (stripe's id and type)
//	ErrStale          400  authentic, but the timestamp is outside the
//	                       tolerance window (either way): a replay or a skewed
//	                       clock
//	ErrMisconfigured  500  the stored secret or options fail validation; log
//	                       it, the sender cannot fix it
//
// Structure is checked first, then the signature, and only an authentic
// message has its timestamp window checked, so ErrStale is never noise from
// an unauthenticated caller. At the admin surface ErrInvalidOptions,
// ErrInvalidSecret and ErrUnknownKind are 400 validation errors.
//
// # Replay protection
//
// A timestamp window bounds replays only for kinds that sign a timestamp
// (standard-webhooks, stripe, hmac with a timestamp in its payload). Within
// the window, and always for github, the inbox's idempotency stops them, but
// only if it keys on something the sender signed: Result.MessageIDSigned says
// whether MessageID is covered by the signature. When it is false (github's
// X-GitHub-Delivery, an hmac id header outside the payload) an attacker who
// captured one request can resend it under a fresh id, so the inbox must also
// deduplicate on the SHA-256 of the raw body.
package verifier

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// Request is what a Verifier sees of an inbound HTTP request.
type Request struct {
	// Headers are the request headers as received.
	Headers domain.Header
	// Body is the exact raw body: signatures cover these bytes, so it must not
	// be re-encoded or trimmed.
	Body []byte
}

// Result is the normalized, authenticated metadata of a verified message.
type Result struct {
	// MessageID identifies the message for idempotency; see MessageIDSigned.
	MessageID string
	// MessageIDSigned reports whether MessageID is covered by the signature
	// (or derived from the signed body). When false, deduplicate on the body
	// digest as well (see the package doc).
	MessageIDSigned bool
	// StableID reports that MessageID is the provider's own id of the event
	// (Stripe's evt_…, GitHub's delivery GUID, a Standard Webhooks
	// webhook-id): every resend of the event carries it, whatever the
	// encoding of its body, so a resend under a known id with another body
	// is the same event again, not a conflict. False for the generic hmac
	// kind, whose id header may be anything the sender chose.
	StableID bool
	// Timestamp is the signed send time, zero for kinds without one (github).
	Timestamp time.Time
	// EventType is the provider's event type where the kind carries one, else
	// empty. For github it comes from an unsigned header.
	EventType string
}

// Verifier authenticates one request for one source. Options are bound when
// the Factory builds it; the secret and clock come per call, because only
// cmd/server unseals secrets and tests control time. Implementations are
// immutable and safe for concurrent use.
type Verifier interface {
	// Verify authenticates req with secret (the source's secret text) at now.
	Verify(req Request, secret []byte, now time.Time) (Result, error)
}

// Factory is one provider kind: its options, where its secret comes from and
// how to build its Verifier. Implementations are stateless.
type Factory interface {
	// GeneratesSecret reports whether the instance generates the secret when
	// a source is created (and shows it once, for the owner to give the
	// provider), or whether the owner pastes the provider's secret.
	GeneratesSecret() bool
	// NewSecret returns a fresh secret text; it fails for kinds that do not
	// generate their secret.
	NewSecret() ([]byte, error)
	// ValidateSecret checks a secret text (generated or pasted) against the
	// kind's rules; errors match ErrInvalidSecret and never echo the secret.
	ValidateSecret(secret []byte) error
	// ValidateOptions decodes raw (empty or null means all defaults), rejects
	// unknown fields and invalid values (errors match ErrInvalidOptions) and
	// returns the normalized JSON, defaults filled in, to store.
	ValidateOptions(raw json.RawMessage) (json.RawMessage, error)
	// New builds the Verifier from stored options, validating them again;
	// an error here means stored data is bad (the gateway answers 500).
	New(options json.RawMessage) (Verifier, error)
}

// Sentinel errors. See the package doc for the HTTP status of each.
var (
	// ErrUnauthorized (401): the signature is missing or matches nothing.
	ErrUnauthorized = domain.Unauthorized("WEBHOOK_SIGNATURE_INVALID", "missing or invalid webhook signature")
	// ErrMalformed (400): the request is not in the form the kind requires.
	ErrMalformed = domain.Validation("WEBHOOK_MALFORMED", "malformed webhook request")
	// ErrStale (400): authentic, but the timestamp is outside the tolerance.
	ErrStale = domain.Validation("WEBHOOK_STALE", "webhook timestamp outside the tolerance window")
	// ErrMisconfigured (500): the stored secret or options of the source are invalid.
	ErrMisconfigured = &domain.Error{Kind: domain.KindInternal, Code: "INBOUND_SOURCE_MISCONFIGURED", Message: "inbound source is misconfigured"}
	// ErrInvalidOptions (400 at the admin surface): ValidateOptions refused the options.
	ErrInvalidOptions = domain.Validation("INBOUND_OPTIONS_INVALID", "invalid verifier options")
	// ErrInvalidSecret (400 at the admin surface): ValidateSecret refused the secret.
	ErrInvalidSecret = domain.Validation("INBOUND_SECRET_INVALID", "invalid secret")
	// ErrUnknownKind (400 at the admin surface; 500 for a stored source): no such kind.
	ErrUnknownKind = domain.Validation("INBOUND_VERIFIER_UNKNOWN", "unknown verifier kind")
)

func withMessage(sentinel *domain.Error, format string, args ...any) error {
	e := *sentinel
	e.Message = fmt.Sprintf(format, args...)
	return &e
}

func unauthorized(format string, args ...any) error {
	return withMessage(ErrUnauthorized, format, args...)
}

func malformed(format string, args ...any) error {
	return withMessage(ErrMalformed, format, args...)
}

func invalidOptions(format string, args ...any) error {
	return withMessage(ErrInvalidOptions, format, args...)
}

func invalidSecret(format string, args ...any) error {
	return withMessage(ErrInvalidSecret, format, args...)
}

// misconfigured turns a validation error about stored data into a 500.
func misconfigured(err error) error {
	msg := err.Error()
	if de := domain.AsError(err); de != nil {
		msg = de.Message
	}
	return withMessage(ErrMisconfigured, "inbound source is misconfigured: %s", msg)
}

// Registry maps kind names to factories. Register the kinds at start; lookups
// are safe for concurrent use (also with Register).
type Registry struct {
	mu    sync.RWMutex
	kinds map[string]Factory
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{kinds: map[string]Factory{}}
}

// Built-in kind names.
const (
	// KindStandardWebhooks verifies Standard Webhooks v1 (webhook-* headers).
	KindStandardWebhooks = "standard-webhooks"
	// KindGitHub verifies GitHub's X-Hub-Signature-256.
	KindGitHub = "github"
	// KindStripe verifies Stripe's Stripe-Signature.
	KindStripe = "stripe"
	// KindHMAC is the configurable generic HMAC-SHA256 verifier.
	KindHMAC = "hmac"
)

// NewDefaultRegistry returns a Registry holding the built-in kinds. A new
// built-in kind adds one line here; the gateway only ever calls Lookup.
func NewDefaultRegistry() *Registry {
	r := NewRegistry()
	for name, f := range map[string]Factory{
		KindStandardWebhooks: StandardWebhooks(),
		KindGitHub:           GitHub(),
		KindStripe:           Stripe(),
		KindHMAC:             HMAC(),
	} {
		if err := r.Register(name, f); err != nil {
			panic(err) // the built-in names are valid and distinct
		}
	}
	return r
}

// Register adds a kind. Names are 1..64 characters of [a-z0-9-] starting
// with a letter or digit; registering a name twice is an error, so one kind
// cannot silently replace another.
func (r *Registry) Register(kind string, f Factory) error {
	if !validKindName(kind) {
		return fmt.Errorf("verifier: kind name %q: want 1..64 characters of [a-z0-9-], not starting with '-'", kind)
	}
	if f == nil {
		return fmt.Errorf("verifier: kind %q: nil factory", kind)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.kinds[kind]; dup {
		return fmt.Errorf("verifier: kind %q registered twice", kind)
	}
	r.kinds[kind] = f
	return nil
}

// Lookup returns the factory of kind, or an error matching ErrUnknownKind.
func (r *Registry) Lookup(kind string) (Factory, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	f, ok := r.kinds[kind]
	if !ok {
		return nil, withMessage(ErrUnknownKind, "unknown verifier kind %q; known: %s", kind, strings.Join(r.namesLocked(), ", "))
	}
	return f, nil
}

// Kinds returns the registered kind names, sorted.
func (r *Registry) Kinds() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namesLocked()
}

func (r *Registry) namesLocked() []string {
	names := make([]string, 0, len(r.kinds))
	for n := range r.kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func validKindName(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Limits shared by the kinds.
const (
	// MinGeneratedSecretLen is the key size floor for secrets the instance
	// generates (the Standard Webhooks minimum; generated keys are 32 bytes).
	MinGeneratedSecretLen = standardwebhooks.MinKeyLen
	// MinPastedSecretLen is the floor for secrets pasted from a provider
	// (github, stripe, hmac). Every major provider's generated secrets exceed
	// it (Stripe's whsec_ part is 32 characters), so it refuses only
	// hand-typed secrets short enough to guess offline from one captured
	// signed request; 24 (our own floor) would refuse some real providers'
	// secrets, which we cannot change. It is a floor, not a strength check.
	MinPastedSecretLen = 16
	// MaxPastedSecretLen bounds pasted secrets.
	MaxPastedSecretLen = 512
	// DefaultToleranceSeconds is the default window both ways, as Standard
	// Webhooks' and Stripe's reference libraries use.
	DefaultToleranceSeconds = 300
	// MaxToleranceSeconds caps the per-source window: the replay store must
	// keep ids at least that long, and a wider window is a wider replay gap.
	MaxToleranceSeconds = 3600
	// MaxEventTypeLen bounds event types.
	MaxEventTypeLen = 256
	// MaxSignatures bounds signature lists (the Standard Webhooks limit).
	MaxSignatures = standardwebhooks.MaxSignatures
	// maxSignatureHeaderLen bounds a signature header before it is split.
	maxSignatureHeaderLen = 2048
	// maxOptionsLen bounds the options JSON.
	maxOptionsLen = 4096
	// maxTimestampLen bounds a timestamp header before parsing.
	maxTimestampLen = 64
)

// decodeOptions strictly decodes raw into dst: empty or null keeps dst's zero
// value; unknown fields, trailing data and non-objects are refused.
func decodeOptions(raw json.RawMessage, dst any) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil
	}
	if len(trimmed) > maxOptionsLen {
		return invalidOptions("options longer than %d bytes", maxOptionsLen)
	}
	if trimmed[0] != '{' {
		return invalidOptions("options must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return invalidOptions("options: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalidOptions("options: trailing data after the JSON object")
	}
	return nil
}

func encodeOptions(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("verifier: encode options: %w", err)
	}
	return b, nil
}

// tolerance validates a tolerance_seconds option (0 means the default).
func tolerance(seconds int) (int, error) {
	switch {
	case seconds == 0:
		return DefaultToleranceSeconds, nil
	case seconds < 0 || seconds > MaxToleranceSeconds:
		return 0, invalidOptions("tolerance_seconds must be 1..%d", MaxToleranceSeconds)
	}
	return seconds, nil
}

// checkWindow returns ErrStale when ts is more than tol away from now.
func checkWindow(ts, now time.Time, tolSeconds int) error {
	tol := time.Duration(tolSeconds) * time.Second
	switch d := now.Sub(ts); {
	case d > tol:
		return withMessage(ErrStale, "webhook timestamp is %s old; tolerance is %s", d.Truncate(time.Second), tol)
	case d < -tol:
		return withMessage(ErrStale, "webhook timestamp is %s in the future; tolerance is %s", (-d).Truncate(time.Second), tol)
	}
	return nil
}

// validatePastedSecret applies the rules for secrets pasted from a provider:
// after the required prefix (if any), MinPastedSecretLen..MaxPastedSecretLen
// bytes, no control characters and no leading or trailing whitespace (the
// usual copy-paste accident, which would make every signature fail).
func validatePastedSecret(secret []byte, prefix string) error {
	if prefix != "" && !bytes.HasPrefix(secret, []byte(prefix)) {
		return invalidSecret("secret must start with %q", prefix)
	}
	material := secret[len(prefix):]
	if len(material) < MinPastedSecretLen {
		return invalidSecret("secret is %d bytes after any prefix; at least %d required", len(material), MinPastedSecretLen)
	}
	if len(secret) > MaxPastedSecretLen {
		return invalidSecret("secret is longer than %d bytes", MaxPastedSecretLen)
	}
	if len(bytes.TrimSpace(secret)) != len(secret) {
		return invalidSecret("secret has leading or trailing whitespace")
	}
	for _, c := range secret {
		if c < 0x20 || c == 0x7f {
			return invalidSecret("secret contains a control character")
		}
	}
	return nil
}

// header returns the only value of name, matching names case-insensitively
// (so a non-canonical key in a hand-built header map can neither hide a
// value nor add a second one). present is false when it is absent or empty;
// more than one value is ErrMalformed.
func header(h domain.Header, name string) (value string, present bool, err error) {
	count := 0
	for k, vs := range h {
		if !strings.EqualFold(k, name) {
			continue
		}
		for _, v := range vs {
			count++
			value = v
		}
	}
	if count > 1 {
		return "", false, malformed("header %s given more than once", name)
	}
	return value, value != "", nil
}

// requiredHeader is header for a header whose absence is ErrMalformed.
func requiredHeader(h domain.Header, name string) (string, error) {
	v, ok, err := header(h, name)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", malformed("header %s is missing", name)
	}
	return v, nil
}

// signatureHeader reads a signature header: absent or empty is
// ErrUnauthorized, surrounding spaces and tabs (not signed content) are
// removed, and overly long values are ErrMalformed.
func signatureHeader(h domain.Header, name string) (string, error) {
	v, ok, err := header(h, name)
	if err != nil {
		return "", err
	}
	v = strings.Trim(v, " \t")
	if !ok || v == "" {
		return "", unauthorized("header %s is missing", name)
	}
	if len(v) > maxSignatureHeaderLen {
		return "", malformed("header %s is longer than %d bytes", name, maxSignatureHeaderLen)
	}
	return v, nil
}

// messageID validates an id read from header name (see
// standardwebhooks.ValidateMessageID for the rules and why).
func messageID(name, id string) error {
	if err := standardwebhooks.ValidateMessageID(id); err != nil {
		var he *standardwebhooks.HeaderError
		if errors.As(err, &he) {
			return malformed("header %s: %s", name, he.Reason)
		}
		return malformed("header %s: invalid message id", name)
	}
	return nil
}

// validEventType reports whether s is 1..MaxEventTypeLen bytes of visible ASCII.
func validEventType(s string) bool {
	if s == "" || len(s) > MaxEventTypeLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// parseDecimal parses plain decimal digits: no sign, no leading zeros (other
// than "0" itself), no spaces, at most 18 digits so it cannot overflow.
func parseDecimal(s string) (int64, bool) {
	if s == "" || len(s) > 18 || s[0] == '0' && len(s) > 1 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// bodyDigest is the hex SHA-256 of the raw body, the id of messages that
// carry none and the inbox's idempotency digest.
func bodyDigest(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}
