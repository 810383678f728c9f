package supplier_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/supplier"
	"github.com/standmeet/standmeet/internal/owner/inbound/supplier/suppliertest"
)

func TestConnectionLifecycleRecordsEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := suppliertest.NewMemory()
	owner, source := uuid.New(), uuid.New()
	f.AddSource(owner, source)
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	svc := supplier.NewService(f, domain.ClockFunc(func() time.Time { return now }))

	v, err := svc.Create(ctx, owner, supplier.CreateInput{Name: "Acme", Supplier: "acme-logistics", SourceID: source})
	require.NoError(t, err)
	require.Equal(t, "connected", v.Status)
	require.Nil(t, v.ActivatedAt)
	require.Equal(t, "/hooks/"+source.String(), v.ReceiveURL)
	require.Len(t, f.Events(), 1)
	require.Equal(t, domain.EventSupplierConnected, f.Events()[0].Type)
	require.Equal(t, owner, f.Events()[0].OwnerID)
	require.Equal(t, "supplier://"+v.ID.String(), f.Events()[0].Subject)

	msg := inbound.Message{ID: uuid.New(), OwnerID: owner, SourceID: source, ReceivedAt: now.Add(time.Minute)}
	require.NoError(t, svc.Route().Handler.HandleInbound(ctx, msg))
	require.NoError(t, svc.HandleInbound(ctx, msg), "the same message again")
	require.NoError(t, svc.HandleInbound(ctx, inbound.Message{ID: uuid.New(), OwnerID: owner, SourceID: source}))
	require.Len(t, f.Events(), 2, "activated once, on the first message")
	require.Equal(t, domain.EventSupplierActivated, f.Events()[1].Type)
	got, err := svc.Get(ctx, owner, v.ID)
	require.NoError(t, err)
	require.Equal(t, "active", got.Status)
	require.Equal(t, now.Add(time.Minute), *got.ActivatedAt)

	// A message on a source without a connection, or of another owner, does nothing.
	require.NoError(t, svc.HandleInbound(ctx, inbound.Message{ID: uuid.New(), OwnerID: uuid.New(), SourceID: source}))
	require.Len(t, f.Events(), 2)

	require.ErrorIs(t, svc.Delete(ctx, uuid.New(), v.ID), supplier.ErrNotFound)
	require.NoError(t, svc.Delete(ctx, owner, v.ID))
	require.Len(t, f.Events(), 3)
	require.Equal(t, domain.EventSupplierDisconnected, f.Events()[2].Type)
	_, err = svc.Get(ctx, owner, v.ID)
	require.ErrorIs(t, err, supplier.ErrNotFound)
}

func TestCreateRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := suppliertest.NewMemory()
	owner, source := uuid.New(), uuid.New()
	f.AddSource(owner, source)
	svc := supplier.NewService(f, nil)
	_, err := svc.Create(ctx, owner, supplier.CreateInput{Name: "A", SourceID: source})
	require.NoError(t, err)

	cases := []struct {
		name string
		in   supplier.CreateInput
		want error
	}{
		{"source already connected", supplier.CreateInput{Name: "B", SourceID: source}, supplier.ErrSourceTaken},
		{"another owner's source", supplier.CreateInput{Name: "B", SourceID: uuid.New()}, supplier.ErrSourceNotFound},
	}
	for _, c := range cases {
		_, err := svc.Create(ctx, owner, c.in)
		require.ErrorIs(t, err, c.want, c.name)
	}
	_, err = svc.Create(ctx, owner, supplier.CreateInput{Name: " ", SourceID: source})
	require.Equal(t, domain.KindValidation, domain.AsError(err).Kind)
	_, err = svc.Create(ctx, owner, supplier.CreateInput{Name: "x"})
	require.Equal(t, domain.KindValidation, domain.AsError(err).Kind)
	require.Len(t, f.Events(), 1)
}

func TestCreateRollsBackWhenRecordFails(t *testing.T) {
	t.Parallel()
	f := suppliertest.NewMemory()
	owner, source := uuid.New(), uuid.New()
	f.AddSource(owner, source)
	f.Recorder().Fail(func(string) error { return errors.New("events table gone") })
	svc := supplier.NewService(f, nil)
	_, err := svc.Create(context.Background(), owner, supplier.CreateInput{Name: "A", SourceID: source})
	require.Error(t, err)
	page, err := svc.List(context.Background(), owner, op.PageInput{})
	require.NoError(t, err)
	require.Empty(t, page.Data, "no connection without its event")
}
