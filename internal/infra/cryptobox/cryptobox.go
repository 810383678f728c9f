// Package cryptobox seals small secrets (webhook signing secrets, inbound
// source secrets) for storage at rest with AES-256-GCM, and names the key that
// sealed each value so the master key can be rotated without a flag day.
//
// # Sealed format (version 1)
//
//	offset  size  field
//	0       1     version, 0x01
//	1       1     n, the length of the key id (1..64)
//	2       n     key id, ASCII [A-Za-z0-9._-]
//	2+n     12    GCM nonce, random per Seal
//	14+n    ≥16   ciphertext followed by the 16-byte GCM tag
//
// The GCM additional data is the header (bytes 0..2+n) followed by the
// caller's associated data, so the version and key id are authenticated too
// and a value cannot be moved between rows whose associated data differ (pass
// for example the table, column and row id). The header is self-delimiting,
// so header‖associatedData is unambiguous.
//
// Nonces are random (96 bits). That is safe for far more values than an
// instance seals under one key (the usual bound is 2^32 per key); rotate the
// key long before that.
//
// Rotation: build the Box with the new key as primary and the old keys after
// it. Open accepts values sealed under any of them; NeedsReseal tells which
// values still carry an old key id and Reseal moves them to the primary.
package cryptobox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the size of a key in bytes (AES-256).
const KeySize = 32

// MaxKeyIDLen bounds the length of a key id.
const MaxKeyIDLen = 64

// version1 is the first byte of every value Seal produces.
const version1 byte = 0x01

const (
	nonceSize = 12
	tagSize   = 16
)

// ErrUnknownKey is returned by Open (wrapped) when the value names a key id
// that is neither the primary nor one of the old keys of the Box.
var ErrUnknownKey = errors.New("cryptobox: sealed under an unknown key")

// ErrCorrupt is returned by Open (wrapped) when the value is truncated, has an
// unknown version, was tampered with, or was sealed with other associated data.
// AEAD cannot tell these apart, and callers should not try to.
var ErrCorrupt = errors.New("cryptobox: sealed value is corrupt or bound to other data")

// Key is one AES-256 key and the id stored beside every value sealed under it.
type Key struct {
	// ID names the key inside sealed values; see DeriveKeyID.
	ID string
	// Secret is the raw key.
	Secret [KeySize]byte
}

// String never prints the secret, so a Key in a log line or error is harmless.
func (k Key) String() string { return fmt.Sprintf("cryptobox.Key{ID:%q}", k.ID) }

// GoString never prints the secret (%#v).
func (k Key) GoString() string { return k.String() }

// DeriveKeyID returns the default id of a key: the first 8 hex characters of
// SHA-256 of the raw key. An operator can compute it from a key file with
// `base64 -d key | sha256sum | cut -c1-8` to learn which key sealed a row;
// 32 bits of a hash reveal nothing useful about a 256-bit key.
func DeriveKeyID(secret [KeySize]byte) string {
	sum := sha256.Sum256(secret[:])
	return hex.EncodeToString(sum[:4])
}

// KeyFromBase64 decodes a key given as standard base64 (with padding) of
// exactly 32 bytes, such as the content of STANDMEET_MASTER_KEY. Surrounding
// whitespace (a key file's trailing newline) is ignored. An empty id means
// DeriveKeyID. Errors never contain key material.
func KeyFromBase64(id, b64 string) (Key, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return Key{}, errors.New("cryptobox: key is not valid standard base64 (expected base64 of 32 random bytes, e.g. `openssl rand -base64 32`)")
	}
	if len(raw) != KeySize {
		return Key{}, fmt.Errorf("cryptobox: key decodes to %d bytes, want exactly %d (e.g. `openssl rand -base64 32`)", len(raw), KeySize)
	}
	var k Key
	copy(k.Secret[:], raw)
	clear(raw)
	if id == "" {
		id = DeriveKeyID(k.Secret)
	}
	if err := validateKeyID(id); err != nil {
		return Key{}, err
	}
	k.ID = id
	return k, nil
}

func validateKeyID(id string) error {
	if id == "" || len(id) > MaxKeyIDLen {
		return fmt.Errorf("cryptobox: key id must be 1..%d characters", MaxKeyIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return fmt.Errorf("cryptobox: key id %q may contain only letters, digits, '.', '_' and '-'", id)
		}
	}
	return nil
}

// Box seals with its primary key and opens with any of its keys. It is safe
// for concurrent use.
type Box struct {
	primary string
	aeads   map[string]cipher.AEAD
}

// New builds a Box sealing under primary and also opening values sealed under
// the old keys. Key ids must be valid and distinct.
func New(primary Key, old ...Key) (*Box, error) {
	b := &Box{primary: primary.ID, aeads: make(map[string]cipher.AEAD, 1+len(old))}
	for _, k := range append([]Key{primary}, old...) {
		if err := validateKeyID(k.ID); err != nil {
			return nil, err
		}
		if _, dup := b.aeads[k.ID]; dup {
			return nil, fmt.Errorf("cryptobox: key id %q given twice", k.ID)
		}
		block, err := aes.NewCipher(k.Secret[:])
		if err != nil {
			return nil, fmt.Errorf("cryptobox: key %q: %w", k.ID, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("cryptobox: key %q: %w", k.ID, err)
		}
		b.aeads[k.ID] = aead
	}
	return b, nil
}

// PrimaryKeyID returns the id of the key Seal uses.
func (b *Box) PrimaryKeyID() string { return b.primary }

// Seal encrypts plaintext under the primary key, binding it to
// associatedData (which is not stored: Open needs the same bytes). Two Seals
// of the same plaintext differ (random nonce).
func (b *Box) Seal(plaintext, associatedData []byte) ([]byte, error) {
	aead := b.aeads[b.primary]
	hdrLen := 2 + len(b.primary)
	out := make([]byte, hdrLen+nonceSize, hdrLen+nonceSize+len(plaintext)+tagSize)
	out[0] = version1
	out[1] = byte(len(b.primary))
	copy(out[2:], b.primary)
	nonce := out[hdrLen : hdrLen+nonceSize]
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("cryptobox: read nonce: %w", err)
	}
	return aead.Seal(out, nonce, plaintext, additionalData(out[:hdrLen], associatedData)), nil
}

// Open decrypts a value sealed by Seal with the same associatedData. It
// returns an error wrapping ErrUnknownKey when no key of the Box has the
// value's key id, and one wrapping ErrCorrupt for anything else.
func (b *Box) Open(sealed, associatedData []byte) ([]byte, error) {
	p, err := parse(sealed)
	if err != nil {
		return nil, err
	}
	aead, ok := b.aeads[p.keyID]
	if !ok {
		return nil, fmt.Errorf("%w: key id %q", ErrUnknownKey, p.keyID)
	}
	plain, err := aead.Open(nil, p.nonce, p.ciphertext, additionalData(p.header, associatedData))
	if err != nil {
		return nil, fmt.Errorf("%w: authentication failed", ErrCorrupt)
	}
	return plain, nil
}

// KeyID returns the key id a sealed value names, or an error wrapping
// ErrCorrupt when the value cannot be parsed. It does not authenticate.
func KeyID(sealed []byte) (string, error) {
	p, err := parse(sealed)
	if err != nil {
		return "", err
	}
	return p.keyID, nil
}

// NeedsReseal reports whether sealed names a key other than the primary, so a
// rotation job can find the values to Reseal. It does not authenticate: it is
// false for a value that cannot be parsed (Open reports that).
func (b *Box) NeedsReseal(sealed []byte) bool {
	id, err := KeyID(sealed)
	return err == nil && id != b.primary
}

// Reseal opens sealed and seals the plaintext again under the primary key
// with the same associated data. A value already under the primary key is
// authenticated and returned unchanged, so Reseal is idempotent.
func (b *Box) Reseal(sealed, associatedData []byte) ([]byte, error) {
	plain, err := b.Open(sealed, associatedData)
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	if !b.NeedsReseal(sealed) {
		return append([]byte(nil), sealed...), nil
	}
	return b.Seal(plain, associatedData)
}

type parsed struct {
	header     []byte
	keyID      string
	nonce      []byte
	ciphertext []byte
}

func parse(sealed []byte) (parsed, error) {
	if len(sealed) < 2 {
		return parsed{}, fmt.Errorf("%w: truncated header", ErrCorrupt)
	}
	if sealed[0] != version1 {
		return parsed{}, fmt.Errorf("%w: unsupported version %d", ErrCorrupt, sealed[0])
	}
	n := int(sealed[1])
	hdrLen := 2 + n
	if n == 0 || n > MaxKeyIDLen || len(sealed) < hdrLen+nonceSize+tagSize {
		return parsed{}, fmt.Errorf("%w: truncated", ErrCorrupt)
	}
	id := string(sealed[2:hdrLen])
	if validateKeyID(id) != nil {
		return parsed{}, fmt.Errorf("%w: invalid key id", ErrCorrupt)
	}
	return parsed{
		header:     sealed[:hdrLen],
		keyID:      id,
		nonce:      sealed[hdrLen : hdrLen+nonceSize],
		ciphertext: sealed[hdrLen+nonceSize:],
	}, nil
}

func additionalData(header, associatedData []byte) []byte {
	ad := make([]byte, 0, len(header)+len(associatedData))
	ad = append(ad, header...)
	return append(ad, associatedData...)
}
