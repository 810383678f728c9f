// Package accesstest holds an in-memory implementation of the access ports
// and the contract suite that it and the PostgreSQL adapter both pass.
package accesstest

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/domaintest"
)

// Event is an event the fake committed.
type Event = domaintest.Event

// Memory implements access.UnitOfWork in memory: a domaintest.Snapshot of
// the stores' state, one unit of work at a time, on a copy kept only when
// fn returns nil.
type Memory struct {
	snap *domaintest.Snapshot[state]
}

type state struct {
	roles    map[uuid.UUID]access.Role
	codes    map[uuid.UUID]access.Code
	embeds   map[uuid.UUID]access.Embed
	requests map[uuid.UUID]access.AccessRequest
}

func (s state) clone() state {
	return state{roles: maps.Clone(s.roles), codes: maps.Clone(s.codes), embeds: maps.Clone(s.embeds), requests: maps.Clone(s.requests)}
}

var _ access.UnitOfWork = (*Memory)(nil)

// NewMemory returns an empty store.
func NewMemory() *Memory {
	return &Memory{snap: domaintest.NewSnapshot(state{roles: map[uuid.UUID]access.Role{}, codes: map[uuid.UUID]access.Code{},
		embeds: map[uuid.UUID]access.Embed{}, requests: map[uuid.UUID]access.AccessRequest{}}, state.clone)}
}

// Do implements access.UnitOfWork.
func (m *Memory) Do(ctx context.Context, fn func(tx access.Tx) error) error {
	return m.snap.Do(ctx, func(st *state, rec *domaintest.TxRecorder) error {
		return fn(&memTx{st: st, rec: rec})
	})
}

// Events returns the committed events, oldest first.
func (m *Memory) Events() []Event { return m.snap.Recorder().Events() }

// Recorder returns the fake Recorder (Fail injects recording failures).
func (m *Memory) Recorder() *domaintest.Recorder { return m.snap.Recorder() }

type memTx struct {
	st  *state
	rec *domaintest.TxRecorder
}

func (t *memTx) Roles() access.RoleStore       { return &memRoles{t} }
func (t *memTx) Codes() access.CodeStore       { return &memCodes{t} }
func (t *memTx) Embeds() access.EmbedStore     { return &memEmbeds{t} }
func (t *memTx) Requests() access.RequestStore { return &memRequests{t} }
func (t *memTx) Recorder() domain.Recorder     { return t.rec }

func notFound(what string) error { return domain.NotFound("NOT_FOUND", "no such "+what) }

func strs(s []string) []string { return append([]string{}, s...) }

func timePtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

func idPtr(id *uuid.UUID) *uuid.UUID {
	if id == nil {
		return nil
	}
	c := *id
	return &c
}

type memRoles struct{ t *memTx }

func (s *memRoles) nameTaken(r access.Role) bool {
	for _, o := range s.t.st.roles {
		if o.OwnerID == r.OwnerID && o.Name == r.Name && o.ID != r.ID {
			return true
		}
	}
	return false
}

func (s *memRoles) Insert(_ context.Context, r access.Role) (access.Role, error) {
	if s.nameTaken(r) {
		return access.Role{}, domain.Conflict("ROLE_NAME_TAKEN", "a role of that name exists")
	}
	r.URIGlobs = strs(r.URIGlobs)
	s.t.st.roles[r.ID] = r
	return r, nil
}

func (s *memRoles) Get(_ context.Context, ownerID, id uuid.UUID) (access.Role, error) {
	r, ok := s.t.st.roles[id]
	if !ok || r.OwnerID != ownerID {
		return access.Role{}, notFound("role")
	}
	r.URIGlobs = strs(r.URIGlobs)
	return r, nil
}

func (s *memRoles) Update(ctx context.Context, ownerID, id uuid.UUID, fn func(*access.Role) error) (access.Role, error) {
	r, err := s.Get(ctx, ownerID, id)
	if err != nil {
		return access.Role{}, err
	}
	if err := fn(&r); err != nil {
		return access.Role{}, err
	}
	old := s.t.st.roles[id]
	r.ID, r.OwnerID, r.CreatedAt = id, ownerID, old.CreatedAt
	if s.nameTaken(r) {
		return access.Role{}, domain.Conflict("ROLE_NAME_TAKEN", "a role of that name exists")
	}
	r.URIGlobs = strs(r.URIGlobs)
	s.t.st.roles[id] = r
	return r, nil
}

func (s *memRoles) Delete(ctx context.Context, ownerID, id uuid.UUID) error {
	if _, err := s.Get(ctx, ownerID, id); err != nil {
		return err
	}
	for _, c := range s.t.st.codes {
		if c.RoleID == id {
			return domain.Conflict("ROLE_IN_USE", "codes use this role; it cannot be deleted")
		}
	}
	delete(s.t.st.roles, id)
	return nil
}

func (s *memRoles) List(_ context.Context, ownerID uuid.UUID) ([]access.Role, error) {
	var out []access.Role
	for _, r := range s.t.st.roles {
		if r.OwnerID == ownerID {
			r.URIGlobs = strs(r.URIGlobs)
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

type memCodes struct{ t *memTx }

func copyCode(c access.Code) access.Code {
	c.DenyGlobs = strs(c.DenyGlobs)
	c.Hash = append([]byte(nil), c.Hash...)
	c.ExpiresAt, c.RevokedAt, c.LastRedeemedAt = timePtr(c.ExpiresAt), timePtr(c.RevokedAt), timePtr(c.LastRedeemedAt)
	c.RequestID = idPtr(c.RequestID)
	return c
}

func (s *memCodes) Insert(_ context.Context, c access.Code) (access.Code, error) {
	r, ok := s.t.st.roles[c.RoleID]
	if !ok || r.OwnerID != c.OwnerID {
		return access.Code{}, domain.Unprocessable("UNKNOWN_ROLE", "role_id names no role of yours")
	}
	for _, o := range s.t.st.codes {
		if bytes.Equal(o.Hash, c.Hash) {
			return access.Code{}, fmt.Errorf("insert code: duplicate hash")
		}
	}
	c = copyCode(c)
	s.t.st.codes[c.ID] = c
	return copyCode(c), nil
}

func (s *memCodes) Get(_ context.Context, ownerID, id uuid.UUID) (access.Code, error) {
	c, ok := s.t.st.codes[id]
	if !ok || c.OwnerID != ownerID {
		return access.Code{}, notFound("code")
	}
	return copyCode(c), nil
}

func (s *memCodes) GetByHash(_ context.Context, hash []byte) (access.Code, error) {
	for _, c := range s.t.st.codes {
		if bytes.Equal(c.Hash, hash) {
			return copyCode(c), nil
		}
	}
	return access.Code{}, notFound("code")
}

func (s *memCodes) SetRevoked(ctx context.Context, ownerID, id uuid.UUID, at time.Time) (access.Code, error) {
	c, err := s.Get(ctx, ownerID, id)
	if err != nil {
		return access.Code{}, err
	}
	if c.RevokedAt == nil {
		c.RevokedAt = &at
		s.t.st.codes[id] = copyCode(c)
	}
	return c, nil
}

func (s *memCodes) MarkRedeemed(_ context.Context, id uuid.UUID, at time.Time) (access.Code, error) {
	c, ok := s.t.st.codes[id]
	if !ok {
		return access.Code{}, notFound("code")
	}
	c.RedeemCount++
	c.LastRedeemedAt = &at
	s.t.st.codes[id] = copyCode(c)
	return copyCode(c), nil
}

// newestFirst sorts by (created_at, id) descending and keeps what comes
// after the cursor, up to limit+1.
func newestFirst[T any](rows []T, key func(T) access.Cursor, limit int, after *access.Cursor) []T {
	less := func(a, b access.Cursor) bool {
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.Before(b.CreatedAt)
		}
		return a.ID.String() < b.ID.String()
	}
	sort.Slice(rows, func(i, j int) bool { return less(key(rows[j]), key(rows[i])) })
	var out []T
	for _, r := range rows {
		if after != nil && !less(key(r), *after) {
			continue
		}
		out = append(out, r)
		if len(out) == limit+1 {
			break
		}
	}
	return out
}

func (s *memCodes) List(_ context.Context, ownerID uuid.UUID, limit int, after *access.Cursor) ([]access.Code, error) {
	var rows []access.Code
	for _, c := range s.t.st.codes {
		if c.OwnerID == ownerID {
			rows = append(rows, copyCode(c))
		}
	}
	return newestFirst(rows, func(c access.Code) access.Cursor { return access.Cursor{CreatedAt: c.CreatedAt, ID: c.ID} }, limit, after), nil
}

type memEmbeds struct{ t *memTx }

func (s *memEmbeds) Insert(_ context.Context, e access.Embed) (access.Embed, error) {
	c, ok := s.t.st.codes[e.CodeID]
	if !ok || c.OwnerID != e.OwnerID {
		return access.Embed{}, domain.Unprocessable("UNKNOWN_CODE", "code_id names no code of yours")
	}
	s.t.st.embeds[e.ID] = e
	return e, nil
}

func (s *memEmbeds) Get(_ context.Context, ownerID, id uuid.UUID) (access.Embed, error) {
	e, ok := s.t.st.embeds[id]
	if !ok || e.OwnerID != ownerID {
		return access.Embed{}, notFound("embed")
	}
	return e, nil
}

func (s *memEmbeds) Delete(ctx context.Context, ownerID, id uuid.UUID) error {
	if _, err := s.Get(ctx, ownerID, id); err != nil {
		return err
	}
	delete(s.t.st.embeds, id)
	return nil
}

func (s *memEmbeds) List(_ context.Context, ownerID uuid.UUID) ([]access.Embed, error) {
	var out []access.Embed
	for _, e := range s.t.st.embeds {
		if e.OwnerID == ownerID {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.After(out[j].CreatedAt)
		}
		return out[i].ID.String() > out[j].ID.String()
	})
	return out, nil
}

func (s *memEmbeds) Scope(_ context.Context, embedID uuid.UUID) (access.EmbedScope, error) {
	e, ok := s.t.st.embeds[embedID]
	if !ok {
		return access.EmbedScope{}, notFound("embed")
	}
	c := s.t.st.codes[e.CodeID]
	r := s.t.st.roles[c.RoleID]
	r.URIGlobs = strs(r.URIGlobs)
	return access.EmbedScope{Embed: e, Code: copyCode(c), Role: r}, nil
}

type memRequests struct{ t *memTx }

func (s *memRequests) Insert(_ context.Context, r access.AccessRequest) (access.AccessRequest, error) {
	s.t.st.requests[r.ID] = r
	return r, nil
}

func (s *memRequests) GetForUpdate(_ context.Context, ownerID, id uuid.UUID) (access.AccessRequest, error) {
	r, ok := s.t.st.requests[id]
	if !ok || r.OwnerID != ownerID {
		return access.AccessRequest{}, notFound("access request")
	}
	r.CodeID = idPtr(r.CodeID)
	return r, nil
}

func (s *memRequests) SetStatus(ctx context.Context, r access.AccessRequest) (access.AccessRequest, error) {
	cur, err := s.GetForUpdate(ctx, r.OwnerID, r.ID)
	if err != nil {
		return access.AccessRequest{}, err
	}
	cur.Status, cur.CodeID, cur.UpdatedAt = r.Status, idPtr(r.CodeID), r.UpdatedAt
	s.t.st.requests[r.ID] = cur
	return cur, nil
}

func (s *memRequests) List(_ context.Context, ownerID uuid.UUID, status access.RequestStatus, limit int, after *access.Cursor) ([]access.AccessRequest, error) {
	var rows []access.AccessRequest
	for _, r := range s.t.st.requests {
		if r.OwnerID == ownerID && (status == "" || r.Status == status) {
			rows = append(rows, r)
		}
	}
	return newestFirst(rows, func(r access.AccessRequest) access.Cursor { return access.Cursor{CreatedAt: r.CreatedAt, ID: r.ID} }, limit, after), nil
}

func (s *memRequests) CountSince(_ context.Context, ownerID uuid.UUID, clientKey string, since time.Time) (int, error) {
	n := 0
	for _, r := range s.t.st.requests {
		if r.OwnerID == ownerID && !r.CreatedAt.Before(since) && (clientKey == "" || r.ClientKey == clientKey) {
			n++
		}
	}
	return n, nil
}
