package web

import (
	"github.com/standmeet/standmeet/internal/adapters/eventop"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// eventOps are the event log's, the poisoned list's, the event catalog's
// and the job page's ops as their pages call them: typed handles, resolved
// once when the UI is built. Each group is nil when the set does not
// declare the op that marks it.
type eventOps struct {
	// log is events.list and events.get (marked by events.list).
	log *struct {
		list op.Handle[eventop.ListInput, eventop.EventPage]
		get  op.Handle[eventop.IDInput, eventop.Event]
	}
	// poisoned is events.poisoned and events.release (marked by
	// events.poisoned).
	poisoned *struct {
		list    op.Handle[eventop.PoisonedInput, op.Page[eventop.Event]]
		release op.Handle[eventop.IDInput, eventop.Event]
	}
	// The event page's webhook parts and the catalog: each its own op,
	// nil when not declared.
	deliveries *op.Handle[webhook.EventIDInput, op.List[webhook.EventDelivery]]
	fanout     *op.Handle[webhook.EventIDInput, webhook.EventFanout]
	outcomes   *op.Handle[webhook.EventIDsInput, op.List[webhook.EventOutcome]]
	types      *op.Handle[op.Empty, op.List[webhook.EventTypeView]]
	job        *op.Handle[riverjob.JobInput, riverjob.Job]
}

// eventOpsOf resolves the handles of eventOps in ops. It fails, naming the
// op, when a group's marking op is declared but another of the group is
// missing, or when any op it resolves has other types.
func eventOpsOf(ops op.Set) (*eventOps, error) {
	var o eventOps
	hs := handles{ops: ops}
	if _, ok := ops.Find("events.list"); ok {
		o.log = new(struct {
			list op.Handle[eventop.ListInput, eventop.EventPage]
			get  op.Handle[eventop.IDInput, eventop.Event]
		})
		bind(&hs, &o.log.list, "events.list")
		bind(&hs, &o.log.get, "events.get")
	}
	if _, ok := ops.Find("events.poisoned"); ok {
		o.poisoned = new(struct {
			list    op.Handle[eventop.PoisonedInput, op.Page[eventop.Event]]
			release op.Handle[eventop.IDInput, eventop.Event]
		})
		bind(&hs, &o.poisoned.list, "events.poisoned")
		bind(&hs, &o.poisoned.release, "events.release")
	}
	bindOptional(&hs, &o.deliveries, "webhooks.event_deliveries")
	bindOptional(&hs, &o.fanout, "webhooks.event_fanout")
	bindOptional(&hs, &o.outcomes, "webhooks.event_outcomes")
	bindOptional(&hs, &o.types, "webhooks.event_types")
	bindOptional(&hs, &o.job, "jobs.get")
	if err := hs.err("the event, catalog and job pages need their ops"); err != nil {
		return nil, err
	}
	return &o, nil
}
