package access

import (
	"time"

	"github.com/google/uuid"
)

// Role is what a reader may see: the URIs matching its globs, and only the
// published slice when PublishedOnly.
type Role struct {
	ID            uuid.UUID
	OwnerID       uuid.UUID
	Name          string
	URIGlobs      []string
	PublishedOnly bool
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Code is an access code. Its value is shown once, when issued; only its
// SHA-256 hash and a short prefix (for recognising it in lists) are kept.
type Code struct {
	ID        uuid.UUID
	OwnerID   uuid.UUID
	RoleID    uuid.UUID
	Label     string
	Prefix    string
	Hash      []byte
	DenyGlobs []string
	ExpiresAt *time.Time
	RevokedAt *time.Time
	// RequestID is the access request the code was issued for, if any.
	RequestID      *uuid.UUID
	RedeemCount    int
	LastRedeemedAt *time.Time
	CreatedAt      time.Time
}

// Active reports whether the code admits anything at now: not revoked and
// not expired.
func (c Code) Active(now time.Time) bool {
	return c.RevokedAt == nil && (c.ExpiresAt == nil || now.Before(*c.ExpiresAt))
}

// Status is the state of a code as the API shows it.
func (c Code) Status(now time.Time) string {
	switch {
	case c.RevokedAt != nil:
		return "revoked"
	case c.ExpiresAt != nil && !now.Before(*c.ExpiresAt):
		return "expired"
	default:
		return "active"
	}
}

// Embed exposes one access code outside the instance (a site embedding the
// corpus, a webhook endpoint scoped to it).
type Embed struct {
	ID        uuid.UUID
	OwnerID   uuid.UUID
	CodeID    uuid.UUID
	Name      string
	CreatedAt time.Time
}

// EmbedScope is an embed with its code and the code's role, read together
// so an admission decision sees one consistent state.
type EmbedScope struct {
	Embed Embed
	Code  Code
	Role  Role
}

// RequestStatus is the state of an access request.
type RequestStatus string

// The states of an access request.
const (
	RequestPending  RequestStatus = "pending"
	RequestApproved RequestStatus = "approved"
	RequestRejected RequestStatus = "rejected"
)

// Valid reports whether s is a known status.
func (s RequestStatus) Valid() bool {
	return s == RequestPending || s == RequestApproved || s == RequestRejected
}

// AccessRequest is a visitor asking the owner for access.
type AccessRequest struct {
	ID      uuid.UUID
	OwnerID uuid.UUID
	Name    string
	Email   string
	Message string
	Status  RequestStatus
	// CodeID is the code issued on approval.
	CodeID *uuid.UUID
	// ClientKey identifies the requesting client for rate limiting: a hash
	// of its address, never the address itself.
	ClientKey string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Patch applies p to the role at now, normalised and checked as a new
// role's input is.
func (r *Role) Patch(p RolePatch, now time.Time) error {
	in := RoleInput{Name: r.Name, URIGlobs: r.URIGlobs, PublishedOnly: r.PublishedOnly}
	if p.Name != nil {
		in.Name = *p.Name
	}
	if p.URIGlobs != nil {
		in.URIGlobs = *p.URIGlobs
	}
	if p.PublishedOnly != nil {
		in.PublishedOnly = *p.PublishedOnly
	}
	in, err := in.normalize()
	if err != nil {
		return err
	}
	r.Name, r.URIGlobs, r.PublishedOnly, r.UpdatedAt = in.Name, in.URIGlobs, in.PublishedOnly, now
	return nil
}
