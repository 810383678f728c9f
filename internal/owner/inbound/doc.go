// Package inbound receives webhooks from outside services and processes them
// like the instance's own jobs: durably, with retries and dead letters, on
// PostgreSQL and River (docs/design/origins.md names the pipeline it follows).
//
// # The pipeline
//
//	POST /hooks/{source_id}
//	  → Gateway.Receive: source (404 unknown or disabled) → body limit (413)
//	    → verify (verifier package: 401 signature, 400 malformed or stale)
//	    → one transaction: replay store registration, idempotent inbox insert,
//	      processing job enqueued when a route can want the message (the
//	      Router says which, the inbox answers its conditions in the same
//	      statement; any other message is written done) → 202 new / 200
//	      duplicate / 409 same id with
//	      another payload (only where the id is the sender's choice: a
//	      provider's stable event id resent with another body is a duplicate)
//	  → Processor.Process (the River worker): the inbox row is marked
//	    processing, every Handler routed to the source's kind and the
//	    message's event type runs, and the outcome is mirrored on the row:
//	    done, received again with the next attempt's time, or dead.
//	  → dead letters are listed per source and replayed one by one or all at
//	    once, optionally with their attempts reset (Service).
//
// # Guarantees
//
// A 2xx answer means the message and, when a route can want it, its
// processing job are committed together, so nothing accepted is lost. Delivery to handlers is at least
// once: River may run a job twice (a crash between the handler and the
// completion), so every Handler must be idempotent. Duplicates of an accepted
// message (same source and message id, or for kinds whose id is not signed,
// same body) are answered 200 and processed nothing again; the uniqueness is
// held by the inbox table itself, so it outlives River's job retention. A
// processed message is kept for the retention (STANDMEET_EVENT_RETENTION,
// 30 days) and then deleted by the periodic upkeep (Service.Maintain), so
// the inbox does not grow without bound; senders retry for days, not
// weeks. Dead letters and unprocessed messages are never deleted by age.
//
// # Retries
//
// River owns the retries; RetryPolicy only decides them: 5 attempts, 5 s
// initial delay doubling up to 1 h, a handler's Retry-After hint wins when it
// is longer, and a failure the handler marks Permanent goes to the dead letters
// at once without spending the remaining attempts.
package inbound
