package access

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/entity"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// RequestLimits rate-limit access requests, which anyone may send.
type RequestLimits struct {
	// PerClient is the most requests one client address may send per
	// Window (default 3).
	PerClient int
	// PerOwner is the most requests an owner receives per Window from
	// everyone together (default 50), so a botnet cannot flood the inbox.
	PerOwner int
	// Window is the rate-limit window (default one hour).
	Window time.Duration
}

func (l RequestLimits) withDefaults() RequestLimits {
	if l.PerClient <= 0 {
		l.PerClient = 3
	}
	if l.PerOwner <= 0 {
		l.PerOwner = 50
	}
	if l.Window <= 0 {
		l.Window = time.Hour
	}
	return l
}

// Deps are what the access use cases are built from.
type Deps struct {
	UoW UnitOfWork
	// Clock defaults to the system clock.
	Clock domain.Clock
	// Random is the source of code values (default crypto/rand).
	Random io.Reader
	Limits RequestLimits
}

// Service holds the access use cases.
type Service struct {
	uow    UnitOfWork
	clock  domain.Clock
	random io.Reader
	limits RequestLimits
}

// New returns the access use cases.
func New(d Deps) *Service {
	if d.Clock == nil {
		d.Clock = domain.SystemClock{}
	}
	if d.Random == nil {
		d.Random = rand.Reader
	}
	return &Service{uow: d.UoW, clock: d.Clock, random: d.Random, limits: d.Limits.withDefaults()}
}

// now is the clock at the database's precision.
func (s *Service) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }

func newID() (uuid.UUID, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, fmt.Errorf("new id: %w", err)
	}
	return id, nil
}

// Limits on inputs.
const (
	MaxNameLen    = 100
	MaxGlobs      = 64
	MaxGlobLen    = 500
	MaxLabelLen   = 200
	MaxMessageLen = 4000
	MaxEmailLen   = 254
)

func textField(field, v string, max int, required bool) (string, error) {
	v = strings.TrimSpace(v)
	if required && v == "" {
		return "", domain.Validation("REQUIRED", field+" is required").WithField(field)
	}
	if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
		return "", domain.Validation("INVALID_TEXT", field+" must be valid UTF-8 without NUL characters").WithField(field)
	}
	if utf8.RuneCountInString(v) > max {
		return "", domain.Validation("TOO_LONG", fmt.Sprintf("%s is longer than %d characters", field, max)).WithField(field)
	}
	return v, nil
}

// globs validates URI globs: trimmed, non-empty, bounded, and none aimed at
// raw://, which nothing ever admits (such a glob would only mislead).
func globs(field string, in []string, required bool) ([]string, error) {
	if required && len(in) == 0 {
		return nil, domain.Validation("REQUIRED", field+" needs at least one glob").WithField(field)
	}
	if len(in) > MaxGlobs {
		return nil, domain.Validation("TOO_MANY", fmt.Sprintf("%s holds more than %d globs", field, MaxGlobs)).WithField(field)
	}
	out := make([]string, 0, len(in))
	for _, g := range in {
		g = strings.TrimSpace(g)
		if g == "" || len(g) > MaxGlobLen || !utf8.ValidString(g) || strings.ContainsRune(g, 0) {
			return nil, domain.Validation("INVALID_GLOB", fmt.Sprintf("%s: each glob is non-empty text of at most %d bytes", field, MaxGlobLen)).WithField(field)
		}
		if entity.IsRaw(g) {
			return nil, domain.Validation("RAW_NEVER_ADMITTED", "raw:// notes are never admitted; remove "+g).WithField(field)
		}
		out = append(out, g)
	}
	return out, nil
}

// --- roles ---

// RoleInput is a role's writable fields.
type RoleInput struct {
	Name          string
	URIGlobs      []string
	PublishedOnly bool
}

func (in RoleInput) normalize() (RoleInput, error) {
	var err error
	if in.Name, err = textField("name", in.Name, MaxNameLen, true); err != nil {
		return in, err
	}
	if in.URIGlobs, err = globs("uri_globs", in.URIGlobs, true); err != nil {
		return in, err
	}
	return in, nil
}

// CreateRole adds a role.
func (s *Service) CreateRole(ctx context.Context, ownerID uuid.UUID, in RoleInput) (Role, error) {
	in, err := in.normalize()
	if err != nil {
		return Role{}, err
	}
	id, err := newID()
	if err != nil {
		return Role{}, err
	}
	now := s.now()
	var out Role
	err = s.uow.Do(ctx, func(tx Tx) error {
		out, err = tx.Roles().Insert(ctx, Role{ID: id, OwnerID: ownerID, Name: in.Name, URIGlobs: in.URIGlobs,
			PublishedOnly: in.PublishedOnly, CreatedAt: now, UpdatedAt: now})
		return err
	})
	return out, err
}

// RolePatch changes some fields of a role.
type RolePatch struct {
	Name          *string
	URIGlobs      *[]string
	PublishedOnly *bool
}

// UpdateRole changes a role. Codes of the role read the new scope at once:
// admission is decided from the current role every time.
func (s *Service) UpdateRole(ctx context.Context, ownerID, id uuid.UUID, p RolePatch) (Role, error) {
	var out Role
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		out, err = tx.Roles().Update(ctx, ownerID, id, func(r *Role) error {
			return r.Patch(p, s.now())
		})
		return err
	})
	return out, err
}

// DeleteRole removes a role no code uses.
func (s *Service) DeleteRole(ctx context.Context, ownerID, id uuid.UUID) error {
	return s.uow.Do(ctx, func(tx Tx) error { return tx.Roles().Delete(ctx, ownerID, id) })
}

// ListRoles returns the owner's roles.
func (s *Service) ListRoles(ctx context.Context, ownerID uuid.UUID) ([]Role, error) {
	var out []Role
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		out, err = tx.Roles().List(ctx, ownerID)
		return err
	})
	return out, err
}

// --- codes ---

// codePrefix starts every code value, so a leaked one is recognisable
// (secret scanners, logs).
const codePrefix = "smac_"

// codeEncoding is lower-case base32 without padding: easy to read aloud and
// type, safe in URLs.
var codeEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// hashCode is the stored form of a code value. SHA-256 without salt is
// enough because values carry 160 random bits: there is nothing to guess.
func hashCode(value string) []byte {
	h := sha256.Sum256([]byte(value))
	return h[:]
}

// IssueInput is a new code.
type IssueInput struct {
	RoleID    uuid.UUID
	Label     string
	DenyGlobs []string
	ExpiresAt *time.Time
}

// IssuedCode is a code with its value, which exists only in this answer.
type IssuedCode struct {
	Code  Code
	Value string
}

// CodeIssuedData is the data of code.issued.
type CodeIssuedData struct {
	CodeID    uuid.UUID  `json:"code_id"`
	RoleID    uuid.UUID  `json:"role_id"`
	ExpiresAt *time.Time `json:"expires_at"`
	RequestID *uuid.UUID `json:"request_id"`
}

// CodeData is the data of code.revoked and code.redeemed.
type CodeData struct {
	CodeID uuid.UUID `json:"code_id"`
	RoleID uuid.UUID `json:"role_id"`
}

func subjectCode(id uuid.UUID) string    { return "code/" + id.String() }
func subjectRequest(id uuid.UUID) string { return "access_request/" + id.String() }

// IssueCode issues a code for a role and records code.issued. The value is
// returned once and never stored.
func (s *Service) IssueCode(ctx context.Context, ownerID uuid.UUID, in IssueInput) (IssuedCode, error) {
	var out IssuedCode
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		out, err = s.issue(ctx, tx, ownerID, in, nil)
		return err
	})
	return out, err
}

func (s *Service) issue(ctx context.Context, tx Tx, ownerID uuid.UUID, in IssueInput, requestID *uuid.UUID) (IssuedCode, error) {
	label, err := textField("label", in.Label, MaxLabelLen, false)
	if err != nil {
		return IssuedCode{}, err
	}
	deny, err := globs("deny_globs", in.DenyGlobs, false)
	if err != nil {
		return IssuedCode{}, err
	}
	now := s.now()
	if in.ExpiresAt != nil && !in.ExpiresAt.After(now) {
		return IssuedCode{}, domain.Validation("EXPIRES_IN_PAST", "expires_at must be in the future").WithField("expires_at")
	}
	if _, err := tx.Roles().Get(ctx, ownerID, in.RoleID); err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return IssuedCode{}, domain.Unprocessable("UNKNOWN_ROLE", "role_id names no role of yours").WithField("role_id")
		}
		return IssuedCode{}, err
	}
	raw := make([]byte, 20)
	if _, err := io.ReadFull(s.random, raw); err != nil {
		return IssuedCode{}, fmt.Errorf("generate code: %w", err)
	}
	value := codePrefix + codeEncoding.EncodeToString(raw)
	id, err := newID()
	if err != nil {
		return IssuedCode{}, err
	}
	var expires *time.Time
	if in.ExpiresAt != nil {
		e := in.ExpiresAt.UTC().Truncate(time.Microsecond)
		expires = &e
	}
	c, err := tx.Codes().Insert(ctx, Code{ID: id, OwnerID: ownerID, RoleID: in.RoleID, Label: label,
		Prefix: value[:len(codePrefix)+6], Hash: hashCode(value), DenyGlobs: deny, ExpiresAt: expires,
		RequestID: requestID, CreatedAt: now})
	if err != nil {
		return IssuedCode{}, err
	}
	data := CodeIssuedData{CodeID: c.ID, RoleID: c.RoleID, ExpiresAt: c.ExpiresAt, RequestID: requestID}
	if _, err := tx.Recorder().Record(ctx, ownerID, domain.EventCodeIssued, subjectCode(c.ID), data); err != nil {
		return IssuedCode{}, fmt.Errorf("record %s: %w", domain.EventCodeIssued, err)
	}
	return IssuedCode{Code: c, Value: value}, nil
}

// RevokeCode revokes a code and records code.revoked; every embed of it
// admits nothing from then on. Revoking a revoked code changes nothing and
// records nothing.
func (s *Service) RevokeCode(ctx context.Context, ownerID, id uuid.UUID) (Code, error) {
	var out Code
	err := s.uow.Do(ctx, func(tx Tx) error {
		c, err := tx.Codes().Get(ctx, ownerID, id)
		if err != nil {
			return err
		}
		if c.RevokedAt != nil {
			out = c
			return nil
		}
		if out, err = tx.Codes().SetRevoked(ctx, ownerID, id, s.now()); err != nil {
			return err
		}
		_, err = tx.Recorder().Record(ctx, ownerID, domain.EventCodeRevoked, subjectCode(id), CodeData{CodeID: id, RoleID: c.RoleID})
		if err != nil {
			return fmt.Errorf("record %s: %w", domain.EventCodeRevoked, err)
		}
		return nil
	})
	return out, err
}

// GetCode returns one code (never its value).
func (s *Service) GetCode(ctx context.Context, ownerID, id uuid.UUID) (Code, error) {
	var out Code
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		out, err = tx.Codes().Get(ctx, ownerID, id)
		return err
	})
	return out, err
}

// ListCodes returns a page of the owner's codes, newest first.
func (s *Service) ListCodes(ctx context.Context, ownerID uuid.UUID, page op.PageInput) ([]Code, string, error) {
	limit := page.NormalizedLimit()
	after, err := decodeCursor(page.Cursor)
	if err != nil {
		return nil, "", err
	}
	var rows []Code
	err = s.uow.Do(ctx, func(tx Tx) error {
		var err error
		rows, err = tx.Codes().List(ctx, ownerID, limit, after)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(rows) > limit {
		rows = rows[:limit]
		next = encodeCursor(Cursor{CreatedAt: rows[limit-1].CreatedAt, ID: rows[limit-1].ID})
	}
	return rows, next, nil
}

// Redeemed is what a visitor learns by redeeming a code.
type Redeemed struct {
	CodeID        uuid.UUID
	OwnerID       uuid.UUID
	RoleName      string
	PublishedOnly bool
	ExpiresAt     *time.Time
}

// Redeem checks a code a visitor presents and records code.redeemed. An
// unknown, revoked or expired code is the same 401 INVALID_CODE, so the
// answer tells nothing about codes one does not hold.
func (s *Service) Redeem(ctx context.Context, value string) (Redeemed, error) {
	invalid := domain.Unauthorized("INVALID_CODE", "the code is not valid")
	value = strings.TrimSpace(value)
	if !strings.HasPrefix(value, codePrefix) || len(value) > 100 {
		return Redeemed{}, invalid
	}
	hash := hashCode(value)
	var out Redeemed
	err := s.uow.Do(ctx, func(tx Tx) error {
		c, err := tx.Codes().GetByHash(ctx, hash)
		if errors.Is(err, domain.ErrNotFound) {
			return invalid
		}
		if err != nil {
			return err
		}
		now := s.now()
		// The store looked the hash up by index; compare again in constant
		// time so no store shortcut can leak timing.
		if subtle.ConstantTimeCompare(c.Hash, hash) != 1 || !c.Active(now) {
			return invalid
		}
		role, err := tx.Roles().Get(ctx, c.OwnerID, c.RoleID)
		if err != nil {
			return fmt.Errorf("role of code %s: %w", c.ID, err)
		}
		if _, err := tx.Codes().MarkRedeemed(ctx, c.ID, now); err != nil {
			return err
		}
		if _, err := tx.Recorder().Record(ctx, c.OwnerID, domain.EventCodeRedeemed, subjectCode(c.ID), CodeData{CodeID: c.ID, RoleID: c.RoleID}); err != nil {
			return fmt.Errorf("record %s: %w", domain.EventCodeRedeemed, err)
		}
		out = Redeemed{CodeID: c.ID, OwnerID: c.OwnerID, RoleName: role.Name, PublishedOnly: role.PublishedOnly, ExpiresAt: c.ExpiresAt}
		return nil
	})
	return out, err
}

// --- embeds ---

// EmbedInput is a new embed.
type EmbedInput struct {
	CodeID uuid.UUID
	Name   string
}

// CreateEmbed exposes one of the owner's active codes.
func (s *Service) CreateEmbed(ctx context.Context, ownerID uuid.UUID, in EmbedInput) (Embed, error) {
	name, err := textField("name", in.Name, MaxNameLen, true)
	if err != nil {
		return Embed{}, err
	}
	id, err := newID()
	if err != nil {
		return Embed{}, err
	}
	var out Embed
	err = s.uow.Do(ctx, func(tx Tx) error {
		c, err := tx.Codes().Get(ctx, ownerID, in.CodeID)
		if errors.Is(err, domain.ErrNotFound) {
			return domain.Unprocessable("UNKNOWN_CODE", "code_id names no code of yours").WithField("code_id")
		}
		if err != nil {
			return err
		}
		if !c.Active(s.now()) {
			return domain.Unprocessable("CODE_INACTIVE", "the code is revoked or expired").WithField("code_id")
		}
		out, err = tx.Embeds().Insert(ctx, Embed{ID: id, OwnerID: ownerID, CodeID: c.ID, Name: name, CreatedAt: s.now()})
		return err
	})
	return out, err
}

// DeleteEmbed removes an embed; it admits nothing from then on.
func (s *Service) DeleteEmbed(ctx context.Context, ownerID, id uuid.UUID) error {
	return s.uow.Do(ctx, func(tx Tx) error { return tx.Embeds().Delete(ctx, ownerID, id) })
}

// ListEmbeds returns the owner's embeds.
func (s *Service) ListEmbeds(ctx context.Context, ownerID uuid.UUID) ([]Embed, error) {
	var out []Embed
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		out, err = tx.Embeds().List(ctx, ownerID)
		return err
	})
	return out, err
}

// EmbedAdmits reports whether the embed admits a corpus entry, answering
// from the embed's current code and role every time it is asked: a deleted
// embed, a revoked or expired code admit nothing; otherwise the one ACL
// predicate decides (role globs minus the code's denials, the published
// slice where the role reads only that, raw:// never).
func (s *Service) EmbedAdmits(ctx context.Context, embedID uuid.UUID, entry entity.CorpusEntry) (bool, error) {
	var sc EmbedScope
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		sc, err = tx.Embeds().Scope(ctx, embedID)
		return err
	})
	if errors.Is(err, domain.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("embed scope %s: %w", embedID, err)
	}
	if !sc.Code.Active(s.now()) {
		return false, nil
	}
	return entity.AllowsCorpusEntry(sc.Role.URIGlobs, sc.Code.DenyGlobs, sc.Role.PublishedOnly, entry), nil
}

// EmbedBelongsTo reports whether embedID is an embed of ownerID (the
// webhook endpoint ops check an embed_id with it).
func (s *Service) EmbedBelongsTo(ctx context.Context, ownerID, embedID uuid.UUID) (bool, error) {
	err := s.uow.Do(ctx, func(tx Tx) error {
		_, err := tx.Embeds().Get(ctx, ownerID, embedID)
		return err
	})
	if errors.Is(err, domain.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("embed %s: %w", embedID, err)
	}
	return true, nil
}

// --- access requests ---

// RequestInput is what a visitor sends.
type RequestInput struct {
	Name    string
	Email   string
	Message string
}

// RequestData is the data of access_request.created.
type RequestData struct {
	RequestID uuid.UUID `json:"request_id"`
}

// RequestApprovedData is the data of access_request.approved.
type RequestApprovedData struct {
	RequestID uuid.UUID `json:"request_id"`
	CodeID    uuid.UUID `json:"code_id"`
}

// RequestStatusData is the data of access_request.status_changed.
type RequestStatusData struct {
	RequestID uuid.UUID     `json:"request_id"`
	From      RequestStatus `json:"from"`
	To        RequestStatus `json:"to"`
}

// ClientKey turns a client address into the key requests are counted by:
// a hash scoped to the owner, so no address is stored.
func ClientKey(ownerID uuid.UUID, addr string) string {
	h := sha256.Sum256([]byte(ownerID.String() + "|" + addr))
	return hex.EncodeToString(h[:16])
}

// CreateAccessRequest stores a visitor's request and records
// access_request.created. It is rate-limited per client (clientKey, from
// ClientKey) and per owner; over a limit it returns 429 RATE_LIMITED and
// stores nothing. Event data carries only the request's id: the visitor's
// name and email stay in the instance.
func (s *Service) CreateAccessRequest(ctx context.Context, ownerID uuid.UUID, in RequestInput, clientKey string) (AccessRequest, error) {
	var err error
	if in.Name, err = textField("name", in.Name, MaxNameLen, true); err != nil {
		return AccessRequest{}, err
	}
	if in.Email, err = textField("email", in.Email, MaxEmailLen, true); err != nil {
		return AccessRequest{}, err
	}
	if a, perr := mail.ParseAddress(in.Email); perr != nil || a.Address != in.Email {
		return AccessRequest{}, domain.Validation("INVALID_EMAIL", "email is not an address like name@example.com").WithField("email")
	}
	if in.Message, err = textField("message", in.Message, MaxMessageLen, false); err != nil {
		return AccessRequest{}, err
	}
	id, err := newID()
	if err != nil {
		return AccessRequest{}, err
	}
	now := s.now()
	var out AccessRequest
	err = s.uow.Do(ctx, func(tx Tx) error {
		since := now.Add(-s.limits.Window)
		n, err := tx.Requests().CountSince(ctx, ownerID, clientKey, since)
		if err != nil {
			return err
		}
		if n >= s.limits.PerClient {
			return domain.RateLimited("RATE_LIMITED", "too many access requests from this address; try again later")
		}
		if n, err = tx.Requests().CountSince(ctx, ownerID, "", since); err != nil {
			return err
		}
		if n >= s.limits.PerOwner {
			return domain.RateLimited("RATE_LIMITED", "too many access requests right now; try again later")
		}
		out, err = tx.Requests().Insert(ctx, AccessRequest{ID: id, OwnerID: ownerID, Name: in.Name, Email: in.Email,
			Message: in.Message, Status: RequestPending, ClientKey: clientKey, CreatedAt: now, UpdatedAt: now})
		if err != nil {
			return err
		}
		if _, err := tx.Recorder().Record(ctx, ownerID, domain.EventAccessRequestCreated, subjectRequest(id), RequestData{RequestID: id}); err != nil {
			return fmt.Errorf("record %s: %w", domain.EventAccessRequestCreated, err)
		}
		return nil
	})
	return out, err
}

// ListAccessRequests returns a page of the owner's requests, newest first,
// only those of status when it is set.
func (s *Service) ListAccessRequests(ctx context.Context, ownerID uuid.UUID, status RequestStatus, page op.PageInput) ([]AccessRequest, string, error) {
	if status != "" && !status.Valid() {
		return nil, "", domain.Validation("INVALID_STATUS", "status is one of pending, approved, rejected").WithField("status")
	}
	limit := page.NormalizedLimit()
	after, err := decodeCursor(page.Cursor)
	if err != nil {
		return nil, "", err
	}
	var rows []AccessRequest
	err = s.uow.Do(ctx, func(tx Tx) error {
		var err error
		rows, err = tx.Requests().List(ctx, ownerID, status, limit, after)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(rows) > limit {
		rows = rows[:limit]
		next = encodeCursor(Cursor{CreatedAt: rows[limit-1].CreatedAt, ID: rows[limit-1].ID})
	}
	return rows, next, nil
}

// Approved is an approved request and the code issued for it (its value
// shown this once, for the owner to pass on).
type Approved struct {
	Request AccessRequest
	Code    IssuedCode
}

// ApproveRequest approves a pending request: it issues a code (code.issued)
// and records access_request.approved and access_request.status_changed, in
// one transaction.
func (s *Service) ApproveRequest(ctx context.Context, ownerID, id uuid.UUID, in IssueInput) (Approved, error) {
	var out Approved
	err := s.uow.Do(ctx, func(tx Tx) error {
		r, err := s.pending(ctx, tx, ownerID, id)
		if err != nil {
			return err
		}
		code, err := s.issue(ctx, tx, ownerID, in, &r.ID)
		if err != nil {
			return err
		}
		r.Status, r.CodeID, r.UpdatedAt = RequestApproved, &code.Code.ID, s.now()
		if r, err = tx.Requests().SetStatus(ctx, r); err != nil {
			return err
		}
		rec := tx.Recorder()
		if _, err := rec.Record(ctx, ownerID, domain.EventAccessRequestApproved, subjectRequest(id), RequestApprovedData{RequestID: id, CodeID: code.Code.ID}); err != nil {
			return fmt.Errorf("record %s: %w", domain.EventAccessRequestApproved, err)
		}
		if err := recordStatus(ctx, rec, ownerID, id, RequestPending, RequestApproved); err != nil {
			return err
		}
		out = Approved{Request: r, Code: code}
		return nil
	})
	return out, err
}

// RejectRequest rejects a pending request and records
// access_request.status_changed.
func (s *Service) RejectRequest(ctx context.Context, ownerID, id uuid.UUID) (AccessRequest, error) {
	var out AccessRequest
	err := s.uow.Do(ctx, func(tx Tx) error {
		r, err := s.pending(ctx, tx, ownerID, id)
		if err != nil {
			return err
		}
		r.Status, r.UpdatedAt = RequestRejected, s.now()
		if out, err = tx.Requests().SetStatus(ctx, r); err != nil {
			return err
		}
		return recordStatus(ctx, tx.Recorder(), ownerID, id, RequestPending, RequestRejected)
	})
	return out, err
}

func (s *Service) pending(ctx context.Context, tx Tx, ownerID, id uuid.UUID) (AccessRequest, error) {
	r, err := tx.Requests().GetForUpdate(ctx, ownerID, id)
	if err != nil {
		return AccessRequest{}, err
	}
	if r.Status != RequestPending {
		return AccessRequest{}, domain.Conflict("REQUEST_NOT_PENDING", fmt.Sprintf("the request is already %s", r.Status))
	}
	return r, nil
}

func recordStatus(ctx context.Context, rec domain.Recorder, ownerID, id uuid.UUID, from, to RequestStatus) error {
	if _, err := rec.Record(ctx, ownerID, domain.EventAccessRequestStatusChanged, subjectRequest(id), RequestStatusData{RequestID: id, From: from, To: to}); err != nil {
		return fmt.Errorf("record %s: %w", domain.EventAccessRequestStatusChanged, err)
	}
	return nil
}

// --- cursors ---

func encodeCursor(c Cursor) string {
	return op.KeysetCursor{At: c.CreatedAt, ID: c.ID}.String()
}

func decodeCursor(s string) (*Cursor, error) {
	k, err := op.ParseKeysetCursor(s)
	if k == nil || err != nil {
		return nil, err
	}
	return &Cursor{CreatedAt: k.At, ID: k.ID}, nil
}
