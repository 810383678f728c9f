package web

import (
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/adapters/eventop"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// toldMessages is how many of the newest messages the source page shows
// with the endpoints their event reached: one webhooks.event_deliveries
// call each.
const toldMessages = 10

// sourceEvents is what happens to a source's messages as events: whether
// it records inbound.message.received, and the endpoints subscribed to it.
type sourceEvents struct {
	Type       string
	Records    bool
	Subscribed []webhook.View
	// More says there are more subscribed endpoints than listed.
	More bool
	// CanCreate says the owner can add an endpoint here (webhooks.create).
	CanCreate bool
}

// sourceEventsOf fills d.Events with the endpoints subscribed to
// inbound.message.received and, for the newest messages, their event and
// the deliveries it made. Without the webhook ops it leaves d.Events nil;
// without the event log's ops the messages show no event.
func (h *Handler) sourceEventsOf(c echo.Context, s *Session, d *sourceShowData) error {
	if h.webhooks == nil {
		return nil
	}
	ctx := c.Request().Context()
	ev := &sourceEvents{Type: domain.EventInboundMessageReceived, Records: d.Source.RecordEvents, CanCreate: h.has("webhooks.create")}
	subs, err := h.webhooks.list.Call(ctx, s.Caller, webhook.ListInput{PageInput: op.PageInput{Limit: 20}, EventType: ev.Type})
	if err != nil {
		return err
	}
	ev.Subscribed, ev.More = subs.Data, subs.NextCursor != nil
	d.Events = ev
	if h.events == nil || h.events.log == nil || h.events.deliveries == nil || len(d.Messages) == 0 {
		return nil
	}
	newest := d.Messages[:min(len(d.Messages), toldMessages)]
	oldest := newest[0].ReceivedAt
	want := map[string]*message{}
	for i := range newest {
		m := &newest[i]
		m.Looked = true
		want[m.ID.String()] = m
		if m.ReceivedAt.Before(oldest) {
			oldest = m.ReceivedAt
		}
	}
	// The event is recorded in the transaction that admits the message, a
	// moment after the gateway stamped received_at; the minute's margin
	// covers the two clocks (the server's and PostgreSQL's).
	in := eventop.ListInput{PageInput: op.PageInput{Limit: op.MaxLimit}, Type: ev.Type, Since: oldest.Add(-time.Minute).UTC().Format(time.RFC3339Nano)}
	for page := 0; page < 5 && len(want) > 0; page++ {
		p, err := h.events.log.list.Call(ctx, s.Caller, in)
		if err != nil {
			return err
		}
		for _, e := range p.Data {
			id, _ := e.Data["message_id"].(string)
			if m, ok := want[id]; ok {
				m.Event = new(uuid.UUID)
				*m.Event = e.ID
				delete(want, id)
			}
		}
		if p.NextCursor == nil {
			break
		}
		in.Cursor = *p.NextCursor
	}
	for i := range newest {
		m := &newest[i]
		if m.Event == nil {
			continue
		}
		told, err := h.events.deliveries.Call(ctx, s.Caller, webhook.EventIDInput{ID: *m.Event})
		if err != nil {
			return err
		}
		m.Told = told.Data
	}
	return nil
}
