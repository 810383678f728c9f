package inbound

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// maxErrorLen bounds the last error kept on an inbox row.
const maxErrorLen = 2000

// OutcomeKind says how one processing run ended.
type OutcomeKind int

const (
	// OutcomeSkipped: the message was gone, done or dead; nothing ran.
	OutcomeSkipped OutcomeKind = iota + 1
	// OutcomeDone: every matched handler succeeded (or none matched).
	OutcomeDone
	// OutcomeRetry: a transient failure; try again at RetryAt.
	OutcomeRetry
	// OutcomeDead: the message is a dead letter now.
	OutcomeDead
	// OutcomeAbandoned: the run was cancelled (a shutdown) before its
	// handlers succeeded; the message is received again and the attempt is
	// not counted.
	OutcomeAbandoned
)

// finishTimeout bounds the state change that ends a run, which goes ahead
// even when the run's context was cancelled (a shutdown).
const finishTimeout = 10 * time.Second

// Outcome is the result of Processor.Process, which the River worker maps
// to nil (done, skipped), an error with a NextRetry (retry) or a cancel (dead).
type Outcome struct {
	Kind OutcomeKind
	// Attempt is the message's attempt that ran (0 when skipped).
	Attempt int
	// Handlers counts the handlers that ran.
	Handlers int
	// Err is the failure (retry, dead).
	Err error
	// RetryAt is when to try again (retry).
	RetryAt time.Time
	// Delay is RetryAt minus the time of the decision (retry).
	Delay time.Duration
}

// ProcessorDeps are what the processor is built from.
type ProcessorDeps struct {
	// Inbox changes the messages' states (outside any transaction: each
	// change is one statement).
	Inbox  InboxStates
	Router *Router
	Clock  domain.Clock
	Policy RetryPolicy
	// DeadLetters, when set, makes a message a dead letter and records
	// inbound.message.dead_lettered in one transaction.
	DeadLetters DeadLetterUnit
}

// Processor runs the handlers of one inbox message and mirrors the result on
// the row. River supplies the lease (one running job per message) and the
// retries.
type Processor struct {
	d ProcessorDeps
}

// NewProcessor builds the processor.
func NewProcessor(d ProcessorDeps) *Processor {
	if d.Clock == nil {
		d.Clock = domain.SystemClock{}
	}
	if d.Policy.MaxAttempts == 0 {
		d.Policy = DefaultRetryPolicy()
	}
	if d.Router == nil {
		d.Router = &Router{}
	}
	return &Processor{d: d}
}

// Policy returns the retry policy in force.
func (p *Processor) Policy() RetryPolicy { return p.d.Policy }

// Job is what the processor knows of the River job running it.
type Job struct {
	ID int64
	// Attempt and MaxAttempts are River's counts for this job. When River
	// would not run it again, a retry decision becomes a dead letter, so the
	// row never says "received" for a job River has given up on.
	Attempt     int
	MaxAttempts int
}

// Process runs the handlers of inbox message id. It returns an error only
// when the inbox itself cannot be read or written; handler failures are
// outcomes. A run whose context is cancelled (not timed out) before its
// handlers all succeed is abandoned: the attempt does not count.
func (p *Processor) Process(ctx context.Context, id uuid.UUID, job Job) (Outcome, error) {
	rec, ok, err := p.d.Inbox.Begin(ctx, id, job.ID, p.d.Clock.Now())
	if err != nil {
		return Outcome{}, fmt.Errorf("begin inbound message %s: %w", id, err)
	}
	if !ok {
		return Outcome{Kind: OutcomeSkipped}, nil
	}

	m := rec.message()
	var routes []Route
	for _, rt := range p.d.Router.Match(rec.SourceKind, rec.EventType) {
		if rt.When.holds(m) {
			routes = append(routes, rt)
		}
	}
	failure, failed := p.runHandlers(ctx, m, routes)
	now := p.d.Clock.Now()
	out := Outcome{Attempt: rec.Attempts, Handlers: len(routes)}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if !failed {
		out.Kind = OutcomeDone
		err = p.d.Inbox.MarkDone(fctx, id, now)
		if err != nil {
			return Outcome{}, fmt.Errorf("mark inbound message %s done: %w", id, err)
		}
		return out, nil
	}

	out.Err = failure.Err
	if errors.Is(ctx.Err(), context.Canceled) {
		out.Kind = OutcomeAbandoned
		if err := p.d.Inbox.Abandon(fctx, id); err != nil {
			return Outcome{}, fmt.Errorf("abandon inbound message %s: %w", id, err)
		}
		return out, nil
	}
	d := p.d.Policy.Decide(rec.Attempts, failure, now)
	lastJobRun := job.MaxAttempts > 0 && job.Attempt >= job.MaxAttempts
	if d.DeadLetter || lastJobRun {
		out.Kind = OutcomeDead
		err = p.markDead(fctx, m, errorText(failure.Err), now)
		if err != nil {
			return Outcome{}, fmt.Errorf("mark inbound message %s dead: %w", id, err)
		}
		return out, nil
	}
	out.Kind, out.RetryAt, out.Delay = OutcomeRetry, d.RetryAt, d.Delay
	err = p.d.Inbox.MarkRetry(fctx, id, errorText(failure.Err), now, d.RetryAt)
	if err != nil {
		return Outcome{}, fmt.Errorf("mark inbound message %s for retry: %w", id, err)
	}
	return out, nil
}

// runHandlers runs every route's handler, even after one fails (each is
// idempotent, and running the rest now spares them a retry). Several
// failures combine: permanent if any is, with the longest hint.
func (p *Processor) runHandlers(ctx context.Context, m Message, routes []Route) (Failure, bool) {
	var errs []error
	combined := Failure{Transient: true}
	for _, rt := range routes {
		err := callHandler(ctx, rt.Handler, m)
		if err == nil {
			continue
		}
		f := Classify(err)
		if !f.Transient {
			combined.Transient = false
		}
		combined.RetryAfter = max(combined.RetryAfter, f.RetryAfter)
		errs = append(errs, fmt.Errorf("%s: %w", rt.Name, err))
	}
	if len(errs) == 0 {
		return Failure{}, false
	}
	combined.Err = errors.Join(errs...)
	return combined, true
}

// callHandler turns a panic into a transient failure.
func callHandler(ctx context.Context, h Handler, m Message) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError(v)
		}
	}()
	return h.HandleInbound(ctx, m)
}

// errorText makes err storable: one line of valid UTF-8 without NUL (which
// PostgreSQL text refuses), cut at a rune boundary.
func errorText(err error) string {
	return cleanText(strings.ReplaceAll(err.Error(), "\n", "; "), maxErrorLen)
}

// cleanText makes s valid UTF-8 without NUL and cuts it at limit bytes on a
// rune boundary (0: no limit).
func cleanText(s string, limit int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if limit <= 0 || len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
