package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/alexedwards/argon2id"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/owner"
)

// Argon2id hashes passwords with argon2id (PHC string format, random salt
// per hash).
type Argon2id struct {
	params *argon2id.Params
}

var _ owner.PasswordHasher = Argon2id{}

// DefaultArgon2idParams are OWASP's recommended argon2id settings (19 MiB,
// two passes, one lane): memory-hard enough to make guessing expensive,
// cheap enough that a burst of logins cannot exhaust the server's memory.
func DefaultArgon2idParams() argon2id.Params {
	return argon2id.Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}
}

// NewArgon2id returns a hasher with params.
func NewArgon2id(params argon2id.Params) Argon2id {
	return Argon2id{params: &params}
}

// Hash implements owner.PasswordHasher.
func (a Argon2id) Hash(password string) (string, error) {
	h, err := argon2id.CreateHash(password, a.params)
	if err != nil {
		return "", fmt.Errorf("argon2id: %w", err)
	}
	return h, nil
}

// Verify implements owner.PasswordHasher. Hashes made with other
// parameters still verify (the parameters are part of the hash).
func (a Argon2id) Verify(password, hash string) (bool, error) {
	ok, err := argon2id.ComparePasswordAndHash(password, hash)
	if err != nil {
		return false, fmt.Errorf("argon2id: %w", err)
	}
	return ok, nil
}

// RandomTokens draws tokens from crypto/rand.
type RandomTokens struct{}

var _ owner.TokenGenerator = RandomTokens{}

// Token returns n random bytes as URL-safe base64 without padding.
func (RandomTokens) Token(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// LogMailer is the recovery mailer of an instance without a mail server: it
// writes the recovery request to the log. Only in development (Dev) does
// the log line carry the token, under a message that says so; otherwise
// the operator learns that a request was made and that nothing was sent.
type LogMailer struct {
	Logger *zap.Logger
	// Dev puts the recovery token in the log line.
	Dev bool
}

var _ owner.RecoveryMailer = LogMailer{}

// DeliverRecovery implements owner.RecoveryMailer.
func (m LogMailer) DeliverRecovery(_ context.Context, msg owner.RecoveryMessage) {
	if m.Logger == nil {
		return
	}
	if m.Dev {
		m.Logger.Warn("DEVELOPMENT ONLY: recovery link for "+msg.Email+" (no mailer configured; complete with POST /api/auth/recover/complete)",
			zap.String("owner_id", msg.OwnerID.String()),
			zap.String("recovery_token", msg.Token),
			zap.Time("expires_at", msg.ExpiresAt))
		return
	}
	m.Logger.Warn("recovery requested for "+msg.Email+", but no mailer is configured: nothing was sent",
		zap.String("owner_id", msg.OwnerID.String()),
		zap.Time("expires_at", msg.ExpiresAt))
}
