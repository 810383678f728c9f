// Package ownertest holds the owner domain's in-memory unit of work and
// the contract suite that it and the PostgreSQL adapter both pass.
package ownertest

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/domaintest"
	"github.com/standmeet/standmeet/internal/owner"
)

// Memory is an in-memory owner.UnitOfWork with every store of the domain,
// for unit tests and for trying the domain without a database: a
// domaintest.Snapshot of the stores' state, transactions serialised and
// isolated, fn's copy of the state kept only when fn returns nil. The
// PostgreSQL adapter's contract suite runs against Memory too, so the two
// keep the same behaviour.
//
// Its Recorder keeps the events of committed transactions (Events) and
// refuses to record outside the transaction it was handed out by — the
// check behind "every Record happens in the use case's transaction".
type Memory struct {
	snap *domaintest.Snapshot[memState]

	mu sync.Mutex
	// Mailer, when set, receives recovery messages after commit.
	Mailer    owner.RecoveryMailer
	delivered []owner.RecoveryMessage
}

// MemoryEvent is an event recorded in a committed Memory transaction.
type MemoryEvent = domaintest.Event

type memState struct {
	owners   map[uuid.UUID]owner.Owner
	sessions map[uuid.UUID]owner.Session
	keys     map[uuid.UUID]owner.APIKey
	attempts []owner.Attempt
	bans     map[uuid.UUID]owner.IPBan
	recovery map[uuid.UUID]owner.RecoveryToken
}

// clone copies the state. Pointer fields inside the values are shared, so
// stores always replace them and never write through them.
func (s memState) clone() memState {
	return memState{
		owners:   maps.Clone(s.owners),
		sessions: maps.Clone(s.sessions),
		keys:     maps.Clone(s.keys),
		attempts: append([]owner.Attempt(nil), s.attempts...),
		bans:     maps.Clone(s.bans),
		recovery: maps.Clone(s.recovery),
	}
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{snap: domaintest.NewSnapshot(memState{
		owners: map[uuid.UUID]owner.Owner{}, sessions: map[uuid.UUID]owner.Session{}, keys: map[uuid.UUID]owner.APIKey{},
		bans: map[uuid.UUID]owner.IPBan{}, recovery: map[uuid.UUID]owner.RecoveryToken{},
	}, memState.clone)}
}

var (
	_ owner.UnitOfWork = (*Memory)(nil)
	_ owner.Tx         = (*memTx)(nil)
)

// Do runs fn in a transaction of its own and delivers the recovery messages
// it queued once it commits.
func (m *Memory) Do(ctx context.Context, fn func(tx owner.Tx) error) error {
	var tx *memTx
	err := m.snap.Do(ctx, func(st *memState, rec *domaintest.TxRecorder) error {
		tx = &memTx{st: st, rec: rec, open: true}
		defer func() { tx.open = false }()
		return fn(tx)
	})
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.delivered = append(m.delivered, tx.outbox...)
	mailer := m.Mailer
	m.mu.Unlock()
	if mailer != nil {
		for _, msg := range tx.outbox {
			mailer.DeliverRecovery(ctx, msg)
		}
	}
	return nil
}

// Recorder returns the fake Recorder (Fail makes Record fail for chosen
// event types, to test that a failed Record rolls back).
func (m *Memory) Recorder() *domaintest.Recorder { return m.snap.Recorder() }

// Events returns the events of committed transactions, oldest first.
func (m *Memory) Events() []MemoryEvent { return m.snap.Recorder().Events() }

// Delivered returns the recovery messages of committed transactions.
func (m *Memory) Delivered() []owner.RecoveryMessage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]owner.RecoveryMessage(nil), m.delivered...)
}

// StrayRecords counts Record calls made after their transaction had ended
// (each also failed). A correct use case leaves it at zero.
func (m *Memory) StrayRecords() int { return m.snap.Recorder().Strays() }

// Transactions returns how many transactions ran and how many rolled back.
func (m *Memory) Transactions() (total, rolledBack int) { return m.snap.Transactions() }

type memTx struct {
	st     *memState
	rec    *domaintest.TxRecorder
	open   bool
	outbox []owner.RecoveryMessage
}

func (t *memTx) Owners() owner.OwnerStore      { return memOwners{t} }
func (t *memTx) Sessions() owner.SessionStore  { return memSessions{t} }
func (t *memTx) APIKeys() owner.APIKeyStore    { return memKeys{t} }
func (t *memTx) Attempts() owner.AttemptStore  { return memAttempts{t} }
func (t *memTx) Bans() owner.BanStore          { return memBans{t} }
func (t *memTx) Recovery() owner.RecoveryStore { return memRecovery{t} }
func (t *memTx) Recorder() domain.Recorder     { return t.rec }
func (t *memTx) Outbox() owner.RecoveryOutbox  { return memOutbox{t} }

// check refuses a store used after its transaction ended.
func (t *memTx) check() error {
	if !t.open {
		return domaintest.ErrTxEnded
	}
	return nil
}

func notFound(what string) error { return fmt.Errorf("%s: %w", what, domain.ErrNotFound) }

type memOutbox struct{ t *memTx }

func (o memOutbox) Enqueue(_ context.Context, msg owner.RecoveryMessage) error {
	if err := o.t.check(); err != nil {
		return err
	}
	o.t.outbox = append(o.t.outbox, msg)
	return nil
}

type memOwners struct{ t *memTx }

func (s memOwners) emailFree(email string, except uuid.UUID) bool {
	for _, o := range s.t.st.owners {
		if o.ID != except && strings.EqualFold(o.Email, email) {
			return false
		}
	}
	return true
}

func (s memOwners) Create(_ context.Context, o owner.Owner) error {
	if err := s.t.check(); err != nil {
		return err
	}
	if !s.emailFree(o.Email, uuid.Nil) {
		return owner.ErrEmailTaken
	}
	if _, dup := s.t.st.owners[o.ID]; dup {
		return fmt.Errorf("owner %s already exists", o.ID)
	}
	s.t.st.owners[o.ID] = o
	return nil
}

func (s memOwners) ByID(_ context.Context, id uuid.UUID) (owner.Owner, error) {
	if err := s.t.check(); err != nil {
		return owner.Owner{}, err
	}
	o, ok := s.t.st.owners[id]
	if !ok {
		return owner.Owner{}, notFound("owner")
	}
	return o, nil
}

func (s memOwners) ByEmail(_ context.Context, email string) (owner.Owner, error) {
	if err := s.t.check(); err != nil {
		return owner.Owner{}, err
	}
	for _, o := range s.t.st.owners {
		if strings.EqualFold(o.Email, email) {
			return o, nil
		}
	}
	return owner.Owner{}, notFound("owner")
}

func (s memOwners) UpdateEmail(_ context.Context, id uuid.UUID, email string, at time.Time) error {
	if err := s.t.check(); err != nil {
		return err
	}
	o, ok := s.t.st.owners[id]
	if !ok {
		return notFound("owner")
	}
	if !s.emailFree(email, id) {
		return owner.ErrEmailTaken
	}
	o.Email, o.UpdatedAt = email, at
	s.t.st.owners[id] = o
	return nil
}

func (s memOwners) UpdatePassword(_ context.Context, id uuid.UUID, hash string, at time.Time) error {
	if err := s.t.check(); err != nil {
		return err
	}
	o, ok := s.t.st.owners[id]
	if !ok {
		return notFound("owner")
	}
	o.PasswordHash, o.UpdatedAt = hash, at
	s.t.st.owners[id] = o
	return nil
}

func (s memOwners) SetOperator(_ context.Context, id uuid.UUID, operator bool, at time.Time) error {
	if err := s.t.check(); err != nil {
		return err
	}
	o, ok := s.t.st.owners[id]
	if !ok {
		return notFound("owner")
	}
	o.Operator, o.UpdatedAt = operator, at
	s.t.st.owners[id] = o
	return nil
}

func (s memOwners) Oldest(_ context.Context) (owner.Owner, error) {
	if err := s.t.check(); err != nil {
		return owner.Owner{}, err
	}
	var first *owner.Owner
	for _, o := range s.t.st.owners {
		if first == nil || o.CreatedAt.Before(first.CreatedAt) ||
			(o.CreatedAt.Equal(first.CreatedAt) && bytes.Compare(o.ID[:], first.ID[:]) < 0) {
			o := o
			first = &o
		}
	}
	if first == nil {
		return owner.Owner{}, notFound("owner")
	}
	return *first, nil
}

func (s memOwners) Count(_ context.Context) (int, error) {
	if err := s.t.check(); err != nil {
		return 0, err
	}
	return len(s.t.st.owners), nil
}

type memSessions struct{ t *memTx }

func (s memSessions) Create(_ context.Context, sess owner.Session) error {
	if err := s.t.check(); err != nil {
		return err
	}
	if _, ok := s.t.st.owners[sess.OwnerID]; !ok {
		return fmt.Errorf("session of unknown owner %s", sess.OwnerID)
	}
	s.t.st.sessions[sess.ID] = sess
	return nil
}

func (s memSessions) ByTokenHash(_ context.Context, h owner.Digest) (owner.Session, error) {
	if err := s.t.check(); err != nil {
		return owner.Session{}, err
	}
	for _, sess := range s.t.st.sessions {
		if sess.TokenHash == h {
			return sess, nil
		}
	}
	return owner.Session{}, notFound("session")
}

func (s memSessions) DeleteByTokenHash(_ context.Context, h owner.Digest) error {
	if err := s.t.check(); err != nil {
		return err
	}
	for id, sess := range s.t.st.sessions {
		if sess.TokenHash == h {
			delete(s.t.st.sessions, id)
		}
	}
	return nil
}

func (s memSessions) DeleteForOwner(_ context.Context, ownerID uuid.UUID) error {
	if err := s.t.check(); err != nil {
		return err
	}
	for id, sess := range s.t.st.sessions {
		if sess.OwnerID == ownerID {
			delete(s.t.st.sessions, id)
		}
	}
	return nil
}

func (s memSessions) ListForOwner(_ context.Context, ownerID uuid.UUID, now time.Time) ([]owner.Session, error) {
	if err := s.t.check(); err != nil {
		return nil, err
	}
	var out []owner.Session
	for _, sess := range s.t.st.sessions {
		if sess.OwnerID == ownerID && sess.ExpiresAt.After(now) {
			out = append(out, sess)
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

func (s memSessions) DeleteOne(_ context.Context, ownerID, id uuid.UUID) error {
	if err := s.t.check(); err != nil {
		return err
	}
	sess, ok := s.t.st.sessions[id]
	if !ok || sess.OwnerID != ownerID {
		return notFound("session")
	}
	delete(s.t.st.sessions, id)
	return nil
}

func (s memSessions) DeleteExpired(_ context.Context, now time.Time) error {
	if err := s.t.check(); err != nil {
		return err
	}
	for id, sess := range s.t.st.sessions {
		if !sess.ExpiresAt.After(now) {
			delete(s.t.st.sessions, id)
		}
	}
	return nil
}

type memKeys struct{ t *memTx }

func (s memKeys) Create(_ context.Context, k owner.APIKey) error {
	if err := s.t.check(); err != nil {
		return err
	}
	if _, ok := s.t.st.owners[k.OwnerID]; !ok {
		return fmt.Errorf("api key of unknown owner %s", k.OwnerID)
	}
	// The stored key owns its scopes, as a row would: a caller changing its
	// slice afterwards changes nothing stored.
	k.Scopes = slices.Clone(k.Scopes)
	s.t.st.keys[k.ID] = k
	return nil
}

func (s memKeys) ByHash(_ context.Context, h owner.Digest) (owner.APIKey, error) {
	if err := s.t.check(); err != nil {
		return owner.APIKey{}, err
	}
	for _, k := range s.t.st.keys {
		if k.KeyHash == h {
			return k, nil
		}
	}
	return owner.APIKey{}, notFound("api key")
}

func (s memKeys) Get(_ context.Context, ownerID, id uuid.UUID) (owner.APIKey, error) {
	if err := s.t.check(); err != nil {
		return owner.APIKey{}, err
	}
	k, ok := s.t.st.keys[id]
	if !ok || k.OwnerID != ownerID {
		return owner.APIKey{}, notFound("api key")
	}
	return k, nil
}

func (s memKeys) List(_ context.Context, ownerID uuid.UUID) ([]owner.APIKey, error) {
	if err := s.t.check(); err != nil {
		return nil, err
	}
	out := []owner.APIKey{}
	for _, k := range s.t.st.keys {
		if k.OwnerID == ownerID {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return newerFirst(out[i].CreatedAt, out[i].ID, out[j].CreatedAt, out[j].ID) })
	return out, nil
}

func (s memKeys) Revoke(_ context.Context, ownerID, id uuid.UUID, at time.Time) error {
	if err := s.t.check(); err != nil {
		return err
	}
	k, ok := s.t.st.keys[id]
	if !ok || k.OwnerID != ownerID {
		return notFound("api key")
	}
	if k.RevokedAt == nil {
		k.RevokedAt = &at
		s.t.st.keys[id] = k
	}
	return nil
}

func (s memKeys) Touch(_ context.Context, id uuid.UUID, at, notBefore time.Time) error {
	if err := s.t.check(); err != nil {
		return err
	}
	k, ok := s.t.st.keys[id]
	if !ok {
		return nil
	}
	if k.LastUsedAt == nil || !k.LastUsedAt.After(notBefore) {
		k.LastUsedAt = &at
		s.t.st.keys[id] = k
	}
	return nil
}

type memAttempts struct{ t *memTx }

func (s memAttempts) Add(_ context.Context, a owner.Attempt) error {
	if err := s.t.check(); err != nil {
		return err
	}
	s.t.st.attempts = append(s.t.st.attempts, a)
	return nil
}

func (s memAttempts) count(match func(owner.Attempt) bool) (int, error) {
	if err := s.t.check(); err != nil {
		return 0, err
	}
	n := 0
	for _, a := range s.t.st.attempts {
		if match(a) {
			n++
		}
	}
	return n, nil
}

func (s memAttempts) CountByIP(_ context.Context, kind owner.AttemptKind, ip string, since time.Time) (int, error) {
	return s.count(func(a owner.Attempt) bool { return a.Kind == kind && a.IP == ip && !a.At.Before(since) })
}

func (s memAttempts) CountByEmail(_ context.Context, kind owner.AttemptKind, email string, since time.Time) (int, error) {
	return s.count(func(a owner.Attempt) bool { return a.Kind == kind && a.Email == email && !a.At.Before(since) })
}

func (s memAttempts) CountByEmailAndIP(_ context.Context, kind owner.AttemptKind, email, ip string, since time.Time) (int, error) {
	return s.count(func(a owner.Attempt) bool {
		return a.Kind == kind && a.Email == email && a.IP == ip && !a.At.Before(since)
	})
}

func (s memAttempts) TargetedOwners(_ context.Context, kind owner.AttemptKind, ip string, since time.Time) ([]uuid.UUID, error) {
	if err := s.t.check(); err != nil {
		return nil, err
	}
	seen := map[uuid.UUID]bool{}
	var out []uuid.UUID
	for _, a := range s.t.st.attempts {
		if a.Kind == kind && a.IP == ip && !a.At.Before(since) && a.OwnerID != nil && !seen[*a.OwnerID] {
			if _, exists := s.t.st.owners[*a.OwnerID]; !exists {
				continue
			}
			seen[*a.OwnerID] = true
			out = append(out, *a.OwnerID)
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i][:], out[j][:]) < 0 })
	return out, nil
}

func (s memAttempts) filter(drop func(owner.Attempt) bool) error {
	if err := s.t.check(); err != nil {
		return err
	}
	kept := s.t.st.attempts[:0:0]
	for _, a := range s.t.st.attempts {
		if !drop(a) {
			kept = append(kept, a)
		}
	}
	s.t.st.attempts = kept
	return nil
}

func (s memAttempts) DeleteByIP(_ context.Context, kind owner.AttemptKind, ip string) error {
	return s.filter(func(a owner.Attempt) bool { return a.Kind == kind && a.IP == ip })
}

func (s memAttempts) DeleteBefore(_ context.Context, t time.Time) error {
	return s.filter(func(a owner.Attempt) bool { return a.At.Before(t) })
}

type memBans struct{ t *memTx }

func (s memBans) Add(_ context.Context, b owner.IPBan) (bool, error) {
	if err := s.t.check(); err != nil {
		return false, err
	}
	if _, ok := s.t.st.owners[b.OwnerID]; !ok {
		return false, fmt.Errorf("ban of unknown owner %s", b.OwnerID)
	}
	for _, x := range s.t.st.bans {
		if x.OwnerID == b.OwnerID && x.IP == b.IP && x.Active(b.CreatedAt) {
			return false, nil
		}
	}
	s.t.st.bans[b.ID] = b
	return true, nil
}

func (s memBans) ActiveIPs(_ context.Context, now time.Time) ([]string, error) {
	if err := s.t.check(); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	out := []string{}
	for _, b := range s.t.st.bans {
		if b.Active(now) && !seen[b.IP] {
			seen[b.IP] = true
			out = append(out, b.IP)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (s memBans) ListActive(_ context.Context, ownerID uuid.UUID, now time.Time, after *owner.BanCursor, limit int) ([]owner.IPBan, error) {
	if err := s.t.check(); err != nil {
		return nil, err
	}
	out := []owner.IPBan{}
	for _, b := range s.t.st.bans {
		if b.OwnerID != ownerID || !b.Active(now) {
			continue
		}
		if after != nil && !newerFirst(after.CreatedAt, after.ID, b.CreatedAt, b.ID) {
			continue
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return newerFirst(out[i].CreatedAt, out[i].ID, out[j].CreatedAt, out[j].ID) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (s memBans) Lift(_ context.Context, ownerID, id uuid.UUID, now time.Time) error {
	if err := s.t.check(); err != nil {
		return err
	}
	b, ok := s.t.st.bans[id]
	if !ok || b.OwnerID != ownerID || !b.Active(now) {
		return notFound("ip ban")
	}
	b.LiftedAt = &now
	s.t.st.bans[id] = b
	return nil
}

type memRecovery struct{ t *memTx }

func (s memRecovery) Create(_ context.Context, rt owner.RecoveryToken) error {
	if err := s.t.check(); err != nil {
		return err
	}
	if _, ok := s.t.st.owners[rt.OwnerID]; !ok {
		return fmt.Errorf("recovery token of unknown owner %s", rt.OwnerID)
	}
	s.t.st.recovery[rt.ID] = rt
	return nil
}

func (s memRecovery) Consume(_ context.Context, h owner.Digest, now time.Time) (owner.RecoveryToken, error) {
	if err := s.t.check(); err != nil {
		return owner.RecoveryToken{}, err
	}
	for id, rt := range s.t.st.recovery {
		if rt.TokenHash == h && rt.UsedAt == nil && now.Before(rt.ExpiresAt) {
			rt.UsedAt = &now
			s.t.st.recovery[id] = rt
			return rt, nil
		}
	}
	return owner.RecoveryToken{}, notFound("recovery token")
}

// newerFirst orders (created_at, id) descending, as the listings do.
func newerFirst(at1 time.Time, id1 uuid.UUID, at2 time.Time, id2 uuid.UUID) bool {
	if !at1.Equal(at2) {
		return at1.After(at2)
	}
	return bytes.Compare(id1[:], id2[:]) > 0
}
