package inbound

import (
	"context"
	"fmt"
	"time"

	"github.com/standmeet/standmeet/internal/domain"
)

// DeadLetterTx is the transaction in which a message becomes a dead letter:
// its state change and the event that tells the owner.
type DeadLetterTx interface {
	Inbox() InboxStates
	Recorder() domain.Recorder
}

// DeadLetterUnit runs fn in one transaction, committed when fn returns nil.
type DeadLetterUnit interface {
	Do(ctx context.Context, fn func(tx DeadLetterTx) error) error
}

// DeadLetterSubject is the subject of the inbound.message.dead_lettered
// event of m: its source.
func DeadLetterSubject(m Message) string { return "inbound:" + m.SourceID.String() }

// markDead makes m a dead letter. With a DeadLetterUnit the change and its
// inbound.message.dead_lettered event (thin: the source, the message and
// its attempts; the body and the error stay inside) commit together;
// without one the change is made alone.
func (p *Processor) markDead(ctx context.Context, m Message, lastError string, now time.Time) error {
	if p.d.DeadLetters == nil {
		return p.d.Inbox.MarkDead(ctx, m.ID, lastError, now)
	}
	err := p.d.DeadLetters.Do(ctx, func(tx DeadLetterTx) error {
		if err := tx.Inbox().MarkDead(ctx, m.ID, lastError, now); err != nil {
			return err
		}
		_, err := tx.Recorder().Record(ctx, m.OwnerID, domain.EventInboundMessageDeadLettered, DeadLetterSubject(m),
			map[string]any{"source_id": m.SourceID, "message_id": m.ID, "attempts": m.Attempt})
		return err
	})
	if err != nil {
		return fmt.Errorf("dead-letter inbound message %s: %w", m.ID, err)
	}
	return nil
}
