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

// ErrGone is returned (wrapped) by the stores when the event (pruned) or the
// endpoint (purged) no longer exists: the delivery is discarded, not retried.
var ErrGone = errors.New("gone")

// ErrBlocked is returned (wrapped) by a Poster when the egress policy refused
// the target: the delivery is discarded at once, as every retry would be.
var ErrBlocked = errors.New("egress blocked")

// ErrTimeout is returned (wrapped) by a Poster when the receiver did not
// answer within the HTTP timeout. It is retried like a 5xx.
var ErrTimeout = errors.New("receiver timed out")

// UnsealFunc opens a sealed endpoint secret. The associated data is the
// endpoint id's 16 bytes, so a sealed secret copied to another row does not
// open. Only the composition root (cmd/server/unseal.go) builds one.
type UnsealFunc func(sealed, associatedData []byte) ([]byte, error)

// EmbedAdmitsFunc asks the access domain whether the embed's access code
// admits a corpus entry now. A revoked or expired code, or a deleted embed,
// admits nothing.
type EmbedAdmitsFunc func(ctx context.Context, embedID uuid.UUID, entry entity.CorpusEntry) (bool, error)

// Event is an event row as the webhook subscriber reads it.
type Event struct {
	ID         uuid.UUID
	OwnerID    uuid.UUID
	Type       string
	Subject    string
	OccurredAt time.Time
	Data       json.RawMessage // the event's JSON object, as stored
}

// Endpoint is a webhook endpoint as fan-out and delivery need it.
type Endpoint struct {
	ID             uuid.UUID
	OwnerID        uuid.UUID
	URL            string
	EventTypes     []string
	EmbedID        *uuid.UUID
	Headers        map[string]string
	MaxInFlight    int // deliveries in flight at once (1..8)
	TimeoutSeconds int // bound of one POST (1..10; 0: HTTPTimeout)
	MaxAttempts    int // attempts per delivery (1..MaxAttempts; 0: MaxAttempts)
	Enabled        bool
	// FailingSince is the first failure of the current failing streak (nil:
	// not failing), FailedAt the latest one written (see Finish.Cooldown).
	FailingSince, FailedAt *time.Time
	SecretSealed           []byte // the current signing secret, sealed
	PrevSecretSealed       []byte // the secret before a rotation, valid until PrevSecretUntil
	PrevSecretUntil        *time.Time
	Filter                 json.RawMessage // the payload filter as stored (empty: none)
	// RatePerSecond is how many deliveries may start per second across every
	// replica (0: no limit), RateBurst how many at once.
	RatePerSecond, RateBurst int
}

// Timeout is TimeoutSeconds as a POST deadline, HTTPTimeout when out of range.
func (e Endpoint) Timeout() time.Duration {
	if e.TimeoutSeconds < 1 || time.Duration(e.TimeoutSeconds)*time.Second > HTTPTimeout {
		return HTTPTimeout
	}
	return time.Duration(e.TimeoutSeconds) * time.Second
}

// Attempts is the endpoint's attempts per delivery: its MaxAttempts, the
// package's when out of range.
func (e Endpoint) Attempts() int {
	if e.MaxAttempts < 1 || e.MaxAttempts > MaxAttempts {
		return MaxAttempts
	}
	return e.MaxAttempts
}

// Delivery is one webhook.deliver job to insert: an event for an endpoint,
// at ScheduledAt (zero: now).
type Delivery struct {
	EndpointID  uuid.UUID
	EventID     uuid.UUID
	ScheduledAt time.Time
	Wait        Reason // why it waits for ScheduledAt (ReasonCoolingDown), for the delivery log
}

// Reason says why an endpoint got no delivery of an event, or got it late.
type Reason string

// The reasons of a fan-out summary.
const (
	ReasonNotSubscribed Reason = "not_subscribed"           // none of the endpoint's globs matches
	ReasonRaw           Reason = "out_of_scope_raw"         // a raw:// note never leaves the instance
	ReasonUnpublished   Reason = "out_of_scope_unpublished" // a standalone endpoint hears published notes
	ReasonEmbedCode     Reason = "out_of_scope_embed"       // the embed's code does not admit it
	ReasonOutOfScope    Reason = "out_of_scope"             // a note event not provably in scope
	ReasonDisabled      Reason = "endpoint_disabled"        // the endpoint was disabled
	// ReasonCoolingDown: the endpoint is down, so its delivery starts at the
	// end of the cooldown (Summary.Until) rather than now. It did get one.
	ReasonCoolingDown Reason = "cooling_down"
	ReasonFilteredOut Reason = "filtered_out" // the endpoint's payload filter refused it
)

// Summary is a fan-out's one row per event: the owner's endpoints (not deleted)
// that got no delivery, or got one that waits out a cooldown, by reason.
type Summary struct {
	EventID uuid.UUID              `json:"-"`
	Reasons map[Reason][]uuid.UUID `json:"reasons"`
	Until   *time.Time             `json:"until,omitempty"` // when the cooling-down deliveries start
}

// Add records that endpoint id got reason.
func (s *Summary) Add(r Reason, id uuid.UUID) {
	if s.Reasons == nil {
		s.Reasons = map[Reason][]uuid.UUID{}
	}
	s.Reasons[r] = append(s.Reasons[r], id)
}

// Empty reports whether there is nothing to record: every endpoint got its
// delivery now.
func (s Summary) Empty() bool { return len(s.Reasons) == 0 }

// Enqueued is what Enqueue did with one delivery.
type Enqueued struct {
	JobID     int64
	Duplicate bool // the job existed already and nothing was inserted
}

// FanoutStore is what webhook.fanout needs from storage.
type FanoutStore interface {
	// Event loads an event; ErrGone when it was pruned.
	Event(ctx context.Context, id uuid.UUID) (Event, error)
	// Endpoints lists the owner's endpoints, enabled or disabled, but not
	// the deleted ones (secrets may be left out).
	Endpoints(ctx context.Context, ownerID uuid.UUID) ([]Endpoint, error)
	// Enqueue inserts one webhook.deliver job per delivery and records a
	// non-empty summary, in one transaction, and returns what became of each
	// delivery, in order: one whose (endpoint, event) has a job in any state
	// is skipped (Duplicate), so a fan-out that runs twice queues nothing new.
	Enqueue(ctx context.Context, ds []Delivery, sum Summary) ([]Enqueued, error)
}

// Lease is one held slot of an endpoint's in-flight lease.
type Lease struct {
	EndpointID uuid.UUID
	Slot       int
	// Token identifies this holder: only it can release the slot, so a holder
	// whose lease expired cannot release its successor's.
	Token uuid.UUID
	// Written is when the slot was taken (wall clock); the lease passes in
	// process only while it is younger than LeaseRefresh.
	Written time.Time
}

// Claim is the answer to TakeLease: the endpoint and the event as they are
// now and, when a slot was free, the lease on it.
type Claim struct {
	Endpoint Endpoint
	Event    *Event // nil when the event is gone (pruned)
	Lease    *Lease // nil when every slot is busy or there is nothing to deliver
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
	StatusCode int           // the receiver's HTTP status, 0 when there was none
	Latency    time.Duration // from sending the request to the end of the response (0: nothing sent)
	Response   string        // the start of the response body (≤ ResponseExcerptBytes, valid UTF-8)
	Error      string        // what went wrong, "" on success
	Location   string        // the Location header of a 3xx
	// Timestamp and Signature are the webhook-timestamp and webhook-signature
	// values sent (never the secret); "" when no request was sent.
	Timestamp string
	Signature string
	At        time.Time
}

// Settle says what a run does to the endpoint's failure state.
type Settle int

// Settlements.
const (
	SettleNone    Settle = iota // leaves the endpoint alone (pruned, out of scope: our reasons)
	SettleSuccess               // clears failing_since
	SettleFailure               // sets failing_since if unset; disables after DisableAfter of failing
)

// Finish is everything a run writes when it ends, in one statement: record
// the attempt, settle the endpoint and release the lease.
type Finish struct {
	EndpointID uuid.UUID
	Lease      *Lease   // released when set
	Attempt    *Attempt // recorded when set
	Settle     Settle
	Now        time.Time // the time of the settlement
	// DisableAfter and DisableReason apply to SettleFailure: an endpoint
	// failing since Now-DisableAfter or before is disabled with the reason.
	DisableAfter  time.Duration
	DisableReason string
	// Cooldown applies to SettleFailure: the failure becomes FailedAt while the
	// streak is younger than CooldownAfter and, if Cooldown > 0, once FailedAt
	// is Cooldown old (the probe re-arms it): once per Cooldown when down.
	Cooldown time.Duration
}

// Settled reports what Finish did.
type Settled struct {
	Disabled bool // this failure disabled the endpoint
}

// DeliverStore is what webhook.deliver needs from storage.
type DeliverStore interface {
	// TakeLease reads the endpoint and the event and, for an enabled endpoint
	// and a live event, takes a free one of its first MaxInFlight slots until
	// now+ttl with token, in one UPDATE … RETURNING that leaves no transaction
	// open. A deleted endpoint's claim is a disabled one's; ErrGone once purged.
	TakeLease(ctx context.Context, endpointID, eventID, token uuid.UUID, ttl time.Duration) (Claim, error)
	// Event loads an event; ErrGone when it was pruned. A delivery served or
	// cooled down in process reads its event so, not through TakeLease.
	Event(ctx context.Context, id uuid.UUID) (Event, error)
	// Finish records, settles and releases in one statement (see Finish). A
	// success on an endpoint that is not failing writes nothing to it.
	Finish(ctx context.Context, f Finish) (Settled, error)
	// Wake makes the snoozed ones of jobs available now, through River, in
	// the transaction that reads their state (so none runs twice), and
	// returns how many it woke and those River still shows running.
	Wake(ctx context.Context, jobs []int64) (woken int, running []int64, err error)
	// AttemptOutcome returns the outcome Finish recorded for attempt of job;
	// ok is false when none was recorded.
	AttemptOutcome(ctx context.Context, jobID int64, attempt int) (o Outcome, ok bool, err error)
	// ReserveRate reserves a start under the endpoint's rate limit (the generic
	// cell rate algorithm, across replicas) and returns the wait before it;
	// beyond maxWait nothing is reserved and wait is until a start fits.
	// ErrGone when the endpoint was purged.
	ReserveRate(ctx context.Context, endpointID uuid.UUID, perSecond, burst int, maxWait time.Duration) (wait time.Duration, reserved bool, err error)
}

// PostRequest is one HTTP POST to a receiver.
type PostRequest struct {
	URL     string
	Header  domain.Header
	Body    []byte
	Timeout time.Duration // the endpoint's bound of the exchange; zero leaves the Poster's own
}

// PostResponse is what came back. Latency is set even when Post fails.
type PostResponse struct {
	StatusCode int
	Header     domain.Header
	Body       []byte // read up to MaxResponseBytes
	Latency    time.Duration
}

// Poster sends a delivery through the SSRF-guarded client, with no retry or
// redirect, bounded by the HTTP timeout, reading at most MaxResponseBytes.
// Errors wrap ErrBlocked or ErrTimeout; any other is a connection failure.
type Poster interface {
	Post(ctx context.Context, req PostRequest) (PostResponse, error)
}
