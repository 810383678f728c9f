package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/entity"
)

// ErrGone is returned (wrapped) by the stores when the event or the endpoint
// a job names no longer exists: the event was pruned by retention, the
// endpoint was deleted. A delivery whose event or endpoint is gone is
// discarded, never retried.
var ErrGone = errors.New("gone")

// ErrBlocked is returned (wrapped) by a Poster when the egress policy refused
// the target (a private, loopback or link-local address, a URL with
// credentials, a non-HTTP scheme). Such a delivery is discarded at once: the
// answer would be the same on every retry.
var ErrBlocked = errors.New("egress blocked")

// ErrTimeout is returned (wrapped) by a Poster when the receiver did not
// answer within the HTTP timeout. It is retried like a 5xx.
var ErrTimeout = errors.New("receiver timed out")

// UnsealFunc opens a sealed endpoint secret. The associated data is the
// endpoint id's 16 bytes, so a sealed secret copied to another row does not
// open. Only the composition root (cmd/server/unseal.go) builds one.
type UnsealFunc func(sealed, associatedData []byte) ([]byte, error)

// EmbedAdmitsFunc asks the access domain whether the embed admits a corpus
// entry under its access code's scope right now (asked on every event,
// since a code can be revoked or re-scoped at any time). A revoked or
// expired code, or a deleted embed, admits nothing.
type EmbedAdmitsFunc func(ctx context.Context, embedID uuid.UUID, entry entity.CorpusEntry) (bool, error)

// Event is an event row as the webhook subscriber reads it.
type Event struct {
	ID         uuid.UUID
	OwnerID    uuid.UUID
	Type       string
	Subject    string
	OccurredAt time.Time
	// Data is the event's JSON object, as stored.
	Data json.RawMessage
}

// Endpoint is a webhook endpoint as fan-out and delivery need it.
type Endpoint struct {
	ID         uuid.UUID
	OwnerID    uuid.UUID
	URL        string
	EventTypes []string
	EmbedID    *uuid.UUID
	Headers    map[string]string
	// MaxInFlight is how many deliveries may be in flight at once (1..8).
	MaxInFlight int
	// TimeoutSeconds bounds one POST (1..10; 0 means HTTPTimeout) and
	// MaxAttempts is how many attempts a delivery gets (1..MaxAttempts; 0
	// means MaxAttempts).
	TimeoutSeconds int
	MaxAttempts    int
	Enabled        bool
	// FailingSince is the first failure of the endpoint's failing streak
	// (nil: not failing), FailedAt the latest one written (see
	// Finish.Cooldown).
	FailingSince, FailedAt *time.Time
	// SecretSealed is the current signing secret, sealed. PrevSecretSealed
	// is the one before a rotation, valid until PrevSecretUntil.
	SecretSealed     []byte
	PrevSecretSealed []byte
	PrevSecretUntil  *time.Time
	// Filter is the endpoint's payload filter as stored (JSON text; empty:
	// none), evaluated by the fan-out on the thin event.
	Filter json.RawMessage
	// RatePerSecond is how many deliveries may start per second across
	// every replica (0: no limit), RateBurst how many at once.
	RatePerSecond, RateBurst int
}

// Timeout is the endpoint's POST deadline: TimeoutSeconds, else (unset or
// out of range) HTTPTimeout.
func (e Endpoint) Timeout() time.Duration {
	if e.TimeoutSeconds < 1 || time.Duration(e.TimeoutSeconds)*time.Second > HTTPTimeout {
		return HTTPTimeout
	}
	return time.Duration(e.TimeoutSeconds) * time.Second
}

// Attempts is how many attempts a delivery to the endpoint gets:
// MaxAttempts, else (unset or out of range) the package's MaxAttempts.
func (e Endpoint) Attempts() int {
	if e.MaxAttempts < 1 || e.MaxAttempts > MaxAttempts {
		return MaxAttempts
	}
	return e.MaxAttempts
}

// Delivery is one webhook.deliver job to insert: an event for an endpoint,
// at ScheduledAt (zero = now).
type Delivery struct {
	EndpointID  uuid.UUID
	EventID     uuid.UUID
	ScheduledAt time.Time
	// Wait says why a delivery with a ScheduledAt waits (ReasonCoolingDown),
	// recorded with the job so the delivery log can say it.
	Wait Reason
}

// Reason says why an endpoint got no delivery of an event, or got it
// late.
type Reason string

// The reasons of a fan-out summary.
const (
	// ReasonNotSubscribed: none of the endpoint's globs matches the type.
	ReasonNotSubscribed Reason = "not_subscribed"
	// ReasonRaw: a raw:// note never leaves the instance.
	ReasonRaw Reason = "out_of_scope_raw"
	// ReasonUnpublished: a standalone endpoint hears published notes only.
	ReasonUnpublished Reason = "out_of_scope_unpublished"
	// ReasonEmbedCode: the embed's access code does not admit the note.
	ReasonEmbedCode Reason = "out_of_scope_embed"
	// ReasonOutOfScope: a note event that is not provably in scope.
	ReasonOutOfScope Reason = "out_of_scope"
	// ReasonDisabled: the endpoint was disabled.
	ReasonDisabled Reason = "endpoint_disabled"
	// ReasonCoolingDown: the endpoint is failing, so its delivery was
	// queued to start at the end of the cooldown (Summary.Until) rather
	// than now. It did get a delivery.
	ReasonCoolingDown Reason = "cooling_down"
	// ReasonFilteredOut: the endpoint's payload filter refused the event.
	ReasonFilteredOut Reason = "filtered_out"
)

// Summary is a fan-out's compact account of the endpoints that got no
// delivery of one event, by reason, and of those whose delivery waits out
// a cooldown, until when. Deleted endpoints are not in it. It is one row
// per event, however many endpoints.
type Summary struct {
	EventID uuid.UUID `json:"-"`
	// Reasons maps each reason to its endpoints.
	Reasons map[Reason][]uuid.UUID `json:"reasons"`
	// Until is when the cooling-down deliveries start.
	Until *time.Time `json:"until,omitempty"`
}

// Add records that endpoint id got reason.
func (s *Summary) Add(r Reason, id uuid.UUID) {
	if s.Reasons == nil {
		s.Reasons = map[Reason][]uuid.UUID{}
	}
	s.Reasons[r] = append(s.Reasons[r], id)
}

// Empty reports whether there is nothing to record: every endpoint got
// its delivery now.
func (s Summary) Empty() bool { return len(s.Reasons) == 0 }

// Enqueued is what Enqueue did with one delivery.
type Enqueued struct {
	JobID int64
	// Duplicate is true when the job existed already and nothing was
	// inserted.
	Duplicate bool
}

// FanoutStore is what webhook.fanout needs from storage.
type FanoutStore interface {
	// Event loads an event; ErrGone when it was pruned.
	Event(ctx context.Context, id uuid.UUID) (Event, error)
	// Endpoints lists the owner's endpoints, enabled or disabled, but not
	// the deleted ones (secrets may be left out).
	Endpoints(ctx context.Context, ownerID uuid.UUID) ([]Endpoint, error)
	// Enqueue inserts one webhook.deliver job per delivery and records the
	// event's fan-out summary (when it is not empty), in one transaction,
	// and returns what became of each delivery, in order. Jobs are
	// unique by (endpoint, event): a delivery already queued, running or
	// completed is skipped (Duplicate), so a fan-out that runs twice queues
	// nothing new. A delivery without a ScheduledAt is available at once.
	Enqueue(ctx context.Context, ds []Delivery, sum Summary) ([]Enqueued, error)
}

// Lease is one held slot of an endpoint's in-flight lease.
type Lease struct {
	EndpointID uuid.UUID
	Slot       int
	// Token identifies this holder: only it can release the slot, so a
	// holder whose lease expired cannot release its successor's.
	Token uuid.UUID
	// Written is when the slot was taken and the endpoint read with it, by
	// the deliverer's wall clock. A lease passes from delivery to delivery
	// in process only while this is younger than LeaseRefresh; then it goes
	// back to PostgreSQL.
	Written time.Time
}

// Claim is the answer to TakeLease: the endpoint and the event as they are
// now and, when a slot was free, the lease on it.
type Claim struct {
	Endpoint Endpoint
	// Event is nil when the event is gone (pruned).
	Event *Event
	// Lease is nil when every slot is busy, or when there is nothing to
	// deliver (endpoint disabled, event gone): no lease is taken then.
	Lease *Lease
}

// Outcome is how one delivery run ended, as recorded in the delivery log.
type Outcome string

// The outcomes of a run. They name River's resulting job state.
const (
	OutcomeCompleted Outcome = "completed"
	OutcomeRetryable Outcome = "retryable"
	OutcomeSnoozed   Outcome = "snoozed"
	OutcomeDiscarded Outcome = "discarded"
)

// Attempt is one row of the delivery log: what one run did.
type Attempt struct {
	JobID      int64
	EndpointID uuid.UUID
	EventID    uuid.UUID
	Attempt    int
	Outcome    Outcome
	// StatusCode is the receiver's HTTP status, 0 when there was none.
	StatusCode int
	// Latency is the time from sending the request to the end of the
	// response (0 when nothing was sent).
	Latency time.Duration
	// Response is the start of the response body (at most
	// ResponseExcerptBytes, valid UTF-8).
	Response string
	// Error says what went wrong, "" on success.
	Error string
	// Location is the Location header of a 3xx.
	Location string
	// Timestamp and Signature are the webhook-timestamp and
	// webhook-signature header values the attempt sent (the signatures,
	// never the secret); "" when no request was sent.
	Timestamp string
	Signature string
	At        time.Time
}

// Settle says what a run does to the endpoint's failure state.
type Settle int

// Settlements.
const (
	// SettleNone leaves the endpoint alone (the run never reached the
	// receiver for reasons of our own: event pruned, out of scope).
	SettleNone Settle = iota
	// SettleSuccess clears failing_since.
	SettleSuccess
	// SettleFailure sets failing_since if unset and disables the endpoint
	// when it has been failing for DisableAfter.
	SettleFailure
)

// Finish is everything a run writes when it ends, in one statement: record
// the attempt, settle the endpoint and release the lease.
type Finish struct {
	// EndpointID is the endpoint of the run.
	EndpointID uuid.UUID
	// Lease is released when set.
	Lease *Lease
	// Attempt is recorded when set.
	Attempt *Attempt
	Settle  Settle
	// Now is the time of the settlement.
	Now time.Time
	// DisableAfter and DisableReason apply to SettleFailure: an endpoint
	// failing since at least Now-DisableAfter is disabled with the reason.
	DisableAfter  time.Duration
	DisableReason string
	// Cooldown applies to SettleFailure: the failure becomes the
	// endpoint's FailedAt while its streak is younger than CooldownAfter
	// (each failure), and, when Cooldown is above 0, again once FailedAt
	// is Cooldown or more before Now (the probe after a cooldown re-arms
	// it), so a down endpoint's row is written once per Cooldown.
	Cooldown time.Duration
}

// Settled reports what Finish did.
type Settled struct {
	// Disabled is true when this failure disabled the endpoint.
	Disabled bool
}

// DeliverStore is what webhook.deliver needs from storage.
type DeliverStore interface {
	// TakeLease reads the endpoint and the event and, when the endpoint is
	// enabled, the event exists and one of the endpoint's first
	// MaxInFlight slots is free (busy_until passed), takes that slot until
	// now+ttl with token, in one atomic UPDATE … RETURNING: one round trip,
	// and no transaction is held afterwards. A deleted endpoint is kept,
	// disabled for good, until the retention purges it: its claim is that
	// of a disabled endpoint (no lease); ErrGone when no endpoint has the id
	// (purged).
	TakeLease(ctx context.Context, endpointID, eventID, token uuid.UUID, ttl time.Duration) (Claim, error)
	// Event loads an event; ErrGone when retention pruned it. A delivery
	// that waits for a lease held in its own process, or for the cooldown
	// of an endpoint found down there, reads its event so instead of
	// through TakeLease.
	Event(ctx context.Context, id uuid.UUID) (Event, error)
	// Finish records, settles and releases atomically, in one statement
	// (see Finish). A success on an endpoint that is not failing writes
	// nothing to the endpoint.
	Finish(ctx context.Context, f Finish) (Settled, error)
	// Wake makes the deliveries among jobs that are snoozed (due later)
	// available now, through River, and returns how many it woke, and
	// those of jobs River still shows running (a run that has returned its
	// snooze but whose outcome River has not recorded yet, or one running
	// again). A job in any other state — running, finished, gone — is left
	// as it is, by the same transaction that reads its state, so a
	// delivery that came back on its own meanwhile never runs twice.
	Wake(ctx context.Context, jobs []int64) (woken int, running []int64, err error)
	// AttemptOutcome returns the outcome Finish recorded for attempt of
	// job; ok is false when none was recorded.
	AttemptOutcome(ctx context.Context, jobID int64, attempt int) (o Outcome, ok bool, err error)
	// ReserveRate reserves a start of a delivery to the endpoint under its
	// rate limit (perSecond, burst; the generic cell rate algorithm over
	// one timestamp of the endpoint's, shared by every replica) and says
	// how long to wait before starting. When that wait would exceed
	// maxWait nothing is reserved (reserved false) and wait is how long
	// until a start fits. ErrGone when the endpoint was purged.
	ReserveRate(ctx context.Context, endpointID uuid.UUID, perSecond, burst int, maxWait time.Duration) (wait time.Duration, reserved bool, err error)
}

// PostRequest is one HTTP POST to a receiver.
type PostRequest struct {
	URL    string
	Header domain.Header
	Body   []byte
	// Timeout bounds the exchange, connect to last body byte (the
	// endpoint's setting); zero leaves the Poster's own bound.
	Timeout time.Duration
}

// PostResponse is what came back. Latency is set even when Post fails.
type PostResponse struct {
	StatusCode int
	Header     domain.Header
	// Body is the response body, read up to MaxResponseBytes.
	Body    []byte
	Latency time.Duration
}

// Poster sends a delivery. Implementations go through the SSRF-guarded
// client, never retry, never follow redirects, bound the exchange by the
// HTTP timeout and read at most MaxResponseBytes of the body. Errors wrap
// ErrBlocked or ErrTimeout where they apply; anything else is a connection
// failure.
type Poster interface {
	Post(ctx context.Context, req PostRequest) (PostResponse, error)
}
