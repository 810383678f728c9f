package owner

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// UnitOfWork runs fn in one transaction. The transaction commits when fn
// returns nil and rolls back otherwise; what fn enqueued on Tx.Outbox is
// delivered only after a commit. Implementations may retry nothing: fn runs
// once.
type UnitOfWork interface {
	Do(ctx context.Context, fn func(tx Tx) error) error
}

// Tx hands out the stores, the Recorder and the outbox bound to one
// transaction. They must not be used after fn returns.
type Tx interface {
	Owners() OwnerStore
	Sessions() SessionStore
	APIKeys() APIKeyStore
	Attempts() AttemptStore
	Bans() BanStore
	Recovery() RecoveryStore
	// Recorder records events in this transaction.
	Recorder() domain.Recorder
	// Outbox queues recovery messages for delivery after commit.
	Outbox() RecoveryOutbox
}

// OwnerStore keeps owners. Lookups that find nothing return an error
// matching domain.ErrNotFound.
type OwnerStore interface {
	// Create inserts o; an email already taken (in any case) is a
	// domain.Conflict with code EMAIL_TAKEN.
	Create(ctx context.Context, o Owner) error
	ByID(ctx context.Context, id uuid.UUID) (Owner, error)
	// ByEmail finds the owner whose email equals email without regard to
	// case.
	ByEmail(ctx context.Context, email string) (Owner, error)
	// UpdateEmail changes the email (EMAIL_TAKEN conflict as Create).
	UpdateEmail(ctx context.Context, id uuid.UUID, email string, at time.Time) error
	UpdatePassword(ctx context.Context, id uuid.UUID, hash string, at time.Time) error
	// SetOperator grants (true) or revokes (false) the operator role.
	SetOperator(ctx context.Context, id uuid.UUID, operator bool, at time.Time) error
	// Oldest returns the first owner created (the instance's founder).
	Oldest(ctx context.Context) (Owner, error)
	Count(ctx context.Context) (int, error)
}

// SessionStore keeps login sessions.
type SessionStore interface {
	Create(ctx context.Context, s Session) error
	// ByTokenHash returns the session with that digest, expired or not.
	ByTokenHash(ctx context.Context, h Digest) (Session, error)
	// DeleteByTokenHash removes the session; none is not an error.
	DeleteByTokenHash(ctx context.Context, h Digest) error
	// DeleteForOwner removes every session of the owner.
	DeleteForOwner(ctx context.Context, ownerID uuid.UUID) error
	// ListForOwner returns the owner's sessions unexpired at now, newest
	// first.
	ListForOwner(ctx context.Context, ownerID uuid.UUID, now time.Time) ([]Session, error)
	// DeleteOne removes the owner's session id; a session that is not the
	// owner's (or none) is ErrNotFound.
	DeleteOne(ctx context.Context, ownerID, id uuid.UUID) error
	// DeleteExpired removes sessions whose expiry is at or before now.
	DeleteExpired(ctx context.Context, now time.Time) error
}

// APIKeyStore keeps API keys. Reads scoped by owner return ErrNotFound for
// another owner's key.
type APIKeyStore interface {
	Create(ctx context.Context, k APIKey) error
	// ByHash returns the key with that digest, revoked or not.
	ByHash(ctx context.Context, h Digest) (APIKey, error)
	Get(ctx context.Context, ownerID, id uuid.UUID) (APIKey, error)
	// List returns the owner's keys, newest first.
	List(ctx context.Context, ownerID uuid.UUID) ([]APIKey, error)
	// Revoke sets revoked_at on the owner's key if it is not revoked yet.
	Revoke(ctx context.Context, ownerID, id uuid.UUID, at time.Time) error
	// Touch sets last_used_at to at unless it is already after notBefore,
	// so a busy key is written at most once per interval.
	Touch(ctx context.Context, id uuid.UUID, at, notBefore time.Time) error
}

// AttemptStore keeps throttled attempts for the limits' windows.
type AttemptStore interface {
	Add(ctx context.Context, a Attempt) error
	// CountByIP counts attempts of kind from ip at or after since.
	CountByIP(ctx context.Context, kind AttemptKind, ip string, since time.Time) (int, error)
	// CountByEmail counts attempts of kind naming email at or after since.
	CountByEmail(ctx context.Context, kind AttemptKind, email string, since time.Time) (int, error)
	// CountByEmailAndIP counts attempts of kind naming email from ip at or
	// after since.
	CountByEmailAndIP(ctx context.Context, kind AttemptKind, email, ip string, since time.Time) (int, error)
	// TargetedOwners returns the distinct owners whose accounts attempts of
	// kind from ip named at or after since.
	TargetedOwners(ctx context.Context, kind AttemptKind, ip string, since time.Time) ([]uuid.UUID, error)
	// DeleteByIP forgets every attempt of kind from ip.
	DeleteByIP(ctx context.Context, kind AttemptKind, ip string) error
	// DeleteBefore forgets attempts older than t.
	DeleteBefore(ctx context.Context, t time.Time) error
}

// BanStore keeps IP bans.
type BanStore interface {
	// Add inserts b unless the owner already has an active ban on b.IP at
	// b.CreatedAt; it reports whether it inserted.
	Add(ctx context.Context, b IPBan) (bool, error)
	// ActiveIPs returns the distinct IPs with an active ban at now.
	ActiveIPs(ctx context.Context, now time.Time) ([]string, error)
	// ListActive returns a page of the owner's bans active at now, newest
	// first, starting after the cursor (nil = from the start), at most
	// limit rows.
	ListActive(ctx context.Context, ownerID uuid.UUID, now time.Time, after *BanCursor, limit int) ([]IPBan, error)
	// Lift ends the owner's active ban; a ban that is not the owner's or
	// not active is ErrNotFound.
	Lift(ctx context.Context, ownerID, id uuid.UUID, now time.Time) error
}

// BanCursor is a position in the ban listing's order (created_at, id
// descending).
type BanCursor struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// RecoveryStore keeps recovery tokens.
type RecoveryStore interface {
	Create(ctx context.Context, t RecoveryToken) error
	// Consume marks the token with that digest used, if it is unused and
	// unexpired at now, and returns it; otherwise ErrNotFound. Two
	// concurrent calls never both succeed.
	Consume(ctx context.Context, h Digest, now time.Time) (RecoveryToken, error)
}

// RecoveryOutbox queues recovery messages in the caller's transaction:
// a message is delivered (by the RecoveryMailer) only if the transaction
// commits.
type RecoveryOutbox interface {
	Enqueue(ctx context.Context, m RecoveryMessage) error
}

// RecoveryMailer delivers a recovery message to the account's email. It is
// called after commit and handles its own failures (log, retry), since the
// request it answers has already been granted.
type RecoveryMailer interface {
	DeliverRecovery(ctx context.Context, m RecoveryMessage)
}

// RecoveryMailerFunc adapts a function to RecoveryMailer.
type RecoveryMailerFunc func(ctx context.Context, m RecoveryMessage)

// DeliverRecovery calls f.
func (f RecoveryMailerFunc) DeliverRecovery(ctx context.Context, m RecoveryMessage) { f(ctx, m) }

// PasswordHasher hashes and checks passwords with a slow, salted function.
type PasswordHasher interface {
	Hash(password string) (string, error)
	// Verify reports whether password matches hash; a malformed hash is an
	// error.
	Verify(password, hash string) (bool, error)
}

// TokenGenerator returns unguessable tokens: n random bytes, URL-safe
// base64 without padding.
type TokenGenerator interface {
	Token(n int) (string, error)
}
