package inbound

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
)

// Refusal bookkeeping: what the owner sees of the requests a source refused
// (bad signature, stale, too large, disabled…). Refusals are kept briefly
// and bounded, without bodies, and are written in the background, so the
// accepted path never pays for them and a flood of bad requests costs at
// most one write a second.
const (
	// RefusalsKept is how many refusals a source keeps, newest first.
	RefusalsKept = 100
	// RefusalRetention is how long a refusal is kept.
	RefusalRetention = 24 * time.Hour
	// RefusalFlushInterval is how often refusals are written.
	RefusalFlushInterval = time.Second
	// refusalBuffer bounds the refusals waiting for a write; more are
	// counted as dropped.
	refusalBuffer = 1000
	// ReasonSourceDisabled is the reason of a request to a disabled source
	// (the sender sees INBOUND_SOURCE_NOT_FOUND).
	ReasonSourceDisabled = "INBOUND_SOURCE_DISABLED"
)

// Refusal is one request a source refused.
type Refusal struct {
	OwnerID  uuid.UUID
	SourceID uuid.UUID
	At       time.Time
	// Reason is the error code the sender got (WEBHOOK_SIGNATURE_INVALID…),
	// or ReasonSourceDisabled.
	Reason string
	// Detail is the error message the sender got.
	Detail string
}

// RefusalStore keeps refusals.
type RefusalStore interface {
	// AddRefusals stores refusals and trims each of their sources to its
	// RefusalsKept newest.
	AddRefusals(ctx context.Context, rs []Refusal) error
	// ListRefusals returns up to limit of the source's refusals, newest
	// first.
	ListRefusals(ctx context.Context, ownerID, sourceID uuid.UUID, limit int) ([]Refusal, error)
	// PurgeRefusals deletes the refusals older than before.
	PurgeRefusals(ctx context.Context, before time.Time) (int64, error)
}

// RefusalLog buffers refusals and writes them in the background. It is safe
// for concurrent use.
type RefusalLog struct {
	store   RefusalStore
	onError func(error)
	mu      sync.Mutex
	buf     []Refusal
	dropped int64
}

// NewRefusalLog returns a log writing to store; onError (may be nil) hears
// of a failed write, whose refusals are lost (they are diagnostics).
func NewRefusalLog(store RefusalStore, onError func(error)) *RefusalLog {
	if onError == nil {
		onError = func(error) {}
	}
	return &RefusalLog{store: store, onError: onError}
}

// Add queues a refusal of a known source (one without an owner is not
// kept); it never blocks, and drops the refusal when the buffer is full.
func (l *RefusalLog) Add(r Refusal) {
	if r.OwnerID == uuid.Nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) >= refusalBuffer {
		l.dropped++
		return
	}
	l.buf = append(l.buf, r)
}

// Dropped returns how many refusals were dropped for a full buffer.
func (l *RefusalLog) Dropped() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}

// Flush writes the refusals queued.
func (l *RefusalLog) Flush(ctx context.Context) error {
	l.mu.Lock()
	rs := l.buf
	l.buf = nil
	l.mu.Unlock()
	if len(rs) == 0 {
		return nil
	}
	return l.store.AddRefusals(ctx, rs)
}

// Run flushes every RefusalFlushInterval until ctx ends, then once more.
func (l *RefusalLog) Run(ctx context.Context) error {
	t := time.NewTicker(RefusalFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			return l.Flush(fctx)
		case <-t.C:
			if err := l.Flush(ctx); err != nil {
				l.onError(err)
			}
		}
	}
}

// RefusalView is a refused request as the admin surfaces show it.
type RefusalView struct {
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
	Detail string    `json:"detail"`
}

// RefusalList is the answer of inbound_sources.refusals.
type RefusalList struct {
	Data []RefusalView `json:"data"`
}
