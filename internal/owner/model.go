package owner

import (
	"crypto/sha256"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain/op"
)

// Owner is an account that owns the instance. Its email is unique without
// regard to case.
type Owner struct {
	ID    uuid.UUID
	Email string
	// PasswordHash is the PasswordHasher's encoding (argon2id in production).
	PasswordHash string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// Operator marks the instance's operator, who may use River's UI (every
	// owner's jobs and queues); other owners see only their own jobs.
	Operator bool
}

// Session is a server-side login session. The token itself is never stored:
// TokenHash is its SHA-256 digest.
type Session struct {
	ID        uuid.UUID
	OwnerID   uuid.UUID
	TokenHash Digest
	CreatedAt time.Time
	ExpiresAt time.Time
	// IP and UserAgent say where the login came from (for the owner's
	// review; never used for decisions).
	IP        string
	UserAgent string
}

// APIKey is an owner's API key as stored: only the digest of the key and
// its prefix, which is enough to recognise it in a listing.
type APIKey struct {
	ID         uuid.UUID
	OwnerID    uuid.UUID
	Name       string
	Prefix     string
	KeyHash    Digest
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	// Scopes limit the ops the key calls (op.Authorize), in op.AllScopes'
	// order; nil is a full key, as every key issued before scopes existed.
	Scopes op.Scopes
}

// IPBan refuses every request from IP until ExpiresAt or until lifted. A ban
// belongs to the owner whose account the abuse targeted.
type IPBan struct {
	ID        uuid.UUID
	OwnerID   uuid.UUID
	IP        string
	Reason    string
	CreatedAt time.Time
	ExpiresAt time.Time
	LiftedAt  *time.Time
}

// Active reports whether the ban refuses requests at now.
func (b IPBan) Active(now time.Time) bool {
	return b.LiftedAt == nil && now.Before(b.ExpiresAt)
}

// AttemptKind tells the throttled actions apart.
type AttemptKind string

// The throttled actions.
const (
	// AttemptLoginFailure is a refused login (bad credentials or over a
	// limit).
	AttemptLoginFailure AttemptKind = "login_failure"
	// AttemptRecovery is a recovery request, granted or not.
	AttemptRecovery AttemptKind = "recovery"
)

// Attempt is one throttled action, kept for a while so limits can be
// counted per IP and per account.
type Attempt struct {
	Kind AttemptKind
	IP   string
	// Email is the normalised (trimmed, lower-case) email the attempt named,
	// whether or not an account has it.
	Email string
	// OwnerID is the account Email names, when there is one.
	OwnerID *uuid.UUID
	At      time.Time
}

// RecoveryToken is a single-use, expiring account recovery token as stored
// (its digest only).
type RecoveryToken struct {
	ID        uuid.UUID
	OwnerID   uuid.UUID
	TokenHash Digest
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// RecoveryMessage is what the recovery mailer delivers: the token in the
// clear, once, to the account's email.
type RecoveryMessage struct {
	OwnerID   uuid.UUID
	Email     string
	Token     string
	ExpiresAt time.Time
}

// Digest is the SHA-256 digest of a secret token.
type Digest [sha256.Size]byte

// DigestOf returns the digest of a token, as stores keep it.
func DigestOf(token string) Digest {
	return sha256.Sum256([]byte(token))
}
