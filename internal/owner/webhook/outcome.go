package webhook

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// MaxOutcomeEvents bounds the events one webhooks.event_outcomes call
// reads: two pages of the events list.
const MaxOutcomeEvents = 100

// CodeInvalidIDs refuses an ids list that is not comma-separated event
// ids, or names more than MaxOutcomeEvents.
const CodeInvalidIDs = "INVALID_IDS"

// StatusNone is the outcome of an event with no delivery on record.
const StatusNone = "none"

// EventIDsInput names events by id.
type EventIDsInput struct {
	IDs string `json:"ids" query:"ids" doc:"event ids, comma-separated (at most 100)"`
}

// EventOutcome is the delivery outcome of one event: the latest delivery
// to each endpoint, counted by status.
type EventOutcome struct {
	EventID uuid.UUID `json:"event_id"`
	// Deliveries counts the endpoints the event has a delivery to.
	Deliveries int `json:"deliveries"`
	// ByStatus counts those deliveries by status (delivered, sending,
	// waiting, retrying, failed, cancelled); the statuses none has are
	// left out.
	ByStatus map[string]int `json:"by_status"`
	// Status is the status that needs the owner first: failed, retrying,
	// sending, waiting, cancelled, then delivered; none when no delivery
	// is on record.
	Status string `json:"status" doc:"failed, retrying, sending, waiting, cancelled, delivered, or none when no delivery is on record"`
	// Text says the outcome in words, e.g. "delivered to 2" or
	// "1 retrying, delivered to 1".
	Text string `json:"text"`
}

// outcomeOrder is the order in which an outcome names its statuses: the
// ones that need the owner first.
var outcomeOrder = []string{StatusFailed, StatusRetrying, StatusSending, StatusWaiting, StatusCancelled, StatusDelivered}

// outcomeOf counts the latest delivery of an event to each endpoint.
func outcomeOf(eventID uuid.UUID, ds []EventDelivery) EventOutcome {
	o := EventOutcome{EventID: eventID, Deliveries: len(ds), ByStatus: map[string]int{}, Status: StatusNone, Text: "no delivery"}
	for i := range ds {
		finishDelivery(&ds[i].Delivery)
		o.ByStatus[ds[i].Status]++
	}
	var parts []string
	for _, st := range outcomeOrder {
		n := o.ByStatus[st]
		if n == 0 {
			continue
		}
		if o.Status == StatusNone {
			o.Status = st
		}
		if st == StatusDelivered {
			parts = append(parts, "delivered to "+strconv.Itoa(n))
		} else {
			parts = append(parts, strconv.Itoa(n)+" "+st)
		}
	}
	if len(parts) > 0 {
		o.Text = strings.Join(parts, ", ")
	}
	return o
}

// eventIDs parses a comma-separated list of at most MaxOutcomeEvents
// event ids, duplicates dropped.
func eventIDs(raw string) ([]uuid.UUID, error) {
	bad := func(msg string) error { return domain.Validation(CodeInvalidIDs, msg).WithField("ids") }
	var ids []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, part := range strings.Split(raw, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, err := uuid.Parse(part)
		if err != nil {
			return nil, bad("ids must be event ids separated by commas")
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
		if len(ids) > MaxOutcomeEvents {
			return nil, bad(fmt.Sprintf("ids names more than %d events", MaxOutcomeEvents))
		}
	}
	return ids, nil
}

// EventOutcomes reads the delivery outcome of each of the owner's events
// in in.IDs, in their order, in one read of the store. An id that is not
// one of the owner's events reads as an event no endpoint got: it reveals
// nothing of another owner's events.
func (s *Service) EventOutcomes(ctx context.Context, ownerID uuid.UUID, in EventIDsInput) (op.List[EventOutcome], error) {
	ids, err := eventIDs(in.IDs)
	if err != nil {
		return op.List[EventOutcome]{}, err
	}
	var rows []EventDelivery
	if len(ids) > 0 {
		err = s.uow.Do(ctx, func(tx Tx) error {
			var err error
			rows, err = tx.Deliveries().LatestByEvents(ctx, ownerID, ids)
			return err
		})
		if err != nil {
			return op.List[EventOutcome]{}, fmt.Errorf("read the delivery outcomes of %d events: %w", len(ids), err)
		}
	}
	byEvent := map[uuid.UUID][]EventDelivery{}
	for _, d := range rows {
		byEvent[d.EventID] = append(byEvent[d.EventID], d)
	}
	out := op.List[EventOutcome]{Data: make([]EventOutcome, 0, len(ids))}
	for _, id := range ids {
		out.Data = append(out.Data, outcomeOf(id, byEvent[id]))
	}
	return out, nil
}

func (s *Service) eventOutcomesOp() op.Descriptor {
	return op.New(op.Meta{
		Name: "webhooks.event_outcomes", Scopes: op.ReadsIn(op.ScopeWebhooks),
		Summary: "The delivery outcome of each of several events: its latest delivery to each endpoint, counted by status",
		Description: "ids: up to 100 event ids, comma-separated; the answer follows their order. An id that is not one of your " +
			"events, or an event no endpoint got, has status none. Errors: INVALID_IDS.",
	}, func(ctx context.Context, c op.Caller, in EventIDsInput) (op.List[EventOutcome], error) {
		return s.EventOutcomes(ctx, c.OwnerID, in)
	})
}
