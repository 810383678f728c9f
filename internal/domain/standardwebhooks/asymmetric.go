package standardwebhooks

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Prefixes of the asymmetric (v1a, ed25519) keys of the specification.
const (
	// SigningKeyPrefix starts a private signing key: "whsk_" + standard
	// base64 of the 64-byte ed25519 private key (seed then public key).
	SigningKeyPrefix = "whsk_"
	// PublicKeyPrefix starts a public key: "whpk_" + standard base64 of
	// the 32-byte ed25519 public key.
	PublicKeyPrefix = "whpk_"
)

// NewSigningKey returns a fresh ed25519 key pair as "whsk_…" (the private
// key, to be sealed) and "whpk_…" (the public key, for receivers).
func NewSigningKey() (secret, public string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("standardwebhooks: generate ed25519 key: %w", err)
	}
	return SigningKeyPrefix + base64.StdEncoding.EncodeToString(priv),
		PublicKeyPrefix + base64.StdEncoding.EncodeToString(pub), nil
}

// ParsePublicKey decodes a "whpk_…" public key. Errors wrap
// ErrInvalidSecret.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	rest, ok := strings.CutPrefix(s, PublicKeyPrefix)
	b, err := base64.StdEncoding.Strict().DecodeString(rest)
	if !ok || err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: not whpk_ followed by the base64 of a 32-byte ed25519 public key", ErrInvalidSecret)
	}
	return ed25519.PublicKey(b), nil
}

// Key is a signing key of either scheme: an HMAC key (v1 entries) or an
// ed25519 private key (v1a entries).
type Key struct {
	hmac []byte
	priv ed25519.PrivateKey
}

// ParseKey decodes a secret of either scheme: "whsk_…" is an ed25519
// private key (its 64 bytes, or the 32-byte seed), anything else a v1
// secret (see ParseSecret). Errors wrap ErrInvalidSecret and never echo the
// secret.
func ParseKey(s string) (Key, error) {
	rest, ok := strings.CutPrefix(s, SigningKeyPrefix)
	if !ok {
		k, err := ParseSecret(s)
		return Key{hmac: k}, err
	}
	b, err := base64.StdEncoding.Strict().DecodeString(rest)
	if err != nil {
		return Key{}, fmt.Errorf("%w: not whsk_ followed by standard base64", ErrInvalidSecret)
	}
	switch len(b) {
	case ed25519.SeedSize:
		return Key{priv: ed25519.NewKeyFromSeed(b)}, nil
	case ed25519.PrivateKeySize:
		// The trailing public half must be the seed's: a key whose halves
		// disagree would sign with one key and claim another.
		k := ed25519.NewKeyFromSeed(b[:ed25519.SeedSize])
		if !k.Equal(ed25519.PrivateKey(b)) {
			return Key{}, fmt.Errorf("%w: the ed25519 key's public half is not its seed's", ErrInvalidSecret)
		}
		return Key{priv: k}, nil
	}
	return Key{}, fmt.Errorf("%w: an ed25519 key is %d or %d bytes, not %d", ErrInvalidSecret, ed25519.SeedSize, ed25519.PrivateKeySize, len(b))
}

// Asymmetric reports whether k signs v1a (ed25519).
func (k Key) Asymmetric() bool { return k.priv != nil }

// PublicKey returns k's "whpk_…" public key, "" for an HMAC key.
func (k Key) PublicKey() string {
	if k.priv == nil {
		return ""
	}
	return PublicKeyPrefix + base64.StdEncoding.EncodeToString(k.priv.Public().(ed25519.PublicKey))
}

// Sign returns k's webhook-signature entry: "v1,<HMAC>" or
// "v1a,<base64 of the 64-byte ed25519 signature>", both over
// msgID + "." + unix seconds + "." + body.
func (k Key) Sign(msgID string, ts time.Time, body []byte) string {
	if k.priv == nil {
		return Sign(k.hmac, msgID, ts, body)
	}
	return "v1a," + base64.StdEncoding.EncodeToString(ed25519.Sign(k.priv, signedContent(msgID, strconv.FormatInt(ts.Unix(), 10), body)))
}

// SignKeys returns one entry per key, space-separated, in key order: during
// a rotation both the new and the previous key sign.
func SignKeys(keys []Key, msgID string, ts time.Time, body []byte) string {
	entries := make([]string, len(keys))
	for i, k := range keys {
		entries[i] = k.Sign(msgID, ts, body)
	}
	return strings.Join(entries, " ")
}

// VerifyV1a reports whether one of the v1a entries of a webhook-signature
// value is pub's signature of msgID.rawTS.body. It checks the signature
// only: a receiver also checks the timestamp's window as Verifier does.
func VerifyV1a(pub ed25519.PublicKey, signature, msgID, rawTS string, body []byte) bool {
	sigs, err := ParseSignatureList(signature)
	if err != nil {
		return false
	}
	msg := signedContent(msgID, rawTS, body)
	for _, s := range sigs {
		if s.Version != "v1a" {
			continue
		}
		sig, err := base64.StdEncoding.Strict().DecodeString(s.Value)
		if err == nil && len(sig) == ed25519.SignatureSize && ed25519.Verify(pub, msg, sig) {
			return true
		}
	}
	return false
}

func signedContent(msgID, ts string, body []byte) []byte {
	msg := make([]byte, 0, len(msgID)+len(ts)+len(body)+2)
	msg = append(msg, msgID...)
	msg = append(msg, '.')
	msg = append(msg, ts...)
	msg = append(msg, '.')
	return append(msg, body...)
}
