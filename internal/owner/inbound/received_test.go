package inbound_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

// receivedEvents returns the inbound.message.received events committed so
// far.
func (b *bundle) receivedEvents(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range b.mem.Events() {
		if e.Type != domain.EventInboundMessageReceived {
			continue
		}
		require.Equal(t, b.owner, e.OwnerID)
		var data map[string]any
		require.NoError(t, json.Unmarshal(e.Data, &data))
		data["subject"] = e.Subject
		out = append(out, data)
	}
	return out
}

// An accepted message records exactly one inbound.message.received with
// the provider's type; a duplicate, a forged request and a message of a
// source that records no events record none, and a source turned back on
// records again.
func TestAcceptedMessagesRecordReceived(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	src, key := b.swSource(t)
	quiet, quietKey := b.swSource(t, func(in *inbound.CreateSourceInput) { off := false; in.RecordEvents = &off })
	require.True(t, src.RecordEvents)
	require.False(t, quiet.RecordEvents)

	r, err := b.gw.Receive(ctx, src.ID, signed(key, "msg_1", b.clock.Now(), `{"type":"invoice.paid","n":1}`))
	require.NoError(t, err)
	require.Equal(t, inbound.Accepted, r.Status)
	got := b.receivedEvents(t)
	require.Len(t, got, 1)
	require.Equal(t, map[string]any{
		"source_id": src.ID.String(), "message_id": r.ID.String(), "provider_type": "invoice.paid",
		"received_at": b.clock.Now().UTC().Format("2006-01-02T15:04:05Z07:00"), "subject": inbound.ReceivedSubject(src.ID),
	}, got[0])

	again, err := b.gw.Receive(ctx, src.ID, signed(key, "msg_1", b.clock.Now(), `{"type":"invoice.paid","n":1}`))
	require.NoError(t, err)
	require.Equal(t, inbound.Duplicate, again.Status)
	_, err = b.gw.Receive(ctx, src.ID, signed(quietKey, "msg_2", b.clock.Now(), `{"type":"invoice.paid","n":2}`))
	require.ErrorIs(t, err, verifier.ErrUnauthorized, "signed with another source's key")
	require.Len(t, b.receivedEvents(t), 1, "a duplicate or a refused request records nothing")

	q, err := b.gw.Receive(ctx, quiet.ID, signed(quietKey, "msg_3", b.clock.Now(), `{"type":"invoice.paid","n":3}`))
	require.NoError(t, err)
	require.Equal(t, inbound.Accepted, q.Status)
	require.Len(t, b.receivedEvents(t), 1, "the quiet source records no event")

	on := true
	_, err = b.svc.UpdateSource(ctx, b.owner, inbound.UpdateSourceInput{ID: quiet.ID, RecordEvents: &on})
	require.NoError(t, err)
	q, err = b.gw.Receive(ctx, quiet.ID, signed(quietKey, "msg_4", b.clock.Now(), `{"type":"invoice.paid","n":4}`))
	require.NoError(t, err)
	got = b.receivedEvents(t)
	require.Len(t, got, 2)
	require.Equal(t, q.ID.String(), got[1]["message_id"])
}

// The event is recorded in the admitting transaction: when it cannot be
// recorded, the request fails and neither the message nor its job is kept.
func TestAReceiptThatCannotBeRecordedKeepsNoMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	src, key := b.swSource(t)
	b.mem.FailEvents(func(eventType string) error {
		if eventType == domain.EventInboundMessageReceived {
			return errors.New("the events table refused it")
		}
		return nil
	})
	_, err := b.gw.Receive(ctx, src.ID, signed(key, "msg_1", b.clock.Now(), `{"type":"a"}`))
	require.ErrorContains(t, err, "refused it")
	require.Empty(t, b.mem.Messages())
	require.Empty(t, b.mem.Jobs())
	require.Empty(t, b.receivedEvents(t))

	b.mem.FailEvents(nil)
	r, err := b.gw.Receive(ctx, src.ID, signed(key, "msg_1", b.clock.Now(), `{"type":"a"}`))
	require.NoError(t, err)
	require.Equal(t, inbound.Accepted, r.Status, "the id was not taken by the failed attempt")
	require.Len(t, b.receivedEvents(t), 1)
}
