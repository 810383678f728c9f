package verifier

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
)

// HeaderStripeSignature carries "t=<unix seconds>,v1=<hex>[,v1=<hex>…]".
const HeaderStripeSignature = "Stripe-Signature"

// stripeSecretPrefix starts every Stripe endpoint secret.
const stripeSecretPrefix = "whsec_"

// StripeOptions are the options of the stripe kind.
type StripeOptions struct {
	// ToleranceSeconds is the accepted clock skew both ways (default 300, as
	// Stripe's libraries; at most MaxToleranceSeconds). Stripe's libraries
	// only refuse old timestamps; we refuse far-future ones too.
	ToleranceSeconds int `json:"tolerance_seconds"`
}

type stripeFactory struct{}

// Stripe returns the factory of the stripe kind: HMAC-SHA256 of
// "<t>.<raw body>" keyed with the whole endpoint secret string (whsec_
// included, as Stripe does: it is not base64-decoded), any v1 entry
// matching. The message id is the body's top-level "id" (evt_…) and the
// event type its "type", both signed since the body is.
func Stripe() Factory { return stripeFactory{} }

// GeneratesSecret is false: Stripe generates the endpoint secret.
func (stripeFactory) GeneratesSecret() bool { return false }

// NewSecret fails: the secret comes from Stripe.
func (stripeFactory) NewSecret() ([]byte, error) {
	return nil, invalidSecret("the stripe kind takes the endpoint secret Stripe shows (whsec_…); paste it")
}

// ValidateSecret requires the whsec_ prefix (which catches a pasted API key,
// sk_…, early) and MinPastedSecretLen bytes after it.
func (stripeFactory) ValidateSecret(secret []byte) error {
	return validatePastedSecret(secret, stripeSecretPrefix)
}

// ValidateOptions normalizes StripeOptions.
func (f stripeFactory) ValidateOptions(raw json.RawMessage) (json.RawMessage, error) {
	o, err := f.parse(raw)
	if err != nil {
		return nil, err
	}
	return encodeOptions(o)
}

func (stripeFactory) parse(raw json.RawMessage) (StripeOptions, error) {
	var o StripeOptions
	if err := decodeOptions(raw, &o); err != nil {
		return o, err
	}
	tol, err := tolerance(o.ToleranceSeconds)
	o.ToleranceSeconds = tol
	return o, err
}

// New builds the verifier.
func (f stripeFactory) New(options json.RawMessage) (Verifier, error) {
	o, err := f.parse(options)
	if err != nil {
		return nil, err
	}
	return stripeVerifier{toleranceSeconds: o.ToleranceSeconds}, nil
}

type stripeVerifier struct {
	toleranceSeconds int
}

func (v stripeVerifier) Verify(req Request, secret []byte, now time.Time) (Result, error) {
	if err := validatePastedSecret(secret, stripeSecretPrefix); err != nil {
		return Result{}, misconfigured(err)
	}
	raw, err := signatureHeader(req.Headers, HeaderStripeSignature)
	if err != nil {
		return Result{}, err
	}
	sh, err := parseStripeSignature(raw)
	if err != nil {
		return Result{}, err
	}

	m := hmac.New(sha256.New, secret)
	m.Write([]byte(sh.rawTimestamp))
	m.Write([]byte{'.'})
	m.Write(req.Body)
	want := m.Sum(nil)
	matched := false
	for _, s := range sh.v1 {
		if hmac.Equal(s, want) {
			matched = true
			break
		}
	}
	if !matched {
		return Result{}, unauthorized("no v1 entry of %s matches", HeaderStripeSignature)
	}
	if err := checkWindow(sh.timestamp, now, v.toleranceSeconds); err != nil {
		return Result{}, err
	}

	id, ok := topLevelString(req.Body, "id")
	if !ok {
		return Result{}, malformed("stripe event body has no string \"id\"")
	}
	if err := messageID("id", id); err != nil {
		return Result{}, err
	}
	eventType, ok := topLevelString(req.Body, "type")
	if !ok || !validEventType(eventType) {
		return Result{}, malformed("stripe event body has no valid \"type\"")
	}
	return Result{MessageID: id, MessageIDSigned: true, StableID: true, Timestamp: sh.timestamp, EventType: eventType}, nil
}

type stripeSignature struct {
	rawTimestamp string
	timestamp    time.Time
	// v1 holds the decoded v1 signatures; entries that are not 32 bytes of
	// hex are kept as nil, which never matches.
	v1 [][]byte
}

// parseStripeSignature parses a trimmed Stripe-Signature value. Items are
// separated by ',' with optional spaces or tabs around each item (Stripe
// sends none; HTTP list syntax allows them). Each item is key=value with a
// non-empty key; keys are case-sensitive ("V1" is an unknown scheme).
// Exactly one t, plain decimal seconds. At most MaxSignatures signature
// items (v1 and other schemes such as v0, which are ignored). Structural
// problems are ErrMalformed; no v1 item at all leaves nothing to match, so
// Verify answers ErrUnauthorized.
func parseStripeSignature(v string) (stripeSignature, error) {
	var (
		out   stripeSignature
		haveT bool
		sigs  int
	)
	for item := range strings.SplitSeq(v, ",") {
		item = strings.Trim(item, " \t")
		key, value, ok := strings.Cut(item, "=")
		if !ok || key == "" {
			return stripeSignature{}, malformed("header %s: item is not key=value", HeaderStripeSignature)
		}
		if key == "t" {
			if haveT {
				return stripeSignature{}, malformed("header %s: t given more than once", HeaderStripeSignature)
			}
			n, ok := parseDecimal(value)
			if !ok {
				return stripeSignature{}, malformed("header %s: t is not plain decimal unix seconds", HeaderStripeSignature)
			}
			haveT = true
			out.rawTimestamp = value
			out.timestamp = time.Unix(n, 0)
			continue
		}
		sigs++
		if sigs > MaxSignatures {
			return stripeSignature{}, malformed("header %s: more than %d signatures", HeaderStripeSignature, MaxSignatures)
		}
		if key != "v1" {
			continue
		}
		sig, err := hex.DecodeString(value)
		if err != nil || len(sig) != sha256.Size {
			sig = nil
		}
		out.v1 = append(out.v1, sig)
	}
	if !haveT {
		return stripeSignature{}, malformed("header %s: no t", HeaderStripeSignature)
	}
	return out, nil
}
