package web

import (
	"errors"
	"fmt"

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
	types      *op.Handle[op.Empty, op.List[webhook.EventTypeView]]
	job        *op.Handle[riverjob.JobInput, riverjob.Job]
}

// eventOpsOf resolves the handles of eventOps in ops. It fails, naming the
// op, when a group's marking op is declared but another of the group is
// missing, or when any op it resolves has other types.
func eventOpsOf(ops op.Set) (*eventOps, error) {
	var o eventOps
	var errs []error
	if _, ok := ops.Find("events.list"); ok {
		o.log = new(struct {
			list op.Handle[eventop.ListInput, eventop.EventPage]
			get  op.Handle[eventop.IDInput, eventop.Event]
		})
		var err error
		o.log.list, err = op.HandleOf[eventop.ListInput, eventop.EventPage](ops, "events.list")
		errs = append(errs, err)
		o.log.get, err = op.HandleOf[eventop.IDInput, eventop.Event](ops, "events.get")
		errs = append(errs, err)
	}
	if _, ok := ops.Find("events.poisoned"); ok {
		o.poisoned = new(struct {
			list    op.Handle[eventop.PoisonedInput, op.Page[eventop.Event]]
			release op.Handle[eventop.IDInput, eventop.Event]
		})
		var err error
		o.poisoned.list, err = op.HandleOf[eventop.PoisonedInput, op.Page[eventop.Event]](ops, "events.poisoned")
		errs = append(errs, err)
		o.poisoned.release, err = op.HandleOf[eventop.IDInput, eventop.Event](ops, "events.release")
		errs = append(errs, err)
	}
	var err error
	o.deliveries, err = optionalHandle[webhook.EventIDInput, op.List[webhook.EventDelivery]](ops, "webhooks.event_deliveries")
	errs = append(errs, err)
	o.fanout, err = optionalHandle[webhook.EventIDInput, webhook.EventFanout](ops, "webhooks.event_fanout")
	errs = append(errs, err)
	o.types, err = optionalHandle[op.Empty, op.List[webhook.EventTypeView]](ops, "webhooks.event_types")
	errs = append(errs, err)
	o.job, err = optionalHandle[riverjob.JobInput, riverjob.Job](ops, "jobs.get")
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("web: the event, catalog and job pages need their ops: %w", err)
	}
	return &o, nil
}

// optionalHandle returns the handle of the op named name, nil when ops does
// not declare it; it fails when the op has other types.
func optionalHandle[In, Out any](ops op.Set, name string) (*op.Handle[In, Out], error) {
	if _, ok := ops.Find(name); !ok {
		return nil, nil
	}
	h, err := op.HandleOf[In, Out](ops, name)
	if err != nil {
		return nil, err
	}
	return &h, nil
}
