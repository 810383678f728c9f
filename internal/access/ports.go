package access

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// UnitOfWork runs fn in one transaction: store writes and recorded events
// commit together or not at all. fn's error is returned unchanged.
type UnitOfWork interface {
	Do(ctx context.Context, fn func(tx Tx) error) error
}

// Tx hands out the stores and the Recorder bound to one transaction.
type Tx interface {
	Roles() RoleStore
	Codes() CodeStore
	Embeds() EmbedStore
	Requests() RequestStore
	Recorder() domain.Recorder
}

// Cursor is the sort key (created_at, id) of the last row of a page.
type Cursor struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// RoleStore stores roles. Reads and writes are scoped by owner; another
// owner's role is domain.ErrNotFound.
type RoleStore interface {
	// Insert adds a role; a name the owner already uses is a domain
	// Conflict ROLE_NAME_TAKEN.
	Insert(ctx context.Context, r Role) (Role, error)
	Get(ctx context.Context, ownerID, id uuid.UUID) (Role, error)
	// Update reads the role locked until the transaction ends, hands it to
	// fn and, when fn returns nil, writes the name, globs, published-only
	// and update time fn leaves (same conflict as Insert), returning the
	// role as stored. fn's error is returned as is and nothing is written;
	// fn is not called for a role ownerID does not have (not found).
	Update(ctx context.Context, ownerID, id uuid.UUID, fn func(r *Role) error) (Role, error)
	// Delete removes a role; one that codes still use is a domain Conflict
	// ROLE_IN_USE.
	Delete(ctx context.Context, ownerID, id uuid.UUID) error
	// List returns every role of the owner by name.
	List(ctx context.Context, ownerID uuid.UUID) ([]Role, error)
}

// CodeStore stores access codes.
type CodeStore interface {
	Insert(ctx context.Context, c Code) (Code, error)
	Get(ctx context.Context, ownerID, id uuid.UUID) (Code, error)
	// GetByHash finds a code of any owner by the hash of its value and locks
	// it for the transaction (redeem counts on it).
	GetByHash(ctx context.Context, hash []byte) (Code, error)
	// SetRevoked stamps revoked_at (only where unset) and returns the code.
	SetRevoked(ctx context.Context, ownerID, id uuid.UUID, at time.Time) (Code, error)
	// MarkRedeemed counts one redemption at at.
	MarkRedeemed(ctx context.Context, id uuid.UUID, at time.Time) (Code, error)
	// List returns up to limit+1 codes of the owner, newest first, after the
	// cursor.
	List(ctx context.Context, ownerID uuid.UUID, limit int, after *Cursor) ([]Code, error)
}

// EmbedStore stores embeds.
type EmbedStore interface {
	Insert(ctx context.Context, e Embed) (Embed, error)
	Get(ctx context.Context, ownerID, id uuid.UUID) (Embed, error)
	Delete(ctx context.Context, ownerID, id uuid.UUID) error
	List(ctx context.Context, ownerID uuid.UUID) ([]Embed, error)
	// Scope reads an embed of any owner with its current code and role.
	Scope(ctx context.Context, embedID uuid.UUID) (EmbedScope, error)
}

// RequestStore stores access requests.
type RequestStore interface {
	Insert(ctx context.Context, r AccessRequest) (AccessRequest, error)
	// GetForUpdate returns a request and locks it for the transaction.
	GetForUpdate(ctx context.Context, ownerID, id uuid.UUID) (AccessRequest, error)
	// SetStatus writes status, code and updated_at.
	SetStatus(ctx context.Context, r AccessRequest) (AccessRequest, error)
	// List returns up to limit+1 requests of the owner (of one status when
	// status is set), newest first, after the cursor.
	List(ctx context.Context, ownerID uuid.UUID, status RequestStatus, limit int, after *Cursor) ([]AccessRequest, error)
	// CountSince counts the owner's requests created at or after since,
	// only those of clientKey when it is not empty.
	CountSince(ctx context.Context, ownerID uuid.UUID, clientKey string, since time.Time) (int, error)
}
