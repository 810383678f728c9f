package verifier

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
)

// GitHub header names.
const (
	// HeaderGitHubSignature carries "sha256=<hex HMAC-SHA256 of the raw body>".
	HeaderGitHubSignature = "X-Hub-Signature-256"
	// HeaderGitHubDelivery carries the delivery GUID (not signed).
	HeaderGitHubDelivery = "X-GitHub-Delivery"
	// HeaderGitHubEvent carries the event name (not signed).
	HeaderGitHubEvent = "X-GitHub-Event"
)

// GitHubOptions are the options of the github kind: there are none; the
// struct exists so {} and unknown fields are handled like every kind.
type GitHubOptions struct{}

type gitHubFactory struct{}

// GitHub returns the factory of the github kind: X-Hub-Signature-256 over the
// raw body with the secret the owner typed into GitHub (pasted here too).
// GitHub signs neither a timestamp nor the delivery id, so there is no
// window, MessageIDSigned is false and the inbox must deduplicate on the body
// digest (see the package doc). The legacy SHA-1 X-Hub-Signature is ignored.
func GitHub() Factory { return gitHubFactory{} }

// GeneratesSecret is false: the owner pastes the secret configured in GitHub.
func (gitHubFactory) GeneratesSecret() bool { return false }

// NewSecret fails: the secret comes from the owner.
func (gitHubFactory) NewSecret() ([]byte, error) {
	return nil, invalidSecret("the github kind takes the secret configured in GitHub; paste it")
}

// ValidateSecret applies the pasted-secret rules (MinPastedSecretLen bytes).
// GitHub uses the secret's bytes as the HMAC key.
func (gitHubFactory) ValidateSecret(secret []byte) error { return validatePastedSecret(secret, "") }

// ValidateOptions accepts only empty options and returns {}.
func (gitHubFactory) ValidateOptions(raw json.RawMessage) (json.RawMessage, error) {
	var o GitHubOptions
	if err := decodeOptions(raw, &o); err != nil {
		return nil, err
	}
	return encodeOptions(o)
}

// New builds the verifier.
func (f gitHubFactory) New(options json.RawMessage) (Verifier, error) {
	if _, err := f.ValidateOptions(options); err != nil {
		return nil, err
	}
	return gitHubVerifier{}, nil
}

type gitHubVerifier struct{}

func (gitHubVerifier) Verify(req Request, secret []byte, _ time.Time) (Result, error) {
	if err := validatePastedSecret(secret, ""); err != nil {
		return Result{}, misconfigured(err)
	}
	raw, err := signatureHeader(req.Headers, HeaderGitHubSignature)
	if err != nil {
		return Result{}, err
	}
	sig, err := parseGitHubSignature(raw)
	if err != nil {
		return Result{}, err
	}
	id, err := requiredHeader(req.Headers, HeaderGitHubDelivery)
	if err != nil {
		return Result{}, err
	}
	if err := messageID(HeaderGitHubDelivery, id); err != nil {
		return Result{}, err
	}
	event, err := requiredHeader(req.Headers, HeaderGitHubEvent)
	if err != nil {
		return Result{}, err
	}
	if !validEventType(event) {
		return Result{}, malformed("header %s is not 1..%d visible ASCII characters", HeaderGitHubEvent, MaxEventTypeLen)
	}

	m := hmac.New(sha256.New, secret)
	m.Write(req.Body)
	if sig == nil || !hmac.Equal(sig, m.Sum(nil)) {
		return Result{}, unauthorized("%s does not match", HeaderGitHubSignature)
	}
	return Result{MessageID: id, MessageIDSigned: false, StableID: true, EventType: event}, nil
}

// parseGitHubSignature parses a trimmed X-Hub-Signature-256 value
// "<scheme>=<hex>". Not in key=value form is ErrMalformed. A scheme other
// than exactly "sha256" (GitHub sends lower case; "SHA256" is refused, not
// guessed at) is ErrUnauthorized, as there is then no signature we accept.
// Hex digits may be upper or lower case. A value that does not decode to 32
// bytes returns a nil signature, which never matches.
func parseGitHubSignature(v string) ([]byte, error) {
	scheme, hexSig, ok := strings.Cut(v, "=")
	if !ok || scheme == "" {
		return nil, malformed("header %s is not scheme=signature", HeaderGitHubSignature)
	}
	if scheme != "sha256" {
		return nil, unauthorized("header %s: scheme is not sha256", HeaderGitHubSignature)
	}
	sig, err := hex.DecodeString(hexSig)
	if err != nil || len(sig) != sha256.Size {
		return nil, nil
	}
	return sig, nil
}
