// Package inboundtest provides an in-memory implementation of the inbound
// domain's storage ports, for unit tests, fuzzing and the contract test that
// runs the same cases against it and the PostgreSQL adapter (so the two
// cannot drift).
package inboundtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/domaintest"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// Memory implements inbound.UnitOfWork and inbound.SourceLookup in memory:
// a domaintest.Snapshot of the stores' state, transactions serialised, fn's
// copy of the state kept only when fn returns nil.
type Memory struct {
	snap    *domaintest.Snapshot[state]
	nextJob atomic.Int64
	// mu guards refusals, which live outside transactions as in the adapter.
	mu sync.Mutex
	// InUseFunc, when set, tells Delete that a supplier connection uses a
	// source.
	InUseFunc func(sourceID uuid.UUID) bool
	// PendingFunc, when set, tells Admit and Begin that a source has a
	// supplier connection not activated yet.
	PendingFunc func(sourceID uuid.UUID) bool
	refusals    map[uuid.UUID][]inbound.Refusal
}

// facts are the conditions that hold for the source's messages.
func (m *Memory) facts(sourceID uuid.UUID) inbound.Condition {
	if m.PendingFunc != nil && m.PendingFunc(sourceID) {
		return inbound.IfActivationPending
	}
	return inbound.Unconditional
}

type replay struct {
	digest    inbound.Digest
	expiresAt time.Time
}

type state struct {
	sources map[uuid.UUID]inbound.Source
	replays map[inbound.ReplayKey]replay
	inbox   map[uuid.UUID]inbound.Record
	jobs    []EnqueuedJob
}

// EnqueuedJob is a processing job the memory queue holds.
type EnqueuedJob struct {
	ID int64
	inbound.ProcessJob
}

// NewMemory returns an empty store.
func NewMemory() *Memory {
	return &Memory{snap: domaintest.NewSnapshot(state{
		sources: map[uuid.UUID]inbound.Source{},
		replays: map[inbound.ReplayKey]replay{},
		inbox:   map[uuid.UUID]inbound.Record{},
	}, state.clone)}
}

var (
	_ inbound.UnitOfWork   = (*Memory)(nil)
	_ inbound.SourceLookup = (*Memory)(nil)
)

func (s state) clone() state {
	return state{
		sources: maps.Clone(s.sources),
		replays: maps.Clone(s.replays),
		inbox:   maps.Clone(s.inbox),
		jobs:    append([]EnqueuedJob(nil), s.jobs...),
	}
}

// Do implements inbound.UnitOfWork; a cancelled ctx runs nothing, as
// PostgreSQL begins no transaction for it.
func (m *Memory) Do(ctx context.Context, fn func(tx inbound.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return m.snap.Do(ctx, func(st *state, _ *domaintest.TxRecorder) error {
		tx := &memTx{m: m, st: st}
		defer func() { tx.done = true }()
		return fn(tx)
	})
}

// States returns the inbox's state changes, each in a transaction of its own.
func (m *Memory) States() inbound.InboxStates { return states{m} }

type states struct{ m *Memory }

func (s states) Begin(ctx context.Context, id uuid.UUID, jobID int64, now time.Time) (r inbound.Record, ok bool, err error) {
	err = s.m.Do(ctx, func(tx inbound.Tx) error {
		r, ok, err = tx.Inbox().Begin(ctx, id, jobID, now)
		return err
	})
	return r, ok, err
}

func (s states) MarkDone(ctx context.Context, id uuid.UUID, now time.Time) error {
	return s.m.Do(ctx, func(tx inbound.Tx) error { return tx.Inbox().MarkDone(ctx, id, now) })
}

func (s states) MarkRetry(ctx context.Context, id uuid.UUID, lastError string, now, next time.Time) error {
	return s.m.Do(ctx, func(tx inbound.Tx) error { return tx.Inbox().MarkRetry(ctx, id, lastError, now, next) })
}

func (s states) MarkDead(ctx context.Context, id uuid.UUID, lastError string, now time.Time) error {
	return s.m.Do(ctx, func(tx inbound.Tx) error { return tx.Inbox().MarkDead(ctx, id, lastError, now) })
}

func (s states) Abandon(ctx context.Context, id uuid.UUID) error {
	return s.m.Do(ctx, func(tx inbound.Tx) error { return tx.Inbox().Abandon(ctx, id) })
}

// Lookup reads a source by id.
func (m *Memory) Lookup(_ context.Context, id uuid.UUID) (inbound.Source, error) {
	var s inbound.Source
	var ok bool
	m.snap.View(func(st state) { s, ok = st.sources[id] })
	if !ok {
		return inbound.Source{}, fmt.Errorf("look up inbound source: %w", domain.ErrNotFound)
	}
	return s, nil
}

// Jobs returns the processing jobs enqueued by committed transactions.
func (m *Memory) Jobs() []EnqueuedJob {
	var out []EnqueuedJob
	m.snap.View(func(st state) { out = append(out, st.jobs...) })
	return out
}

// Message returns an inbox row by id.
func (m *Memory) Message(id uuid.UUID) (r inbound.Record, ok bool) {
	m.snap.View(func(st state) { r, ok = st.inbox[id] })
	return r, ok
}

// Messages returns every inbox row, oldest first.
func (m *Memory) Messages() []inbound.Record {
	var out []inbound.Record
	m.snap.View(func(st state) {
		out = make([]inbound.Record, 0, len(st.inbox))
		for _, r := range st.inbox {
			out = append(out, r)
		}
	})
	sort.Slice(out, func(i, j int) bool { return less(out[j].ReceivedAt, out[j].ID, out[i].ReceivedAt, out[i].ID) })
	return out
}

// PutSource stores a source directly (test set-up).
func (m *Memory) PutSource(s inbound.Source) {
	m.snap.Update(func(st *state) { st.sources[s.ID] = s })
}

type memTx struct {
	m    *Memory
	st   *state
	done bool
}

func (t *memTx) check() error {
	if t.done {
		return errors.New("inboundtest: transaction has ended")
	}
	return nil
}

func (t *memTx) Sources() inbound.SourceStore { return sources{t} }
func (t *memTx) Replays() inbound.ReplayStore { return replays{t} }
func (t *memTx) Inbox() inbound.InboxStore    { return inbox{t} }
func (t *memTx) Jobs() inbound.JobQueue       { return jobs{t} }

type sources struct{ t *memTx }

func (s sources) Insert(_ context.Context, src inbound.Source) error {
	if err := s.t.check(); err != nil {
		return err
	}
	if _, dup := s.t.st.sources[src.ID]; dup {
		return errors.New("insert inbound source: duplicate id")
	}
	s.t.st.sources[src.ID] = src
	return nil
}

func (s sources) Get(_ context.Context, ownerID, id uuid.UUID) (inbound.Source, error) {
	if err := s.t.check(); err != nil {
		return inbound.Source{}, err
	}
	src, ok := s.t.st.sources[id]
	if !ok || src.OwnerID != ownerID {
		return inbound.Source{}, fmt.Errorf("get inbound source: %w", domain.ErrNotFound)
	}
	return src, nil
}

// Lock only checks the source exists: transactions hold the whole store.
func (s sources) Lock(ctx context.Context, ownerID, id uuid.UUID) error {
	_, err := s.Get(ctx, ownerID, id)
	return err
}

func (s sources) List(_ context.Context, ownerID uuid.UUID, q inbound.PageQuery) ([]inbound.Source, error) {
	if err := s.t.check(); err != nil {
		return nil, err
	}
	var out []inbound.Source
	for _, src := range s.t.st.sources {
		if src.OwnerID == ownerID && (q.After == nil || less(src.CreatedAt, src.ID, q.After.At, q.After.ID)) {
			out = append(out, src)
		}
	}
	sort.Slice(out, func(i, j int) bool { return less(out[j].CreatedAt, out[j].ID, out[i].CreatedAt, out[i].ID) })
	return limit(out, q.Limit+1), nil
}

func (s sources) Update(ctx context.Context, ownerID, id uuid.UUID, fn func(*inbound.Source) error) error {
	cur, err := s.Get(ctx, ownerID, id)
	if err != nil {
		return err
	}
	src := cur
	if err := fn(&src); err != nil {
		return err
	}
	src.ID, src.OwnerID, src.Verifier, src.CreatedAt = cur.ID, cur.OwnerID, cur.Verifier, cur.CreatedAt
	s.t.st.sources[id] = src
	return nil
}

func (s sources) Delete(_ context.Context, ownerID, id uuid.UUID) error {
	if err := s.t.check(); err != nil {
		return err
	}
	cur, ok := s.t.st.sources[id]
	if !ok || cur.OwnerID != ownerID {
		return fmt.Errorf("delete inbound source: %w", domain.ErrNotFound)
	}
	if s.t.m.InUseFunc != nil && s.t.m.InUseFunc(id) {
		return inbound.ErrSourceInUse
	}
	delete(s.t.st.sources, id)
	s.t.m.mu.Lock()
	delete(s.t.m.refusals, id)
	s.t.m.mu.Unlock()
	for k := range s.t.st.replays {
		if k.SourceID == id {
			delete(s.t.st.replays, k)
		}
	}
	for k, r := range s.t.st.inbox {
		if r.SourceID == id {
			delete(s.t.st.inbox, k)
		}
	}
	return nil
}

func (s sources) DropExpiredPreviousSecrets(_ context.Context, now time.Time) (int64, error) {
	if err := s.t.check(); err != nil {
		return 0, err
	}
	var n int64
	for id, src := range s.t.st.sources {
		if len(src.PreviousSealedSecret) > 0 && !src.PreviousSecretExpiresAt.After(now) {
			src.PreviousSealedSecret, src.PreviousSecretExpiresAt = nil, time.Time{}
			s.t.st.sources[id] = src
			n++
		}
	}
	return n, nil
}

type replays struct{ t *memTx }

func (r replays) Register(_ context.Context, key inbound.ReplayKey, digest inbound.Digest, now, expiresAt time.Time) (inbound.ReplayOutcome, error) {
	if err := r.t.check(); err != nil {
		return 0, err
	}
	if _, ok := r.t.st.sources[key.SourceID]; !ok {
		return 0, errors.New("register replay key: no such source")
	}
	cur, ok := r.t.st.replays[key]
	switch {
	case ok && cur.expiresAt.After(now) && cur.digest == digest:
		return inbound.ReplayDuplicate, nil
	case ok && cur.expiresAt.After(now):
		return inbound.ReplayConflict, nil
	}
	r.t.st.replays[key] = replay{digest: digest, expiresAt: expiresAt}
	return inbound.ReplayNew, nil
}

func (r replays) PurgeExpired(_ context.Context, now time.Time, lim int) (int64, error) {
	if err := r.t.check(); err != nil {
		return 0, err
	}
	var n int64
	for k, v := range r.t.st.replays {
		if n >= int64(lim) {
			break
		}
		if v.expiresAt.Before(now) {
			delete(r.t.st.replays, k)
			n++
		}
	}
	return n, nil
}

type inbox struct{ t *memTx }

func (b inbox) Insert(_ context.Context, e inbound.Envelope) (inbound.InsertOutcome, error) {
	if err := b.t.check(); err != nil {
		return inbound.InsertOutcome{}, err
	}
	src, ok := b.t.st.sources[e.SourceID]
	if !ok {
		return inbound.InsertOutcome{}, errors.New("insert inbound message: no such source")
	}
	var byBody *inbound.Record
	for _, r := range b.t.st.inbox {
		if r.SourceID != e.SourceID {
			continue
		}
		if r.MessageID == e.MessageID {
			return inbound.InsertOutcome{ExistingID: r.ID, ExistingDigest: r.Digest, SameMessageID: true}, nil
		}
		if !e.MessageIDSigned && !r.MessageIDSigned && r.Digest == e.Digest {
			r := r
			byBody = &r
		}
	}
	if byBody != nil {
		return inbound.InsertOutcome{ExistingID: byBody.ID, ExistingDigest: byBody.Digest}, nil
	}
	e.Body = bytes.Clone(e.Body)
	e.Headers = e.Headers.Clone()
	if e.Headers == nil {
		e.Headers = domain.Header{}
	}
	b.t.st.inbox[e.ID] = inbound.Record{Envelope: e, SourceKind: src.Verifier, State: inbound.StateReceived}
	return inbound.InsertOutcome{Inserted: true}, nil
}

func (b inbox) Begin(_ context.Context, id uuid.UUID, jobID int64, now time.Time) (inbound.Record, bool, error) {
	if err := b.t.check(); err != nil {
		return inbound.Record{}, false, err
	}
	r, ok := b.t.st.inbox[id]
	if !ok || (r.State != inbound.StateReceived && r.State != inbound.StateProcessing) {
		return inbound.Record{}, false, nil
	}
	r.State, r.Attempts, r.LastAttemptAt, r.NextAttemptAt, r.JobID = inbound.StateProcessing, r.Attempts+1, now, time.Time{}, jobID
	if src, ok := b.t.st.sources[r.SourceID]; ok {
		r.SourceKind = src.Verifier
	}
	b.t.st.inbox[id] = r
	r.ActivationPending = b.t.m.facts(r.SourceID)&inbound.IfActivationPending != 0
	return r, true, nil
}

func (b inbox) update(id uuid.UUID, f func(r *inbound.Record)) error {
	if err := b.t.check(); err != nil {
		return err
	}
	r, ok := b.t.st.inbox[id]
	if !ok || r.State != inbound.StateProcessing {
		return nil
	}
	f(&r)
	b.t.st.inbox[id] = r
	return nil
}

func (b inbox) MarkDone(_ context.Context, id uuid.UUID, now time.Time) error {
	return b.update(id, func(r *inbound.Record) {
		r.State, r.DoneAt, r.LastError, r.NextAttemptAt = inbound.StateDone, now, "", time.Time{}
	})
}

func (b inbox) MarkRetry(_ context.Context, id uuid.UUID, lastError string, _, next time.Time) error {
	return b.update(id, func(r *inbound.Record) {
		r.State, r.LastError, r.NextAttemptAt = inbound.StateReceived, lastError, next
	})
}

func (b inbox) MarkDead(_ context.Context, id uuid.UUID, lastError string, now time.Time) error {
	return b.update(id, func(r *inbound.Record) {
		r.State, r.LastError, r.DeadAt, r.NextAttemptAt = inbound.StateDead, lastError, now, time.Time{}
	})
}

func (b inbox) Abandon(_ context.Context, id uuid.UUID) error {
	return b.update(id, func(r *inbound.Record) {
		r.State, r.Attempts = inbound.StateReceived, max(r.Attempts-1, 0)
	})
}

func (b inbox) Get(_ context.Context, ownerID, id uuid.UUID) (inbound.Record, error) {
	if err := b.t.check(); err != nil {
		return inbound.Record{}, err
	}
	r, ok := b.t.st.inbox[id]
	if !ok || r.OwnerID != ownerID {
		return inbound.Record{}, fmt.Errorf("get inbound message: %w", domain.ErrNotFound)
	}
	return r, nil
}

func (b inbox) List(_ context.Context, ownerID, sourceID uuid.UUID, st inbound.State, q inbound.PageQuery) ([]inbound.Record, error) {
	if err := b.t.check(); err != nil {
		return nil, err
	}
	var out []inbound.Record
	for _, r := range b.t.st.inbox {
		if r.OwnerID != ownerID || r.SourceID != sourceID || (st != "" && r.State != st) {
			continue
		}
		if q.After != nil && !less(r.ReceivedAt, r.ID, q.After.At, q.After.ID) {
			continue
		}
		r.Body, r.Headers = nil, domain.Header{}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return less(out[j].ReceivedAt, out[j].ID, out[i].ReceivedAt, out[i].ID) })
	return limit(out, q.Limit+1), nil
}

func (b inbox) Revive(_ context.Context, ownerID, sourceID, id uuid.UUID, reset bool, maxAttempts int, now time.Time) ([]inbound.Revived, error) {
	if err := b.t.check(); err != nil {
		return nil, err
	}
	var out []inbound.Revived
	for k, r := range b.t.st.inbox {
		if r.OwnerID != ownerID || r.SourceID != sourceID || r.State != inbound.StateDead || (id != uuid.Nil && r.ID != id) {
			continue
		}
		if reset {
			r.Attempts = 0
		}
		r.State, r.Replays, r.DeadAt, r.DoneAt, r.NextAttemptAt, r.JobID = inbound.StateReceived, r.Replays+1, time.Time{}, time.Time{}, now, 0
		b.t.st.inbox[k] = r
		out = append(out, inbound.Revived{ID: r.ID, MaxAttempts: max(maxAttempts-r.Attempts, 1)})
	}
	return out, nil
}

// PurgeDone deletes the oldest-done messages first, as many as limit.
func (b inbox) PurgeDone(_ context.Context, before time.Time, lim int) (int64, error) {
	if err := b.t.check(); err != nil {
		return 0, err
	}
	var old []inbound.Record
	for _, r := range b.t.st.inbox {
		if r.State == inbound.StateDone && r.DoneAt.Before(before) {
			old = append(old, r)
		}
	}
	sort.Slice(old, func(i, j int) bool { return old[i].DoneAt.Before(old[j].DoneAt) })
	old = limit(old, lim)
	for _, r := range old {
		delete(b.t.st.inbox, r.ID)
	}
	return int64(len(old)), nil
}

type jobs struct{ t *memTx }

func (j jobs) EnqueueProcess(_ context.Context, js ...inbound.ProcessJob) error {
	if err := j.t.check(); err != nil {
		return err
	}
	for _, pj := range js {
		j.t.st.jobs = append(j.t.st.jobs, EnqueuedJob{ID: j.t.m.nextJob.Add(1), ProcessJob: pj})
	}
	return nil
}

// less orders by (at, id) ascending; lists are newest first, so they keep
// rows strictly less than the cursor.
func less(at time.Time, id uuid.UUID, at2 time.Time, id2 uuid.UUID) bool {
	if !at.Equal(at2) {
		return at.Before(at2)
	}
	return bytes.Compare(id[:], id2[:]) < 0
}

func limit[T any](s []T, n int) []T {
	if len(s) > n {
		return s[:n]
	}
	return s
}

var _ inbound.Admitter = (*Memory)(nil)

// Admit admits a batch in one transaction, as the PostgreSQL adapter does:
// a live replay key of another payload is a conflict unless the id is
// stable; otherwise the inbox row is inserted unless one is there already (a
// duplicate, or a conflict when its message id is the same, its payload is
// not and the id is not stable); the replay key is registered for every row
// inserted, and the job enqueued for those whose Need the source's facts
// (PendingFunc) meet, the others written done at their receipt; then runs in
// the same transaction with its events kept only when it commits.
func (m *Memory) Admit(ctx context.Context, batch []inbound.Admission, then inbound.AdmittedFunc) ([]inbound.Admitted, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]inbound.Admitted, len(batch))
	err := m.snap.Do(ctx, func(st *state, rec *domaintest.TxRecorder) error {
		tx := &memTx{m: m, st: st}
		defer func() { tx.done = true }()
		for i, a := range batch {
			env := a.Envelope
			key := inbound.ReplayKey{SourceID: env.SourceID, MessageID: env.MessageID}
			if cur, ok := tx.st.replays[key]; ok && cur.expiresAt.After(env.ReceivedAt) && cur.digest != env.Digest && !env.StableID {
				out[i] = inbound.Admitted{Conflict: true}
				continue
			}
			ins, err := tx.Inbox().Insert(ctx, env)
			if err != nil {
				return err
			}
			if !ins.Inserted {
				if ins.SameMessageID && ins.ExistingDigest != env.Digest && !env.StableID {
					out[i] = inbound.Admitted{Conflict: true}
				} else {
					out[i] = inbound.Admitted{Status: inbound.Duplicate, ID: ins.ExistingID}
				}
				continue
			}
			if _, err := tx.Replays().Register(ctx, key, env.Digest, env.ReceivedAt, a.ReplayExpiresAt); err != nil {
				return err
			}
			out[i] = inbound.Admitted{Status: inbound.Accepted, ID: env.ID}
			if !a.Need.Met(m.facts(env.SourceID)) {
				r := tx.st.inbox[env.ID]
				r.State, r.DoneAt = inbound.StateDone, env.ReceivedAt
				tx.st.inbox[env.ID] = r
				continue
			}
			if err := tx.Jobs().EnqueueProcess(ctx, inbound.ProcessJob{MessageID: env.ID, MaxAttempts: a.MaxAttempts}); err != nil {
				return err
			}
		}
		if then == nil {
			return nil
		}
		return then(ctx, admitTx{rec}, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Events returns the events committed by Admit's transactions.
func (m *Memory) Events() []domaintest.Event { return m.snap.Recorder().Events() }

// FailEvents makes Record in Admit's transactions return fn's error for the
// event types fn returns one for (nil: none).
func (m *Memory) FailEvents(fn func(eventType string) error) { m.snap.Recorder().Fail(fn) }

type admitTx struct{ rec *domaintest.TxRecorder }

func (t admitTx) Recorder() domain.Recorder { return t.rec }

var _ inbound.RefusalStore = (*Memory)(nil)

// AddRefusals keeps the refusals of existing sources, each source's
// RefusalsKept newest.
func (m *Memory) AddRefusals(_ context.Context, rs []inbound.Refusal) error {
	var sources map[uuid.UUID]inbound.Source
	m.snap.View(func(st state) { sources = maps.Clone(st.sources) })
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.refusals == nil {
		m.refusals = map[uuid.UUID][]inbound.Refusal{}
	}
	for _, r := range rs {
		if src, ok := sources[r.SourceID]; !ok || src.OwnerID != r.OwnerID {
			continue
		}
		kept := append(m.refusals[r.SourceID], r)
		if len(kept) > inbound.RefusalsKept {
			kept = kept[len(kept)-inbound.RefusalsKept:]
		}
		m.refusals[r.SourceID] = kept
	}
	return nil
}

// ListRefusals returns the source's newest refusals first.
func (m *Memory) ListRefusals(_ context.Context, ownerID, sourceID uuid.UUID, lim int) ([]inbound.Refusal, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []inbound.Refusal
	rs := m.refusals[sourceID]
	for i := len(rs) - 1; i >= 0 && len(out) < lim; i-- {
		if rs[i].OwnerID == ownerID {
			out = append(out, rs[i])
		}
	}
	return out, nil
}

// PurgeRefusals deletes the refusals older than before.
func (m *Memory) PurgeRefusals(_ context.Context, before time.Time) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for id, rs := range m.refusals {
		kept := rs[:0]
		for _, r := range rs {
			if r.At.Before(before) {
				n++
				continue
			}
			kept = append(kept, r)
		}
		m.refusals[id] = kept
	}
	return n, nil
}
