package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// Delivery statuses: what a delivery's River state means to an owner.
const (
	// StatusDelivered: the receiver answered 2xx (River: completed).
	StatusDelivered = "delivered"
	// StatusSending: an attempt is in flight (River: running).
	StatusSending = "sending"
	// StatusWaiting: not attempted yet — in the queue (River: available),
	// behind the endpoint's window (pending) or held for the endpoint's
	// cooldown or a receiver's Retry-After (scheduled, no failed attempt).
	StatusWaiting = "waiting"
	// StatusRetrying: an attempt failed and another is scheduled (River:
	// retryable, or scheduled after a failed attempt).
	StatusRetrying = "retrying"
	// StatusFailed: every attempt failed (River: discarded, or cancelled
	// at the endpoint's last attempt).
	StatusFailed = "failed"
	// StatusCancelled: given up without retrying — a 4xx or 410, a
	// blocked address, the endpoint disabled, the event out of scope or
	// pruned (River: cancelled).
	StatusCancelled = "cancelled"
)

// DeliveryStatuses lists the statuses in the order the log's filter shows
// them.
var DeliveryStatuses = []string{StatusDelivered, StatusSending, StatusWaiting, StatusRetrying, StatusFailed, StatusCancelled}

// Codes of the delivery log and its steering.
const (
	CodeInvalidTime      = "INVALID_TIME"
	CodeRangeTooLarge    = "RANGE_TOO_LARGE"
	CodeDeliveryNotFound = "NOT_FOUND"
	CodeWrongState       = "DELIVERY_STATE"
)

// MaxRecoverEvents bounds the events one recover queues.
const MaxRecoverEvents = 1000

// StatusOf names a delivery's River state for an owner; failedBefore says
// whether an attempt of it failed already (a scheduled job is then a
// retry, else a wait).
func StatusOf(riverState string, failedBefore bool) string {
	switch riverState {
	case "completed":
		return StatusDelivered
	case "running":
		return StatusSending
	case "available", "pending":
		return StatusWaiting
	case "scheduled":
		if failedBefore {
			return StatusRetrying
		}
		return StatusWaiting
	case "retryable":
		return StatusRetrying
	case "discarded":
		return StatusFailed
	case "cancelled":
		return StatusCancelled
	}
	return riverState
}

// DeliveryStatus names a delivery job's River state for an owner as
// StatusOf does, and a job cancelled at its last attempt (of maxAttempts,
// the bound that applies) failed: the worker ends a delivery at the
// endpoint's last attempt itself, through River's cancel, and nobody
// cancelled it.
func DeliveryStatus(riverState string, failedBefore bool, attempt, maxAttempts int) string {
	if riverState == "cancelled" && maxAttempts > 0 && attempt >= maxAttempts {
		return StatusFailed
	}
	return StatusOf(riverState, failedBefore)
}

// AttemptOutcomeText says an attempt's outcome in an owner's words.
func AttemptOutcomeText(outcome string) string {
	switch outcome {
	case "completed":
		return "delivered"
	case "retryable":
		return "failed, to be retried"
	case "snoozed":
		return "waited, no attempt spent"
	case "discarded":
		return "failed, not retried"
	}
	return outcome
}

// Attempt is one run of a delivery as the log shows it.
type Attempt struct {
	Attempt int `json:"attempt"`
	// Outcome is completed, retryable, snoozed (waited without spending
	// an attempt) or discarded.
	Outcome    string    `json:"outcome"`
	StatusCode *int      `json:"status_code"`
	LatencyMS  *int      `json:"latency_ms"`
	Response   *string   `json:"response" doc:"the start of the receiver's answer (at most 1 KiB)"`
	Error      *string   `json:"error"`
	Location   *string   `json:"location"`
	At         time.Time `json:"attempted_at"`
	// Timestamp and Signature are the webhook-timestamp and
	// webhook-signature values the attempt sent (the signatures, never
	// the secret); null when it sent nothing or was recorded before they
	// were kept.
	Timestamp *string `json:"webhook_timestamp" doc:"the webhook-timestamp header the attempt sent"`
	Signature *string `json:"webhook_signature" doc:"the webhook-signature header the attempt sent (signatures, never the secret)"`
	// Headers are the headers the attempt sent: the request's, with its
	// own timestamp and signature; null when Signature is, or once the
	// event was pruned.
	Headers map[string]string `json:"headers" doc:"the headers the attempt sent; custom header values masked"`
}

// SentRequest is what a delivery POSTs: the exact body, and the headers.
// The body is a function of the event alone, so it is rebuilt from the
// event; custom header values are masked; the signature and timestamp
// change with every attempt, so here they are described and each
// attempt's Headers carry the values it sent.
type SentRequest struct {
	URL     string            `json:"url"`
	Body    string            `json:"body"`
	Headers map[string]string `json:"headers"`
}

// DeliveryDetail is one delivery with every attempt, oldest first, and
// what it sends. Request is null once the event was pruned.
type DeliveryDetail struct {
	Delivery
	Attempts []Attempt    `json:"attempts"`
	Request  *SentRequest `json:"request"`
}

// LoggedEvent is what the log needs of a delivery's event to rebuild its
// body.
type LoggedEvent struct {
	ID         uuid.UUID
	Type       string
	Subject    string
	OccurredAt time.Time
	Data       json.RawMessage
}

// DeliveryQuery selects and pages an endpoint's delivery log.
type DeliveryQuery struct {
	// Status is one of DeliveryStatuses, "" for all.
	Status    string
	EventType string
	// Since and Until bound the deliveries' creation time (zero: open).
	Since, Until time.Time
	// Before keeps jobs older than this id (newest first); After keeps
	// jobs newer than this id (read oldest first, then reversed).
	Before, After int64
	Limit         int
}

// DeliveryPage is a page of the log, newest first, with cursors both ways.
type DeliveryPage struct {
	Data []Delivery `json:"data"`
	// NextCursor pages to older deliveries (cursor=), PrevCursor to newer
	// ones (before=); null at either end.
	NextCursor *string `json:"next_cursor"`
	PrevCursor *string `json:"prev_cursor"`
}

// DeliveryIDInput names one delivery of one endpoint.
type DeliveryIDInput struct {
	ID    uuid.UUID `json:"id" path:"id"`
	JobID int64     `json:"job_id" path:"job_id" doc:"the delivery's job id"`
}

// RetryOutput says what a retry or resend did.
type RetryOutput struct {
	JobID int64 `json:"job_id"`
	// From is the delivery's River state before, State its state now.
	From  string `json:"from"`
	State string `json:"state"`
}

// RecoverInput is a time range of events to send an endpoint.
type RecoverInput struct {
	ID    uuid.UUID `json:"id" path:"id"`
	Since string    `json:"since" doc:"RFC 3339; events that occurred at or after it"`
	Until string    `json:"until,omitempty" doc:"RFC 3339; events that occurred before it (default now)"`
}

// RecoverOutput counts what a recover did.
type RecoverOutput struct {
	// Events is how many of the range's events are of a type the endpoint
	// subscribes to.
	Events int `json:"events"`
	// Queued are new deliveries; Existing had a delivery already (any
	// state) and were left alone.
	Queued   int `json:"queued"`
	Existing int `json:"existing"`
	// Skipped are the events the fan-out's rules keep from the endpoint
	// (another endpoint's webhook.test, out of scope, filtered out, about
	// the endpoint itself), each with its reason; none of them is queued.
	Skipped []SkippedEvent `json:"skipped"`
}

// SkippedEvent is an event recover or redeliver left out, and why: a
// fan-out reason (not_subscribed, out_of_scope_*, filtered_out,
// endpoint_disabled) or event_gone (pruned by the retention).
type SkippedEvent struct {
	EventID   uuid.UUID `json:"event_id"`
	EventType string    `json:"event_type,omitempty"`
	// JobID is the delivery redeliver left alone; absent for recover.
	JobID  int64  `json:"job_id,omitempty"`
	Reason string `json:"reason"`
	Text   string `json:"text"`
}

// ReasonEventGone is why redeliver leaves a delivery whose event the
// retention pruned.
const ReasonEventGone = "event_gone"

// RedeliverStates are the River states "redeliver failed" takes.
var RedeliverStates = []string{"discarded", "cancelled"}

// SkipReasons are the reasons recover and redeliver leave an event alone,
// in the order a summary of them names them.
var SkipReasons = []string{ReasonNotSubscribed, ReasonFilteredOut, ReasonRaw, ReasonUnpublished, ReasonEmbedCode,
	ReasonOutOfScope, ReasonDisabled, ReasonEventGone}

// SkipReasonText says in an owner's words why recover or redeliver left an
// event alone.
func SkipReasonText(reason string) string {
	if reason == ReasonEventGone {
		return "the event was pruned by the retention"
	}
	return FanoutReasonText(reason, nil)
}

// skipped describes an event the fan-out's rules keep from an endpoint.
func skipped(ev delivery.Event, jobID int64, reason string) SkippedEvent {
	return SkippedEvent{EventID: ev.ID, EventType: ev.Type, JobID: jobID, Reason: reason, Text: SkipReasonText(reason)}
}

// forRule is the endpoint as the fan-out's rules read it.
func (e Endpoint) forRule() delivery.Endpoint {
	return delivery.Endpoint{ID: e.ID, OwnerID: e.OwnerID, EventTypes: e.EventTypes, EmbedID: e.EmbedID, Enabled: e.Enabled, Filter: e.Filter}
}

// parseTime parses an RFC 3339 filter value.
func parseTime(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
	if err != nil {
		return t, domain.Validation(CodeInvalidTime, field+" must be an RFC 3339 time, e.g. 2026-01-02T15:04:05Z").WithField(field)
	}
	return t, nil
}

// deliveryQuery validates the log's filters and cursors.
func deliveryQuery(in DeliveriesInput) (DeliveryQuery, error) {
	q := DeliveryQuery{Limit: in.NormalizedLimit()}
	if in.State != "" {
		if !slices.Contains(DeliveryStatuses, in.State) {
			return q, domain.Validation(CodeInvalidState, "state must be one of "+strings.Join(DeliveryStatuses, ", ")).WithField("state")
		}
		q.Status = in.State
	}
	if t := strings.TrimSpace(in.EventType); t != "" {
		if _, ok := domain.LookupEventType(t); !ok {
			return q, domain.Validation(CodeInvalidEventType, fmt.Sprintf("event_type %q is not an event type", truncate(t, 64))).WithField("event_type")
		}
		q.EventType = t
	}
	var err error
	if q.Since, err = parseTime("since", in.Since); err != nil {
		return q, err
	}
	if q.Until, err = parseTime("until", in.Until); err != nil {
		return q, err
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		return q, domain.Validation(CodeInvalidTime, "until must be after since").WithField("until")
	}
	parse := func(s string) (int64, error) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return 0, badCursor()
		}
		return n, nil
	}
	if in.Cursor != "" && in.Before != "" {
		return q, domain.Validation("INVALID_CURSOR", "give cursor (older) or before (newer), not both").WithField("before")
	}
	if in.Cursor != "" {
		if q.Before, err = parse(in.Cursor); err != nil {
			return q, err
		}
	}
	if in.Before != "" {
		if q.After, err = parse(in.Before); err != nil {
			return q, err
		}
	}
	return q, nil
}

// finishDelivery fills what the log derives: the task link, the owner's
// status, and the latest attempt's outcome only (an older attempt's error
// stays in the attempt list, not beside a later success).
func finishDelivery(d *Delivery) {
	d.TaskURL = TaskURL(d.JobID)
	d.Status = DeliveryStatus(d.State, d.FailedBefore, d.Attempt, d.MaxAttempts)
	if d.Status == StatusFailed {
		d.Summary = fmt.Sprintf("failed after %d of %d attempts", d.Attempt, d.MaxAttempts)
	}
	if d.Status == StatusWaiting {
		d.WaitingFor = map[string]string{"available": "queue", "pending": "queue", "scheduled": "schedule"}[d.State]
	}
	if d.State == "completed" {
		d.LastError = nil
	}
}

// attemptHeaders are the headers attempt a sent with r: r's, with a's
// timestamp and signature; nil when a recorded no signature.
func attemptHeaders(r *SentRequest, a Attempt) map[string]string {
	if a.Signature == nil || a.Timestamp == nil {
		return nil
	}
	h := make(map[string]string, len(r.Headers))
	for k, v := range r.Headers {
		h[k] = v
	}
	h[standardwebhooks.HeaderTimestamp] = *a.Timestamp
	h[standardwebhooks.HeaderSignature] = *a.Signature
	return h
}

// sentRequest rebuilds what a delivery of ev to e sends.
func sentRequest(e Endpoint, ev LoggedEvent, userAgent string) (*SentRequest, error) {
	data := ev.Data
	if len(data) == 0 {
		data = json.RawMessage(`{}`)
	}
	body, err := json.Marshal(struct {
		ID         string          `json:"id"`
		Type       string          `json:"type"`
		Subject    string          `json:"subject"`
		OccurredAt string          `json:"occurred_at"`
		Data       json.RawMessage `json:"data"`
	}{ev.ID.String(), ev.Type, ev.Subject, ev.OccurredAt.UTC().Format(time.RFC3339Nano), data})
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	h := maskHeaders(e.Headers)
	if h == nil {
		h = map[string]string{}
	}
	h["Content-Type"] = "application/json"
	h["User-Agent"] = userAgent
	h[standardwebhooks.HeaderID] = ev.ID.String()
	h[standardwebhooks.HeaderTimestamp] = "(the attempt's time, Unix seconds; each attempt's value is in its headers)"
	h[standardwebhooks.HeaderSignature] = "(v1,HMAC-SHA256 of id.timestamp.body with the endpoint's secret, and the previous one during a rotation; each attempt's value is in its headers)"
	return &SentRequest{URL: e.URL, Body: string(body), Headers: h}, nil
}

// Delivery returns one delivery of the endpoint with every attempt and the
// request it sends.
func (s *Service) Delivery(ctx context.Context, ownerID uuid.UUID, in DeliveryIDInput) (DeliveryDetail, error) {
	var out DeliveryDetail
	err := s.uow.Do(ctx, func(tx Tx) error {
		e, err := tx.Endpoints().Get(ctx, ownerID, in.ID)
		if err != nil {
			return err
		}
		d, attempts, ev, err := tx.Deliveries().Get(ctx, in.ID, in.JobID)
		if err != nil {
			return err
		}
		finishDelivery(&d)
		out = DeliveryDetail{Delivery: d, Attempts: attempts}
		if out.Attempts == nil {
			out.Attempts = []Attempt{}
		}
		if ev != nil {
			if out.Request, err = sentRequest(e, *ev, s.userAgent); err != nil {
				return err
			}
			for i, a := range out.Attempts {
				out.Attempts[i].Headers = attemptHeaders(out.Request, a)
			}
		}
		return nil
	})
	if err != nil {
		return DeliveryDetail{}, fmt.Errorf("get delivery %d of endpoint %s: %w", in.JobID, in.ID, err)
	}
	return out, nil
}

// retryable and resendable are the River states "retry now" and "send
// again" take.
var (
	retryNowStates = []string{"retryable", "scheduled", "pending"}
	resendStates   = []string{"completed", "discarded", "cancelled"}
)

// RetryNow runs a waiting or retrying delivery now (River's JobRetry of
// the same job): retryable, scheduled (a retry or a cooldown) or pending
// (behind the endpoint's window). The endpoint must be enabled.
func (s *Service) RetryNow(ctx context.Context, ownerID uuid.UUID, in DeliveryIDInput) (RetryOutput, error) {
	return s.retry(ctx, ownerID, in, retryNowStates, "retry now takes a retrying or waiting delivery (River: retryable, scheduled, pending); use send again for a finished one")
}

// SendAgain sends a finished delivery again (River's JobRetry of the same
// job, so the same webhook-id): completed, discarded or cancelled. The
// endpoint must be enabled.
func (s *Service) SendAgain(ctx context.Context, ownerID uuid.UUID, in DeliveryIDInput) (RetryOutput, error) {
	return s.retry(ctx, ownerID, in, resendStates, "send again takes a finished delivery (River: completed, discarded, cancelled); use retry now for a waiting one")
}

func (s *Service) retry(ctx context.Context, ownerID uuid.UUID, in DeliveryIDInput, states []string, refusal string) (RetryOutput, error) {
	var out RetryOutput
	err := s.uow.Do(ctx, func(tx Tx) error {
		e, err := getLive(ctx, tx, ownerID, in.ID)
		if err != nil {
			return err
		}
		if !e.Enabled {
			return domain.Conflict(CodeEndpointDisabled, "the endpoint is disabled; enable it first")
		}
		from, to, err := tx.Deliveries().Retry(ctx, in.ID, in.JobID, states)
		if err != nil {
			return err
		}
		if to == "" {
			return domain.Conflict(CodeWrongState, fmt.Sprintf("the delivery is %s (%s): %s", StatusOf(from, false), from, refusal))
		}
		out = RetryOutput{JobID: in.JobID, From: from, State: to}
		return nil
	})
	if err != nil {
		return RetryOutput{}, fmt.Errorf("retry delivery %d of endpoint %s: %w", in.JobID, in.ID, err)
	}
	return out, nil
}

// Recover sends the endpoint, as new deliveries, the events of
// [since, until) it subscribes to that it has no delivery of yet: events
// sent while it was disabled or before it subscribed to their type. An
// event it has a delivery of (in any state) is left alone, so recovering a
// range twice queues nothing the second time; failed deliveries are sent
// again by redeliver. At most MaxRecoverEvents events per call
// (RANGE_TOO_LARGE beyond: narrow the range). Scope is checked when each
// delivery runs, as for every delivery.
func (s *Service) Recover(ctx context.Context, ownerID uuid.UUID, in RecoverInput) (RecoverOutput, error) {
	since, err := parseTime("since", in.Since)
	if err != nil {
		return RecoverOutput{}, err
	}
	if since.IsZero() {
		return RecoverOutput{}, domain.Validation(CodeInvalidTime, "since is required (RFC 3339)").WithField("since")
	}
	until, err := parseTime("until", in.Until)
	if err != nil {
		return RecoverOutput{}, err
	}
	if until.IsZero() {
		until = s.clock.Now()
	}
	if !until.After(since) {
		return RecoverOutput{}, domain.Validation(CodeInvalidTime, "until must be after since").WithField("until")
	}
	var out RecoverOutput
	err = s.uow.Do(ctx, func(tx Tx) error {
		e, err := getLive(ctx, tx, ownerID, in.ID)
		if err != nil {
			return err
		}
		if !e.Enabled {
			return domain.Conflict(CodeEndpointDisabled, "the endpoint is disabled; enable it before recovering")
		}
		types := domain.ExpandGlobs(e.EventTypes, domain.Webhook)
		if len(types) == 0 {
			out = RecoverOutput{Skipped: []SkippedEvent{}}
			return nil
		}
		evs, err := tx.Deliveries().RangeEvents(ctx, ownerID, types, since, until, MaxRecoverEvents)
		if err != nil {
			return err
		}
		if len(evs) > MaxRecoverEvents {
			return domain.Validation(CodeRangeTooLarge, fmt.Sprintf("the range holds more than %d events the endpoint subscribes to; recover a shorter range", MaxRecoverEvents)).WithField("since")
		}
		out = RecoverOutput{Events: len(evs), Skipped: []SkippedEvent{}}
		ep := e.forRule()
		var send []uuid.UUID
		for _, ev := range evs {
			reason, err := delivery.Rule(ctx, s.admits, ep, ev)
			if err != nil {
				return err
			}
			if reason != "" {
				out.Skipped = append(out.Skipped, skipped(ev, 0, string(reason)))
				continue
			}
			send = append(send, ev.ID)
		}
		if len(send) == 0 {
			return nil
		}
		queued, err := tx.Deliveries().QueueRecovered(ctx, e.ID, send)
		if err != nil {
			return err
		}
		out.Queued, out.Existing = queued, len(send)-queued
		return nil
	})
	if err != nil {
		return RecoverOutput{}, fmt.Errorf("recover endpoint %s: %w", in.ID, err)
	}
	return out, nil
}
