package inboundtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// Harness is one implementation of the inbound storage ports, with what the
// contract needs to set up and observe it.
type Harness struct {
	UoW      inbound.UnitOfWork
	Admit    inbound.Admitter
	Refusals inbound.RefusalStore
	Lookup   inbound.SourceLookup
	// NewOwner returns an owner id rows may reference.
	NewOwner func(t *testing.T) uuid.UUID
	// MaxAttemptsOf returns the max attempts of the processing jobs enqueued
	// (and committed) for an inbox message, in the order they were enqueued.
	MaxAttemptsOf func(t *testing.T, id uuid.UUID) []int
	// UseSource makes a supplier connection, not activated, use the source.
	UseSource func(t *testing.T, ownerID, sourceID uuid.UUID)
	// EventsOf returns the types of the owner's committed events.
	EventsOf func(t *testing.T, ownerID uuid.UUID) []string
}

// RunContract runs the inbound stores' contract; newHarness returns a fresh,
// empty implementation. The in-memory fake and the PostgreSQL adapter both
// pass it, so the fake the domain's unit tests rely on cannot drift from the
// adapter.
func RunContract(t *testing.T, newHarness func(t *testing.T) Harness) {
	for _, c := range contractCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, newHarness(t))
		})
	}
}

var contractCases = []struct {
	name string
	run  func(t *testing.T, h Harness)
}{
	{"sources", contractSources},
	{"replay store", contractReplay},
	{"inbox dedupe", contractInboxDedupe},
	{"inbox states", contractInboxStates},
	{"rollback", contractRollback},
	{"delete", contractDelete},
	{"inbox list paging", contractInboxList},
	{"inbox purge", contractInboxPurge},
	{"admit", contractAdmit},
	{"admit records in its transaction", contractAdmitRecordsInItsTransaction},
	{"a message no route wants is admitted done and queues no job", contractAdmitUnwantedDone},
	{"a message a route wants queues one job", contractAdmitWantedQueues},
	{"previous secret", contractPreviousSecret},
	{"refusals", contractRefusals},
}

// Base is the contract's reference time, microsecond-aligned as PostgreSQL
// stores times.
var Base = time.Date(2026, 2, 3, 4, 5, 6, 123456000, time.UTC)

// Do runs fn in a committed transaction of h, failing the test on error.
func Do(t *testing.T, h Harness, fn func(tx inbound.Tx) error) {
	t.Helper()
	require.NoError(t, h.UoW.Do(context.Background(), fn))
}

// NewSource returns an enabled standard-webhooks source of owner created at
// at, not yet stored.
func NewSource(owner uuid.UUID, at time.Time) inbound.Source {
	return inbound.Source{
		ID: uuid.New(), OwnerID: owner, Name: "src", Verifier: "standard-webhooks",
		Options: json.RawMessage(`{"tolerance_seconds":300}`), SealedSecret: []byte("sealed"), Enabled: true,
		RecordEvents: true, BodyLimit: 1024, ToleranceSeconds: 300, SecretRotatedAt: at, CreatedAt: at, UpdatedAt: at,
	}
}

// AddSource stores a NewSource in h and returns it.
func AddSource(t *testing.T, h Harness, owner uuid.UUID, at time.Time) inbound.Source {
	s := NewSource(owner, at)
	Do(t, h, func(tx inbound.Tx) error { return tx.Sources().Insert(context.Background(), s) })
	return s
}

// NewEnvelope returns a JSON message of src under msgID, signed and received
// at at; signedID says whether the id is covered by the signature.
func NewEnvelope(src inbound.Source, msgID, body string, signedID bool, at time.Time) inbound.Envelope {
	return inbound.Envelope{
		ID: uuid.New(), OwnerID: src.OwnerID, SourceID: src.ID, MessageID: msgID, MessageIDSigned: signedID,
		EventType: "t", Digest: inbound.DigestOf([]byte(body)), Body: []byte(body),
		Headers: domain.Header{"Content-Type": {"application/json"}}, SignedAt: at, ReceivedAt: at,
	}
}

// Insert inserts e into h's inbox in a committed transaction and returns
// the outcome.
func Insert(t *testing.T, h Harness, e inbound.Envelope) inbound.InsertOutcome {
	var out inbound.InsertOutcome
	Do(t, h, func(tx inbound.Tx) error {
		var err error
		out, err = tx.Inbox().Insert(context.Background(), e)
		return err
	})
	return out
}

func contractSources(t *testing.T, h Harness) {
	ctx := context.Background()
	owner, other := h.NewOwner(t), h.NewOwner(t)
	a := AddSource(t, h, owner, Base)
	b := AddSource(t, h, owner, Base.Add(time.Second))
	c := AddSource(t, h, owner, Base.Add(2*time.Second))
	AddSource(t, h, other, Base.Add(3*time.Second))

	got, err := h.Lookup.Lookup(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, a.ID, got.ID)
	require.Equal(t, []byte("sealed"), got.SealedSecret)
	require.JSONEq(t, `{"tolerance_seconds":300}`, string(got.Options))
	require.True(t, got.CreatedAt.Equal(Base))
	_, err = h.Lookup.Lookup(ctx, uuid.New())
	require.ErrorIs(t, err, domain.ErrNotFound)

	Do(t, h, func(tx inbound.Tx) error {
		_, err := tx.Sources().Get(ctx, other, a.ID)
		require.ErrorIs(t, err, domain.ErrNotFound, "another owner's source")
		require.ErrorIs(t, tx.Sources().Lock(ctx, other, a.ID), domain.ErrNotFound)
		require.NoError(t, tx.Sources().Lock(ctx, owner, a.ID))
		require.NoError(t, tx.Sources().Update(ctx, owner, a.ID, func(s *inbound.Source) error {
			require.Equal(t, a.ID, s.ID, "fn sees the stored source")
			require.True(t, s.RecordEvents)
			s.Name, s.Enabled, s.RecordEvents, s.BodyLimit, s.UpdatedAt = "renamed", false, false, 2048, Base.Add(time.Hour)
			s.ID, s.OwnerID, s.Verifier = uuid.New(), other, "other"
			return nil
		}))
		called := false
		require.ErrorIs(t, tx.Sources().Update(ctx, other, a.ID, func(*inbound.Source) error { called = true; return nil }), domain.ErrNotFound)
		require.False(t, called, "fn runs only on a found source")
		refused := errors.New("refused")
		require.ErrorIs(t, tx.Sources().Update(ctx, owner, b.ID, func(s *inbound.Source) error { s.Name = "not kept"; return refused }), refused)
		kept, err := tx.Sources().Get(ctx, owner, b.ID)
		require.NoError(t, err)
		require.Equal(t, b.Name, kept.Name, "nothing written when fn fails")

		page, err := tx.Sources().List(ctx, owner, inbound.PageQuery{Limit: 2})
		require.NoError(t, err)
		require.Len(t, page, 3, "limit+1 rows tell there is more")
		require.Equal(t, []uuid.UUID{c.ID, b.ID, a.ID}, []uuid.UUID{page[0].ID, page[1].ID, page[2].ID})
		rest, err := tx.Sources().List(ctx, owner, inbound.PageQuery{Limit: 2, After: &inbound.Cursor{At: b.CreatedAt, ID: b.ID}})
		require.NoError(t, err)
		require.Len(t, rest, 1)
		require.Equal(t, a.ID, rest[0].ID)
		return nil
	})
	got, err = h.Lookup.Lookup(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, "renamed", got.Name)
	require.Equal(t, owner, got.OwnerID, "id, owner and verifier never change")
	require.Equal(t, a.Verifier, got.Verifier)
	require.False(t, got.Enabled)
	require.False(t, got.RecordEvents)
	require.EqualValues(t, 2048, got.BodyLimit)
}

func contractReplay(t *testing.T, h Harness) {
	ctx := context.Background()
	src := AddSource(t, h, h.NewOwner(t), Base)
	key := inbound.ReplayKey{SourceID: src.ID, MessageID: "m1"}
	d1, d2 := inbound.DigestOf([]byte("1")), inbound.DigestOf([]byte("2"))
	register := func(d inbound.Digest, now time.Time) inbound.ReplayOutcome {
		var out inbound.ReplayOutcome
		Do(t, h, func(tx inbound.Tx) error {
			var err error
			out, err = tx.Replays().Register(ctx, key, d, now, now.Add(time.Minute))
			return err
		})
		return out
	}
	require.Equal(t, inbound.ReplayNew, register(d1, Base))
	require.Equal(t, inbound.ReplayDuplicate, register(d1, Base.Add(59*time.Second)))
	require.Equal(t, inbound.ReplayConflict, register(d2, Base.Add(59*time.Second)))
	require.Equal(t, inbound.ReplayNew, register(d2, Base.Add(time.Minute)), "an expired key is taken over")
	require.Equal(t, inbound.ReplayDuplicate, register(d2, Base.Add(time.Minute+time.Second)))

	other := inbound.ReplayKey{SourceID: src.ID, MessageID: "m2"}
	Do(t, h, func(tx inbound.Tx) error {
		_, err := tx.Replays().Register(ctx, other, d1, Base.Add(10*time.Minute), Base.Add(20*time.Minute))
		return err
	})
	var purged int64
	Do(t, h, func(tx inbound.Tx) error {
		var err error
		purged, err = tx.Replays().PurgeExpired(ctx, Base.Add(5*time.Minute), 100)
		return err
	})
	require.EqualValues(t, 1, purged, "only the expired key goes")
	Do(t, h, func(tx inbound.Tx) error {
		out, err := tx.Replays().Register(ctx, other, d2, Base.Add(11*time.Minute), Base.Add(12*time.Minute))
		require.Equal(t, inbound.ReplayConflict, out, "the live key stays")
		return err
	})
}

// contractInboxPurge: PurgeDone deletes processed messages done before the
// cutoff, oldest first and no more than the limit; dead letters and
// unprocessed messages stay; a purged message id deduplicates no more.
func contractInboxPurge(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	src := AddSource(t, h, owner, Base)
	at := func(s int) time.Time { return Base.Add(time.Duration(s) * time.Second) }
	var es []inbound.Envelope
	for i := range 5 {
		e := NewEnvelope(src, fmt.Sprintf("m%d", i), fmt.Sprintf(`{"i":%d}`, i), true, Base)
		require.True(t, Insert(t, h, e).Inserted)
		es = append(es, e)
	}
	inbox := func(fn func(ib inbound.InboxStore)) {
		Do(t, h, func(tx inbound.Tx) error { fn(tx.Inbox()); return nil })
	}
	inbox(func(ib inbound.InboxStore) {
		for i, doneAt := range []int{10, 20, 30} {
			_, ok, err := ib.Begin(ctx, es[i].ID, int64(i+1), at(1))
			require.NoError(t, err)
			require.True(t, ok)
			require.NoError(t, ib.MarkDone(ctx, es[i].ID, at(doneAt)))
		}
		_, ok, err := ib.Begin(ctx, es[3].ID, 4, at(1))
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, ib.MarkDead(ctx, es[3].ID, "boom", at(5)))
	})
	purge := func(before time.Time, limit int) int64 {
		t.Helper()
		var n int64
		Do(t, h, func(tx inbound.Tx) error {
			var err error
			n, err = tx.Inbox().PurgeDone(ctx, before, limit)
			return err
		})
		return n
	}
	require.EqualValues(t, 1, purge(at(25), 1), "the limit holds")
	inbox(func(ib inbound.InboxStore) {
		_, err := ib.Get(ctx, owner, es[0].ID)
		require.ErrorIs(t, err, domain.ErrNotFound, "the oldest done goes first")
		_, err = ib.Get(ctx, owner, es[1].ID)
		require.NoError(t, err)
	})
	require.EqualValues(t, 1, purge(at(25), 10))
	require.EqualValues(t, 0, purge(at(25), 10), "nothing else was done before the cutoff")
	inbox(func(ib inbound.InboxStore) {
		for i, want := range map[int]inbound.State{2: inbound.StateDone, 3: inbound.StateDead, 4: inbound.StateReceived} {
			r, err := ib.Get(ctx, owner, es[i].ID)
			require.NoError(t, err, "message %d stays", i)
			require.Equal(t, want, r.State)
		}
	})
	require.True(t, Insert(t, h, NewEnvelope(src, "m0", `{"i":0}`, true, at(40))).Inserted, "a purged id deduplicates no more")
	require.False(t, Insert(t, h, NewEnvelope(src, "m2", `{"i":2}`, true, at(40))).Inserted, "a kept one still does")
}

func contractInboxDedupe(t *testing.T, h Harness) {
	src := AddSource(t, h, h.NewOwner(t), Base)
	first := NewEnvelope(src, "m1", `{"a":1}`, true, Base)
	require.True(t, Insert(t, h, first).Inserted)

	same := Insert(t, h, NewEnvelope(src, "m1", `{"a":1}`, true, Base))
	require.False(t, same.Inserted)
	require.True(t, same.SameMessageID)
	require.Equal(t, first.ID, same.ExistingID)
	require.Equal(t, first.Digest, same.ExistingDigest)

	changed := Insert(t, h, NewEnvelope(src, "m1", `{"a":2}`, true, Base))
	require.False(t, changed.Inserted)
	require.True(t, changed.SameMessageID)
	require.Equal(t, first.Digest, changed.ExistingDigest, "the stored digest, to compare")

	require.True(t, Insert(t, h, NewEnvelope(src, "m2", `{"a":1}`, true, Base)).Inserted, "signed ids: the same body under another id is another message")

	u1 := NewEnvelope(src, "u1", `{"u":1}`, false, Base)
	require.True(t, Insert(t, h, u1).Inserted)
	byBody := Insert(t, h, NewEnvelope(src, "u2", `{"u":1}`, false, Base))
	require.False(t, byBody.Inserted, "unsigned ids: the same body is the same message")
	require.False(t, byBody.SameMessageID)
	require.Equal(t, u1.ID, byBody.ExistingID)

	other := AddSource(t, h, src.OwnerID, Base)
	require.True(t, Insert(t, h, NewEnvelope(other, "m1", `{"a":1}`, true, Base)).Inserted, "ids are unique per source")
}

func contractInboxStates(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	src := AddSource(t, h, owner, Base)
	e := NewEnvelope(src, "m1", `{"x":true}`, true, Base)
	require.True(t, Insert(t, h, e).Inserted)
	inbox := func(fn func(ib inbound.InboxStore)) {
		Do(t, h, func(tx inbound.Tx) error { fn(tx.Inbox()); return nil })
	}
	at := func(s int) time.Time { return Base.Add(time.Duration(s) * time.Second) }

	inbox(func(ib inbound.InboxStore) {
		r, ok, err := ib.Begin(ctx, e.ID, 41, at(1))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, inbound.StateProcessing, r.State)
		require.Equal(t, 1, r.Attempts)
		require.EqualValues(t, 41, r.JobID)
		require.Equal(t, "standard-webhooks", r.SourceKind)
		require.Equal(t, `{"x":true}`, string(r.Body))
		require.Equal(t, "application/json", r.Headers.Get("Content-Type"))
		require.Equal(t, e.Digest, r.Digest)
		require.True(t, r.SignedAt.Equal(Base))
		require.NoError(t, ib.MarkRetry(ctx, e.ID, "boom", at(1), at(6)))
	})
	inbox(func(ib inbound.InboxStore) {
		r, err := ib.Get(ctx, owner, e.ID)
		require.NoError(t, err)
		require.Equal(t, inbound.StateReceived, r.State)
		require.Equal(t, "boom", r.LastError)
		require.True(t, r.NextAttemptAt.Equal(at(6)))
		_, err = ib.Get(ctx, uuid.New(), e.ID)
		require.ErrorIs(t, err, domain.ErrNotFound)

		r, ok, err := ib.Begin(ctx, e.ID, 42, at(6))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, 2, r.Attempts)
		require.True(t, r.NextAttemptAt.IsZero())
		require.NoError(t, ib.MarkDead(ctx, e.ID, "gave up", at(7)))
		_, ok, err = ib.Begin(ctx, e.ID, 43, at(8))
		require.NoError(t, err)
		require.False(t, ok, "a dead letter is not processed")
	})
	inbox(func(ib inbound.InboxStore) {
		dead, err := ib.List(ctx, owner, src.ID, inbound.StateDead, inbound.PageQuery{Limit: 10})
		require.NoError(t, err)
		require.Len(t, dead, 1)
		require.Equal(t, "gave up", dead[0].LastError)
		require.True(t, dead[0].DeadAt.Equal(at(7)))
		require.Empty(t, dead[0].Body, "lists leave bodies out")

		rv, err := ib.Revive(ctx, owner, src.ID, e.ID, false, 5, at(9))
		require.NoError(t, err)
		require.Equal(t, []inbound.Revived{{ID: e.ID, MaxAttempts: 3}}, rv, "attempts kept: 5-2 left")
		rv, err = ib.Revive(ctx, owner, src.ID, e.ID, true, 5, at(9))
		require.NoError(t, err)
		require.Empty(t, rv, "only dead letters revive")

		r, err := ib.Get(ctx, owner, e.ID)
		require.NoError(t, err)
		require.Equal(t, inbound.StateReceived, r.State)
		require.Equal(t, 2, r.Attempts)
		require.Equal(t, 1, r.Replays)
		require.True(t, r.DeadAt.IsZero())

		_, ok, err := ib.Begin(ctx, e.ID, 44, at(10))
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, ib.MarkDead(ctx, e.ID, "again", at(11)))
		rv, err = ib.Revive(ctx, uuid.New(), src.ID, uuid.Nil, true, 5, at(12))
		require.NoError(t, err)
		require.Empty(t, rv, "another owner revives nothing")
		rv, err = ib.Revive(ctx, owner, src.ID, uuid.Nil, true, 5, at(12))
		require.NoError(t, err)
		require.Equal(t, []inbound.Revived{{ID: e.ID, MaxAttempts: 5}}, rv, "attempts reset")

		_, ok, err = ib.Begin(ctx, e.ID, 45, at(13))
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, ib.MarkDone(ctx, e.ID, at(14)))
		r, err = ib.Get(ctx, owner, e.ID)
		require.NoError(t, err)
		require.Equal(t, inbound.StateDone, r.State)
		require.Equal(t, 1, r.Attempts)
		require.Empty(t, r.LastError)
		require.True(t, r.DoneAt.Equal(at(14)))
		_, ok, err = ib.Begin(ctx, e.ID, 46, at(15))
		require.NoError(t, err)
		require.False(t, ok, "a done message is not processed again")
		_, ok, err = ib.Begin(ctx, uuid.New(), 47, at(15))
		require.NoError(t, err)
		require.False(t, ok)
	})
}

func contractRollback(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	src := NewSource(owner, Base)
	e := NewEnvelope(src, "m1", `{}`, true, Base)
	boom := errors.New("boom")
	err := h.UoW.Do(ctx, func(tx inbound.Tx) error {
		require.NoError(t, tx.Sources().Insert(ctx, src))
		out, err := tx.Inbox().Insert(ctx, e)
		require.NoError(t, err)
		require.True(t, out.Inserted)
		require.NoError(t, tx.Jobs().EnqueueProcess(ctx, inbound.ProcessJob{MessageID: e.ID, MaxAttempts: 5}))
		return boom
	})
	require.ErrorIs(t, err, boom)
	_, err = h.Lookup.Lookup(ctx, src.ID)
	require.ErrorIs(t, err, domain.ErrNotFound)
	require.Empty(t, h.MaxAttemptsOf(t, e.ID), "a job exists only if its transaction commits")

	src2 := AddSource(t, h, owner, Base)
	e2 := NewEnvelope(src2, "m1", `{}`, true, Base)
	Do(t, h, func(tx inbound.Tx) error {
		if _, err := tx.Inbox().Insert(ctx, e2); err != nil {
			return err
		}
		return tx.Jobs().EnqueueProcess(ctx, inbound.ProcessJob{MessageID: e2.ID, MaxAttempts: 5})
	})
	require.Equal(t, []int{5}, h.MaxAttemptsOf(t, e2.ID))
	Do(t, h, func(tx inbound.Tx) error {
		return tx.Jobs().EnqueueProcess(ctx, inbound.ProcessJob{MessageID: e2.ID, MaxAttempts: 3}, inbound.ProcessJob{MessageID: e2.ID, MaxAttempts: 1})
	})
	require.Equal(t, []int{5, 3, 1}, h.MaxAttemptsOf(t, e2.ID))
}

func contractDelete(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	used := AddSource(t, h, owner, Base)
	free := AddSource(t, h, owner, Base)
	h.UseSource(t, owner, used.ID)
	e := NewEnvelope(free, "m1", `{}`, true, Base)
	require.True(t, Insert(t, h, e).Inserted)

	err := h.UoW.Do(ctx, func(tx inbound.Tx) error { return tx.Sources().Delete(ctx, owner, used.ID) })
	require.ErrorIs(t, err, inbound.ErrSourceInUse)
	err = h.UoW.Do(ctx, func(tx inbound.Tx) error { return tx.Sources().Delete(ctx, h.NewOwner(t), free.ID) })
	require.ErrorIs(t, err, domain.ErrNotFound)
	Do(t, h, func(tx inbound.Tx) error { return tx.Sources().Delete(ctx, owner, free.ID) })
	Do(t, h, func(tx inbound.Tx) error {
		_, err := tx.Inbox().Get(ctx, owner, e.ID)
		require.ErrorIs(t, err, domain.ErrNotFound, "the inbox goes with its source")
		return nil
	})
}

func contractInboxList(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	src := AddSource(t, h, owner, Base)
	var ids []uuid.UUID
	for i := range 5 {
		e := NewEnvelope(src, "m"+string(rune('a'+i)), `{"i":`+string(rune('0'+i))+`}`, true, Base.Add(time.Duration(i)*time.Second))
		require.True(t, Insert(t, h, e).Inserted)
		ids = append(ids, e.ID)
	}
	Do(t, h, func(tx inbound.Tx) error {
		_, _, err := tx.Inbox().Begin(ctx, ids[1], 1, Base)
		require.NoError(t, err)
		require.NoError(t, tx.Inbox().MarkDone(ctx, ids[1], Base))

		all, err := tx.Inbox().List(ctx, owner, src.ID, "", inbound.PageQuery{Limit: 2})
		require.NoError(t, err)
		require.Equal(t, []uuid.UUID{ids[4], ids[3], ids[2]}, []uuid.UUID{all[0].ID, all[1].ID, all[2].ID})
		next, err := tx.Inbox().List(ctx, owner, src.ID, "", inbound.PageQuery{Limit: 2, After: &inbound.Cursor{At: all[1].ReceivedAt, ID: all[1].ID}})
		require.NoError(t, err)
		require.Equal(t, []uuid.UUID{ids[2], ids[1], ids[0]}, []uuid.UUID{next[0].ID, next[1].ID, next[2].ID})
		done, err := tx.Inbox().List(ctx, owner, src.ID, inbound.StateDone, inbound.PageQuery{Limit: 10})
		require.NoError(t, err)
		require.Len(t, done, 1)
		require.Equal(t, ids[1], done[0].ID)
		none, err := tx.Inbox().List(ctx, uuid.New(), src.ID, "", inbound.PageQuery{Limit: 10})
		require.NoError(t, err)
		require.Empty(t, none)
		return nil
	})
}

// contractAdmit: a batch is admitted in one transaction; each admission is
// accepted (row, replay key and job written), a duplicate naming the row
// there, or a conflict when its id is taken by another payload — by a live
// replay key or by an inbox row.
func contractAdmit(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	src := AddSource(t, h, owner, Base)
	exp := Base.Add(10 * time.Minute)
	adm := func(e inbound.Envelope) inbound.Admission {
		return inbound.Admission{Envelope: e, ReplayExpiresAt: exp, MaxAttempts: 4}
	}
	first := []inbound.Admission{
		adm(NewEnvelope(src, "m1", `{"a":1}`, true, Base)),
		adm(NewEnvelope(src, "m2", `{"a":2}`, true, Base)),
		adm(NewEnvelope(src, "u1", `{"u":1}`, false, Base)),
	}
	res, err := h.Admit.Admit(ctx, first, nil)
	require.NoError(t, err)
	for i, r := range res {
		require.Equal(t, inbound.Admitted{Status: inbound.Accepted, ID: first[i].Envelope.ID}, r)
		require.Equal(t, []int{4}, h.MaxAttemptsOf(t, r.ID))
	}

	later := Base.Add(time.Minute)
	second := []inbound.Admission{
		adm(NewEnvelope(src, "m1", `{"a":1}`, true, later)),       // duplicate
		adm(NewEnvelope(src, "m2", `{"a":"other"}`, true, later)), // live key, other payload
		adm(NewEnvelope(src, "u2", `{"u":1}`, false, later)),      // unsigned id, same body
		adm(NewEnvelope(src, "m3", `{"a":3}`, true, later)),       // new
	}
	res, err = h.Admit.Admit(ctx, second, nil)
	require.NoError(t, err)
	require.Equal(t, []inbound.Admitted{
		{Status: inbound.Duplicate, ID: first[0].Envelope.ID},
		{Conflict: true},
		{Status: inbound.Duplicate, ID: first[2].Envelope.ID},
		{Status: inbound.Accepted, ID: second[3].Envelope.ID},
	}, res)
	require.Empty(t, h.MaxAttemptsOf(t, second[0].Envelope.ID))

	// After the replay key expired, the inbox row still refuses another
	// payload under the same id, and a conflict writes no key: the original
	// payload is still a duplicate afterwards.
	late := exp.Add(time.Minute)
	res, err = h.Admit.Admit(ctx, []inbound.Admission{adm(NewEnvelope(src, "m2", `{"a":"other"}`, true, late))}, nil)
	require.NoError(t, err)
	require.Equal(t, []inbound.Admitted{{Conflict: true}}, res)
	res, err = h.Admit.Admit(ctx, []inbound.Admission{adm(NewEnvelope(src, "m2", `{"a":2}`, true, late))}, nil)
	require.NoError(t, err)
	require.Equal(t, []inbound.Admitted{{Status: inbound.Duplicate, ID: first[1].Envelope.ID}}, res)

	// A stable provider id (Stripe's evt_…, GitHub's delivery GUID, a
	// Standard Webhooks webhook-id) names the event whatever its body's
	// encoding: its resend with another body is a duplicate of the first
	// message, under a live replay key (signed id) or an inbox row (the
	// unsigned GitHub GUID), and the first message is kept.
	stable := func(e inbound.Envelope) inbound.Envelope { e.StableID = true; return e }
	stableFirst := []inbound.Admission{
		adm(stable(NewEnvelope(src, "evt_1", `{"id":"evt_1","n":1}`, true, Base))),
		adm(stable(NewEnvelope(src, "guid-1", `{"n":1}`, false, Base))),
	}
	res, err = h.Admit.Admit(ctx, stableFirst, nil)
	require.NoError(t, err)
	require.Equal(t, []inbound.Admitted{
		{Status: inbound.Accepted, ID: stableFirst[0].Envelope.ID},
		{Status: inbound.Accepted, ID: stableFirst[1].Envelope.ID},
	}, res)
	for _, at := range []time.Time{later, late} {
		res, err = h.Admit.Admit(ctx, []inbound.Admission{
			adm(stable(NewEnvelope(src, "evt_1", "{\n  \"id\": \"evt_1\",\n  \"n\": 1\n}", true, at))),
			adm(stable(NewEnvelope(src, "guid-1", `{ "n" : 1 }`, false, at))),
		}, nil)
		require.NoError(t, err)
		require.Equal(t, []inbound.Admitted{
			{Status: inbound.Duplicate, ID: stableFirst[0].Envelope.ID},
			{Status: inbound.Duplicate, ID: stableFirst[1].Envelope.ID},
		}, res, "a resend of a stable id at %v", at)
	}
	require.Equal(t, []int{4}, h.MaxAttemptsOf(t, stableFirst[0].Envelope.ID), "one job, the first message's")

	// The replay key of an accepted message is registered.
	var outcome inbound.ReplayOutcome
	Do(t, h, func(tx inbound.Tx) error {
		var err error
		outcome, err = tx.Replays().Register(ctx, inbound.ReplayKey{SourceID: src.ID, MessageID: "m3"}, inbound.DigestOf([]byte(`{"a":"x"}`)), later, exp)
		return err
	})
	require.Equal(t, inbound.ReplayConflict, outcome)
}

// contractAdmitRecordsInItsTransaction: the events Admit's hook records
// commit with the batch, and the hook's error rolls back both the messages
// and the events.
func contractAdmitRecordsInItsTransaction(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	src := AddSource(t, h, owner, Base)
	exp := Base.Add(10 * time.Minute)
	record := func(fail error) inbound.AdmittedFunc {
		return func(ctx context.Context, tx inbound.AdmitTx, res []inbound.Admitted) error {
			for _, r := range res {
				if _, err := tx.Recorder().Record(ctx, owner, domain.EventInboundMessageReceived, "inbound:"+src.ID.String(),
					map[string]any{"message_id": r.ID}); err != nil {
					return err
				}
			}
			return fail
		}
	}
	refused := NewEnvelope(src, "r1", `{"r":1}`, true, Base)
	_, err := h.Admit.Admit(ctx, []inbound.Admission{{Envelope: refused, ReplayExpiresAt: exp, MaxAttempts: 1}}, record(errors.New("refused")))
	require.Error(t, err)
	require.Empty(t, h.EventsOf(t, owner))
	Do(t, h, func(tx inbound.Tx) error {
		_, err := tx.Inbox().Get(ctx, owner, refused.ID)
		require.ErrorIs(t, err, domain.ErrNotFound)
		return nil
	})

	kept := NewEnvelope(src, "k1", `{"k":1}`, true, Base)
	res, err := h.Admit.Admit(ctx, []inbound.Admission{{Envelope: kept, ReplayExpiresAt: exp, MaxAttempts: 1}}, record(nil))
	require.NoError(t, err)
	require.Equal(t, inbound.Accepted, res[0].Status)
	require.Equal(t, []string{domain.EventInboundMessageReceived}, h.EventsOf(t, owner))
}

// ifPending is the Need of a message only the supplier activation can want.
var ifPending = inbound.Need{Conditional: true, When: inbound.IfActivationPending}

// contractAdmitUnwantedDone: a message whose Need does not hold as it is
// admitted — no route matches, or the only routes wait for an activation its
// source does not have — is written done at its receipt with no attempt and
// no job; a job for it does nothing, its duplicate queues none, and the
// purge takes it like any processed message.
func contractAdmitUnwantedDone(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	src := AddSource(t, h, owner, Base)
	exp := Base.Add(10 * time.Minute)
	batch := []inbound.Admission{
		{Envelope: NewEnvelope(src, "none", `{"n":1}`, true, Base), ReplayExpiresAt: exp, MaxAttempts: 3, Need: inbound.NeedNone},
		{Envelope: NewEnvelope(src, "waits", `{"n":2}`, false, Base), ReplayExpiresAt: exp, MaxAttempts: 3, Need: ifPending},
	}
	res, err := h.Admit.Admit(ctx, batch, nil)
	require.NoError(t, err)
	for i, a := range batch {
		require.Equal(t, inbound.Admitted{Status: inbound.Accepted, ID: a.Envelope.ID}, res[i])
		require.Empty(t, h.MaxAttemptsOf(t, a.Envelope.ID), "no job")
		Do(t, h, func(tx inbound.Tx) error {
			r, err := tx.Inbox().Get(ctx, owner, a.Envelope.ID)
			require.NoError(t, err)
			require.Equal(t, inbound.StateDone, r.State)
			require.True(t, r.DoneAt.Equal(Base), "processed when received")
			require.Zero(t, r.Attempts)
			require.Zero(t, r.JobID)
			require.True(t, r.LastAttemptAt.IsZero())
			_, ok, err := tx.Inbox().Begin(ctx, a.Envelope.ID, 9, Base.Add(time.Second))
			require.NoError(t, err)
			require.False(t, ok, "a job for a done message does nothing")
			return nil
		})
	}
	again := batch[0]
	again.Envelope.ID, again.Need = uuid.New(), inbound.Need{}
	res, err = h.Admit.Admit(ctx, []inbound.Admission{again}, nil)
	require.NoError(t, err)
	require.Equal(t, []inbound.Admitted{{Status: inbound.Duplicate, ID: batch[0].Envelope.ID}}, res)
	require.Empty(t, h.MaxAttemptsOf(t, batch[0].Envelope.ID), "a duplicate queues nothing")

	var purged int64
	Do(t, h, func(tx inbound.Tx) error {
		var err error
		purged, err = tx.Inbox().PurgeDone(ctx, Base.Add(time.Second), 10)
		return err
	})
	require.EqualValues(t, 2, purged)
}

// contractAdmitWantedQueues: a message whose Need holds as it is admitted —
// always, or waiting for an activation its source has pending — is written
// received with one job.
func contractAdmitWantedQueues(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	plain, pending := AddSource(t, h, owner, Base), AddSource(t, h, owner, Base)
	h.UseSource(t, owner, pending.ID)
	exp := Base.Add(10 * time.Minute)
	batch := []inbound.Admission{
		{Envelope: NewEnvelope(plain, "always", `{"n":1}`, true, Base), ReplayExpiresAt: exp, MaxAttempts: 3},
		{Envelope: NewEnvelope(pending, "activates", `{"n":2}`, true, Base), ReplayExpiresAt: exp, MaxAttempts: 3, Need: ifPending},
		{Envelope: NewEnvelope(plain, "waits", `{"n":3}`, true, Base), ReplayExpiresAt: exp, MaxAttempts: 3, Need: ifPending},
	}
	res, err := h.Admit.Admit(ctx, batch, nil)
	require.NoError(t, err)
	for i, a := range batch {
		require.Equal(t, inbound.Admitted{Status: inbound.Accepted, ID: a.Envelope.ID}, res[i])
	}
	for _, a := range batch[:2] {
		require.Equal(t, []int{3}, h.MaxAttemptsOf(t, a.Envelope.ID), "one job")
		Do(t, h, func(tx inbound.Tx) error {
			r, err := tx.Inbox().Get(ctx, owner, a.Envelope.ID)
			require.NoError(t, err)
			require.Equal(t, inbound.StateReceived, r.State)
			require.True(t, r.DoneAt.IsZero())
			return nil
		})
	}
	require.Empty(t, h.MaxAttemptsOf(t, batch[2].Envelope.ID), "the plain source has no activation pending")
}

// contractPreviousSecret: a source keeps its previous secret until its
// expiry, then DropExpiredPreviousSecrets forgets it; a never-rotated secret
// has no rotation time.
func contractPreviousSecret(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	src := AddSource(t, h, owner, Base)
	src.SecretRotatedAt = time.Time{}
	Do(t, h, func(tx inbound.Tx) error {
		return tx.Sources().Update(ctx, owner, src.ID, func(s *inbound.Source) error { *s = src; return nil })
	})
	got, err := h.Lookup.Lookup(ctx, src.ID)
	require.NoError(t, err)
	require.True(t, got.SecretRotatedAt.IsZero())
	require.Empty(t, got.PreviousSealedSecret)

	src.PreviousSealedSecret, src.PreviousSecretExpiresAt = []byte("old"), Base.Add(time.Hour)
	src.SecretRotatedAt = Base
	Do(t, h, func(tx inbound.Tx) error {
		return tx.Sources().Update(ctx, owner, src.ID, func(s *inbound.Source) error { *s = src; return nil })
	})
	var n int64
	Do(t, h, func(tx inbound.Tx) error {
		var err error
		n, err = tx.Sources().DropExpiredPreviousSecrets(ctx, Base.Add(time.Minute))
		return err
	})
	require.Zero(t, n)
	got, err = h.Lookup.Lookup(ctx, src.ID)
	require.NoError(t, err)
	require.Equal(t, []byte("old"), got.PreviousSealedSecret)
	require.True(t, got.PreviousSecretExpiresAt.Equal(Base.Add(time.Hour)))
	Do(t, h, func(tx inbound.Tx) error {
		var err error
		n, err = tx.Sources().DropExpiredPreviousSecrets(ctx, Base.Add(time.Hour))
		return err
	})
	require.EqualValues(t, 1, n)
	got, err = h.Lookup.Lookup(ctx, src.ID)
	require.NoError(t, err)
	require.Empty(t, got.PreviousSealedSecret)
	require.True(t, got.PreviousSecretExpiresAt.IsZero())
}

// contractRefusals: refusals are listed newest first, per owner and source,
// trimmed to RefusalsKept per source, purged by age; a refusal naming
// another owner than the source's is not kept.
func contractRefusals(t *testing.T, h Harness) {
	ctx := context.Background()
	owner := h.NewOwner(t)
	src := AddSource(t, h, owner, Base)
	other := AddSource(t, h, owner, Base)
	var rs []inbound.Refusal
	for i := range inbound.RefusalsKept + 5 {
		rs = append(rs, inbound.Refusal{OwnerID: owner, SourceID: src.ID, At: Base.Add(time.Duration(i) * time.Second),
			Reason: "WEBHOOK_SIGNATURE_INVALID", Detail: fmt.Sprintf("refusal %d", i)})
	}
	rs = append(rs, inbound.Refusal{OwnerID: owner, SourceID: other.ID, At: Base, Reason: "WEBHOOK_STALE", Detail: "stale"},
		inbound.Refusal{OwnerID: uuid.New(), SourceID: other.ID, At: Base, Reason: "X", Detail: "not the source's owner"})
	require.NoError(t, h.Refusals.AddRefusals(ctx, rs[:50]))
	require.NoError(t, h.Refusals.AddRefusals(ctx, rs[50:]))

	got, err := h.Refusals.ListRefusals(ctx, owner, src.ID, 1000)
	require.NoError(t, err)
	require.Len(t, got, inbound.RefusalsKept)
	require.Equal(t, fmt.Sprintf("refusal %d", inbound.RefusalsKept+4), got[0].Detail, "newest first")
	require.Equal(t, "refusal 5", got[len(got)-1].Detail, "the oldest beyond the bound are trimmed")
	require.True(t, got[0].At.Equal(Base.Add(time.Duration(inbound.RefusalsKept+4)*time.Second)))

	got, err = h.Refusals.ListRefusals(ctx, owner, other.ID, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, "WEBHOOK_STALE", got[0].Reason)
	got, err = h.Refusals.ListRefusals(ctx, uuid.New(), src.ID, 10)
	require.NoError(t, err)
	require.Empty(t, got, "another owner sees none")

	n, err := h.Refusals.PurgeRefusals(ctx, Base.Add(50*time.Second))
	require.NoError(t, err)
	require.EqualValues(t, 45+1, n)
	got, err = h.Refusals.ListRefusals(ctx, owner, src.ID, 1000)
	require.NoError(t, err)
	require.Len(t, got, inbound.RefusalsKept-45)
}
