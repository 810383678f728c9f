package verifier

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
)

// StandardWebhooksOptions are the options of the standard-webhooks kind.
type StandardWebhooksOptions struct {
	// ToleranceSeconds is the accepted clock skew both ways (default 300,
	// at most MaxToleranceSeconds).
	ToleranceSeconds int `json:"tolerance_seconds"`
}

type standardWebhooksFactory struct{}

// StandardWebhooks returns the factory of the standard-webhooks kind:
// webhook-id / webhook-timestamp / webhook-signature as the specification
// defines them, verified by package standardwebhooks (several space-separated
// v1 signatures; any match passes). The instance generates the secret
// ("whsec_" + base64 of 32 bytes); a pasted whsec_ secret of 24..64 bytes,
// the specification's range, is valid too. The message id is signed. The
// event type is the body's top-level "type" string when the body is a JSON
// object carrying one (the specification's recommended payload shape), else
// empty.
func StandardWebhooks() Factory { return standardWebhooksFactory{} }

// GeneratesSecret is true: the owner gives the instance's secret to the sender.
func (standardWebhooksFactory) GeneratesSecret() bool { return true }

// NewSecret returns "whsec_" + base64 of 32 random bytes.
func (standardWebhooksFactory) NewSecret() ([]byte, error) {
	s, err := standardwebhooks.NewSecret()
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// ValidateSecret requires a whsec_ secret (the prefix may be omitted, as the
// reference libraries allow) whose key is 24..64 bytes.
func (standardWebhooksFactory) ValidateSecret(secret []byte) error {
	if _, err := standardwebhooks.ParseSecret(string(secret)); err != nil {
		return invalidSecret("want whsec_ followed by standard base64 of %d..%d bytes", standardwebhooks.MinKeyLen, standardwebhooks.MaxKeyLen)
	}
	return nil
}

// ValidateOptions normalizes StandardWebhooksOptions.
func (f standardWebhooksFactory) ValidateOptions(raw json.RawMessage) (json.RawMessage, error) {
	o, err := f.parse(raw)
	if err != nil {
		return nil, err
	}
	return encodeOptions(o)
}

func (standardWebhooksFactory) parse(raw json.RawMessage) (StandardWebhooksOptions, error) {
	var o StandardWebhooksOptions
	if err := decodeOptions(raw, &o); err != nil {
		return o, err
	}
	tol, err := tolerance(o.ToleranceSeconds)
	if err != nil {
		return o, err
	}
	o.ToleranceSeconds = tol
	return o, nil
}

// New builds the verifier.
func (f standardWebhooksFactory) New(options json.RawMessage) (Verifier, error) {
	o, err := f.parse(options)
	if err != nil {
		return nil, err
	}
	return standardWebhooksVerifier{tolerance: time.Duration(o.ToleranceSeconds) * time.Second}, nil
}

type standardWebhooksVerifier struct {
	tolerance time.Duration
}

func (v standardWebhooksVerifier) Verify(req Request, secret []byte, now time.Time) (Result, error) {
	key, err := standardwebhooks.ParseSecret(string(secret))
	if err != nil {
		return Result{}, misconfigured(invalidSecret("stored standard-webhooks secret is invalid"))
	}
	sv, err := standardwebhooks.NewVerifier(v.tolerance, key)
	if err != nil {
		return Result{}, misconfigured(err)
	}
	id, ts, err := sv.Verify(req.Headers, req.Body, now)
	if err != nil {
		return Result{}, mapStandardWebhooksError(err)
	}
	return Result{MessageID: id, MessageIDSigned: true, StableID: true, Timestamp: ts, EventType: jsonEventType(req.Body)}, nil
}

// mapStandardWebhooksError translates package standardwebhooks' errors to
// this package's: a missing signature and no match are 401, stale/future
// 400 ErrStale, every other header problem 400 ErrMalformed.
func mapStandardWebhooksError(err error) error {
	var he *standardwebhooks.HeaderError
	switch {
	case errors.Is(err, standardwebhooks.ErrNoMatch):
		return unauthorized("no webhook-signature entry matches")
	case errors.Is(err, standardwebhooks.ErrStale), errors.Is(err, standardwebhooks.ErrFuture):
		return withMessage(ErrStale, "webhook-timestamp %s", strings.TrimPrefix(err.Error(), "standardwebhooks: timestamp "))
	case errors.As(err, &he):
		if he.Header == standardwebhooks.HeaderSignature && errors.Is(err, standardwebhooks.ErrMissingHeader) {
			return unauthorized("header %s is missing", he.Header)
		}
		if errors.Is(err, standardwebhooks.ErrMissingHeader) {
			return malformed("header %s is missing", he.Header)
		}
		return malformed("header %s: %s", he.Header, he.Reason)
	}
	return malformed("invalid webhook: %v", err)
}

// jsonEventType returns the top-level "type" string of a JSON object body,
// or "" when there is none or it is not a valid event type.
func jsonEventType(body []byte) string {
	t, _ := topLevelString(body, "type")
	if !validEventType(t) {
		return ""
	}
	return t
}

// topLevelString returns the string member key of a JSON object body. Keys
// match exactly (encoding/json's struct decoding would also take "TYPE").
// ok is false when body is not an object or the member is absent or not a
// string.
func topLevelString(body []byte, key string) (value string, ok bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return "", false
	}
	raw, found := obj[key]
	if !found || json.Unmarshal(raw, &value) != nil {
		return "", false
	}
	return value, true
}
