package inbounddb_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/adapters/postgres/inbounddb"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/inboundtest"
	"github.com/standmeet/standmeet/internal/owner/inbound/supplier"
)

// TestConcurrentRegistrationsAdmitOne races the gateway's transaction
// (replay key, then inbox row) for one message from many connections:
// exactly one wins, the others see a duplicate, none fails.
func TestConcurrentRegistrationsAdmitOne(t *testing.T) {
	t.Parallel()
	h, _ := newPostgres(t)
	src := inboundtest.AddSource(t, h, h.NewOwner(t), inboundtest.Base)
	const n = 16
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		outcomes = map[string]int{}
	)
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			e := inboundtest.NewEnvelope(src, "same", `{"same":true}`, true, inboundtest.Base)
			err := h.UoW.Do(context.Background(), func(tx inbound.Tx) error {
				r, err := tx.Replays().Register(context.Background(), inbound.ReplayKey{SourceID: src.ID, MessageID: e.MessageID}, e.Digest, inboundtest.Base, inboundtest.Base.Add(time.Hour))
				if err != nil || r != inbound.ReplayNew {
					mu.Lock()
					outcomes["replay-dup"]++
					mu.Unlock()
					return err
				}
				out, err := tx.Inbox().Insert(context.Background(), e)
				mu.Lock()
				if out.Inserted {
					outcomes["inserted"]++
				} else {
					outcomes["inbox-dup"]++
				}
				mu.Unlock()
				return err
			})
			if err != nil {
				mu.Lock()
				outcomes["error"]++
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	require.Equal(t, 1, outcomes["inserted"])
	require.Equal(t, n-1, outcomes["replay-dup"]+outcomes["inbox-dup"])
	require.Zero(t, outcomes["error"])
}

func TestSupplierStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, pool := newPostgres(t)
	owner, other := h.NewOwner(t), h.NewOwner(t)
	src := inboundtest.AddSource(t, h, owner, inboundtest.Base)
	rec := events.NewRecorder(func(string) bool { return true }, nil)
	uow := inbounddb.NewSupplier(pool, func(tx pgx.Tx) domain.Recorder { return rec.With(tx) })
	svc := supplier.NewService(uow, domain.ClockFunc(func() time.Time { return inboundtest.Base }))
	eventsOf := func(typ string) int {
		var n int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE owner_id = $1 AND type = $2`, owner, typ).Scan(&n))
		return n
	}

	_, err := svc.Create(ctx, other, supplier.CreateInput{Name: "x", SourceID: src.ID})
	require.ErrorIs(t, err, supplier.ErrSourceNotFound, "another owner's source")
	v, err := svc.Create(ctx, owner, supplier.CreateInput{Name: "Acme", Supplier: "acme", SourceID: src.ID})
	require.NoError(t, err)
	_, err = svc.Create(ctx, owner, supplier.CreateInput{Name: "again", SourceID: src.ID})
	require.ErrorIs(t, err, supplier.ErrSourceTaken)
	require.Equal(t, 1, eventsOf(domain.EventSupplierConnected), "the refused creates recorded nothing")

	msg := inbound.Message{ID: uuid.New(), OwnerID: owner, SourceID: src.ID, ReceivedAt: inboundtest.Base.Add(time.Minute)}
	require.NoError(t, svc.HandleInbound(ctx, msg))
	require.NoError(t, svc.HandleInbound(ctx, msg))
	require.Equal(t, 1, eventsOf(domain.EventSupplierActivated))
	got, err := svc.Get(ctx, owner, v.ID)
	require.NoError(t, err)
	require.Equal(t, "active", got.Status)
	require.True(t, got.ActivatedAt.Equal(inboundtest.Base.Add(time.Minute)))
	page, err := svc.List(ctx, owner, op.PageInput{})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)

	err = h.UoW.Do(ctx, func(tx inbound.Tx) error { return tx.Sources().Delete(ctx, owner, src.ID) })
	require.ErrorIs(t, err, inbound.ErrSourceInUse)
	require.ErrorIs(t, svc.Delete(ctx, other, v.ID), supplier.ErrNotFound)
	require.NoError(t, svc.Delete(ctx, owner, v.ID))
	require.Equal(t, 1, eventsOf(domain.EventSupplierDisconnected))
	err = h.UoW.Do(ctx, func(tx inbound.Tx) error { return tx.Sources().Delete(ctx, owner, src.ID) })
	require.NoError(t, err, "a source without a connection can go")
}

func TestUnreachableDatabaseIsErrUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Port 1 on loopback: nothing listens, the connect is refused.
	pool, err := pgxpool.New(ctx, "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	uow := inbounddb.New(pool, func(pgx.Tx) inbound.JobQueue { return nil })
	_, err = uow.Lookup(ctx, uuid.New())
	require.ErrorIs(t, err, inbound.ErrUnavailable)
	_, err = uow.Admit(ctx, []inbound.Admission{{Envelope: inbound.Envelope{ID: uuid.New(), SourceID: uuid.New(), MessageID: "m"}}}, nil)
	require.ErrorIs(t, err, inbound.ErrUnavailable)
}
