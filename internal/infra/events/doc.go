// Package events is the infrastructure of the event bus: the
// Recorder that writes an event in the caller's transaction, the relay that
// fans committed events out to River jobs, the retention job that prunes old
// events, the queries behind the poisoned-event admin ops, and the bus's
// Prometheus metrics.
//
// The package imports no domain package. The event catalog reaches it as a
// function (NewRecorder's isDeclared) and subscriptions as plain data
// (Subscription, whose event types the composition root has already expanded
// from globs), so the bus can be reused and tested without any domain.
//
// Delivery guarantees: an event exists only if its transaction commits; the
// relay inserts one River job per matching subscription in the same
// transaction that marks the event fanned out, so each event reaches each
// subscriber's queue exactly once, however many relays run. From there River
// gives at-least-once execution, so workers are idempotent.
package events
