package events

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

// Subscription is one subscriber of the bus as the relay sees it: the River
// job kind its worker is registered under (e.g. "corpus.index",
// "webhook.fanout") and the concrete event types it wants. The composition
// root expands each subscriber's globs against the catalog
// (domain.ExpandGlobs) before handing subscriptions over, so the relay needs
// no glob and no catalog.
type Subscription struct {
	// Kind is the River job kind inserted for each matching event.
	Kind string
	// EventTypes are the concrete event type names the subscriber wants.
	EventTypes []string
	// InsertOpts optionally sets queue, priority or max attempts of the
	// inserted jobs; nil uses River's defaults.
	InsertOpts *river.InsertOpts
	// Owners, when set, tells which owners the subscriber has work for: an
	// event of an owner it leaves out gets no job (its fan-out would do
	// nothing). Empty takes every owner. See OwnersQuery.
	Owners OwnersQuery
}

// OwnersQuery is a query of one uuid column: the owners, among those of
// its parameter $1 (uuid[]), whose events a subscriber wants. The relay runs
// it once per batch in its transaction; a batch of the Recorder (Batch)
// runs it inside the statement that writes the batch's events, so it must
// be a single SELECT with no parameter but $1.
type OwnersQuery string

// EventJobArgs is the JSON shape of every job the relay inserts:
// {"event_id":"<uuid>"}. A subscriber's worker declares its own args type
// with this shape and its own Kind, typically by embedding it:
//
//	type IndexArgs struct{ events.EventJobArgs }
//	func (IndexArgs) Kind() string { return "corpus.index" }
//
// The worker loads the event by id, so a job stays small and the event row
// stays the one source of truth.
type EventJobArgs struct {
	EventID uuid.UUID `json:"event_id"`
}

// fanoutArgs is what the relay inserts: EventJobArgs under a kind chosen per
// instance (River takes the kind from each args value, not from its type).
type fanoutArgs struct {
	kind string
	EventJobArgs
}

// Kind implements river.JobArgs.
func (a fanoutArgs) Kind() string { return a.kind }

// routes maps an event type to the subscriptions that want it.
type routes map[string][]*Subscription

// newRoutes indexes subs by event type. Kinds must be unique and non-empty:
// two subscriptions under one kind would give one worker every event twice.
func newRoutes(subs []Subscription) (routes, error) {
	r := routes{}
	kinds := map[string]bool{}
	for i := range subs {
		s := &subs[i]
		if s.Kind == "" {
			return nil, fmt.Errorf("subscription %d: empty kind", i)
		}
		if kinds[s.Kind] {
			return nil, fmt.Errorf("subscription %q declared twice", s.Kind)
		}
		kinds[s.Kind] = true
		seen := map[string]bool{}
		for _, t := range s.EventTypes {
			if seen[t] {
				continue
			}
			seen[t] = true
			r[t] = append(r[t], s)
		}
	}
	return r, nil
}
