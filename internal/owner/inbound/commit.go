package inbound

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// Group commit: requests that arrive while a batch is being written wait and
// go together in the next one, so at load many requests share one
// transaction (and one WAL flush), and alone a request goes at once.
const (
	// maxBatch bounds the admissions of one transaction.
	maxBatch = 128
	// maxFlushes bounds the transactions in flight from one gateway.
	maxFlushes = 2
	// flushTimeout bounds one batch's transaction, whatever happens to the
	// requests waiting for it.
	flushTimeout = 15 * time.Second
)

// pending is one admission waiting for its batch.
type pending struct {
	a Admission
	// wake is signalled when the admission is done or must lead a batch.
	wake chan struct{}
	// Set under committer.mu before wake is signalled.
	done bool
	lead bool
	res  Admitted
	err  error
}

// committer batches admissions into Admitter.Admit calls.
type committer struct {
	inbox Admitter
	mu    sync.Mutex
	queue []*pending
	// active counts the flushes running or handed to a waiter.
	active int
}

// admit writes a and returns its result once its batch has committed.
func (c *committer) admit(ctx context.Context, a Admission) (Admitted, error) {
	p := &pending{a: a, wake: make(chan struct{}, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, p)
	if c.active < maxFlushes {
		c.active++
		p.lead = true
	}
	c.mu.Unlock()
	for {
		c.mu.Lock()
		lead, done := p.lead, p.done
		p.lead = false
		if done && lead {
			// Handed the lead after its own batch had committed: pass it on.
			c.handOffLocked()
		}
		c.mu.Unlock()
		switch {
		case done:
			return p.res, p.err
		case lead:
			c.flush(ctx)
		default:
			<-p.wake
		}
	}
}

// flush writes the next batch from the queue, then hands the lead to the
// first admission still waiting, or ends this flush.
func (c *committer) flush(ctx context.Context) {
	c.mu.Lock()
	n := min(len(c.queue), maxBatch)
	batch := c.queue[:n:n]
	c.queue = c.queue[n:]
	c.mu.Unlock()

	if len(batch) > 0 {
		in := make([]Admission, 0, len(batch))
		var later []*pending
		keys := make(map[batchKey]bool, len(batch))
		run := batch[:0:0]
		for _, p := range batch {
			k1, k2, has2 := keysOf(p.a.Envelope)
			if keys[k1] || (has2 && keys[k2]) {
				later = append(later, p) // same message twice: the next batch decides
				continue
			}
			keys[k1] = true
			if has2 {
				keys[k2] = true
			}
			in = append(in, p.a)
			run = append(run, p)
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		res, err := c.inbox.Admit(fctx, in, func(ctx context.Context, tx AdmitTx, res []Admitted) error {
			return recordReceived(ctx, tx, in, res)
		})
		cancel()
		c.mu.Lock()
		c.queue = append(later, c.queue...)
		for i, p := range run {
			p.done, p.err = true, err
			if err == nil {
				p.res = res[i]
			}
			signal(p.wake)
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	c.handOffLocked()
	c.mu.Unlock()
}

// handOffLocked gives the lead to the first waiting admission, or ends the
// flush when none waits.
func (c *committer) handOffLocked() {
	for _, p := range c.queue {
		if !p.done && !p.lead {
			p.lead = true
			signal(p.wake)
			return
		}
	}
	c.active--
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// batchKey is a uniqueness key of the inbox: (source, message id), or
// (source, body digest) for an unsigned id.
type batchKey struct {
	source [16]byte
	kind   byte
	value  string
}

func keysOf(e Envelope) (batchKey, batchKey, bool) {
	k1 := batchKey{source: e.SourceID, kind: 'm', value: e.MessageID}
	if e.MessageIDSigned {
		return k1, batchKey{}, false
	}
	return k1, batchKey{source: e.SourceID, kind: 'd', value: string(e.Digest[:])}, true
}

// ReceivedSubject is the subject of the inbound.message.received event of a
// message of the source: the source.
func ReceivedSubject(sourceID uuid.UUID) string { return "inbound:" + sourceID.String() }

// recordReceived records inbound.message.received for each accepted
// admission of the batch whose source records events (thin: the source,
// the inbox message, the provider's event type where the kind carries one,
// the time it was received); a duplicate or a conflict records none.
// Without a Recorder the inbox records no events.
func recordReceived(ctx context.Context, tx AdmitTx, in []Admission, res []Admitted) error {
	rec := tx.Recorder()
	if rec == nil {
		return nil
	}
	for i, r := range res {
		if r.Status != Accepted || !in[i].RecordEvent {
			continue
		}
		e := in[i].Envelope
		data := map[string]any{"source_id": e.SourceID, "message_id": r.ID, "received_at": e.ReceivedAt.UTC()}
		if e.EventType != "" {
			data["provider_type"] = e.EventType
		}
		if _, err := rec.Record(ctx, e.OwnerID, domain.EventInboundMessageReceived, ReceivedSubject(e.SourceID), data); err != nil {
			return fmt.Errorf("record the receipt of inbound message %s: %w", r.ID, err)
		}
	}
	return nil
}
