package webhook

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// ReasonDisabledByOwner is the disabled_reason of an endpoint the owner
// turned off.
const ReasonDisabledByOwner = "disabled by the owner"

// Service runs the webhooks ops for an owner.
type Service struct {
	uow            UnitOfWork
	seal           SealFunc
	embedBelongsTo EmbedBelongsToFunc
	clock          domain.Clock
	newSecret      func() (string, error)
	newSigningKey  func() (secret, public string, err error)
	maxEndpoints   int
	health         HealthReader
	statsReader    StatsReader
	egress         EgressCheckFunc
	fanouts        FanoutReader
	admits         delivery.EmbedAdmitsFunc
	userAgent      string
}

// Deps are the Service's ports.
type Deps struct {
	UnitOfWork UnitOfWork
	Seal       SealFunc
	// EmbedBelongsTo checks embed_id; nil refuses every embed_id.
	EmbedBelongsTo EmbedBelongsToFunc
	// Clock defaults to the system clock.
	Clock domain.Clock
	// NewSecret defaults to standardwebhooks.NewSecret.
	NewSecret func() (string, error)
	// NewSigningKey defaults to standardwebhooks.NewSigningKey.
	NewSigningKey func() (secret, public string, err error)
	// MaxEndpoints is the soft limit per owner (DefaultMaxEndpoints).
	MaxEndpoints int
	// Stats reads the delivery charts and the endpoints needing
	// attention; nil reads none (empty charts).
	Stats StatsReader
	// Health reads the endpoints' recent outcomes for list and get; nil
	// leaves their health null.
	Health HealthReader
	// Egress refuses, at create and update, URLs whose host is an IP
	// literal or localhost the egress policy refuses; nil checks nothing
	// here (the delivery client still does at dial time).
	Egress EgressCheckFunc
	// Fanouts reads the fan-out summaries (webhooks.event_fanout).
	Fanouts FanoutReader
	// EmbedAdmits re-checks an embed endpoint's scope when recover and
	// redeliver apply the fan-out's rules; nil admits nothing.
	EmbedAdmits delivery.EmbedAdmitsFunc
	// Version is the server's version, as the deliveries' User-Agent
	// (StandMeet-Webhooks/<version>) carries it and the delivery log
	// shows it; "" shows "dev".
	Version string
}

// NewService builds the Service.
func NewService(d Deps) *Service {
	if d.Clock == nil {
		d.Clock = domain.SystemClock{}
	}
	if d.NewSecret == nil {
		d.NewSecret = standardwebhooks.NewSecret
	}
	if d.NewSigningKey == nil {
		d.NewSigningKey = standardwebhooks.NewSigningKey
	}
	if d.MaxEndpoints <= 0 {
		d.MaxEndpoints = DefaultMaxEndpoints
	}
	return &Service{
		uow: d.UnitOfWork, seal: d.Seal, embedBelongsTo: d.EmbedBelongsTo, clock: d.Clock,
		newSecret: d.NewSecret, newSigningKey: d.NewSigningKey, maxEndpoints: d.MaxEndpoints, health: d.Health, statsReader: d.Stats, egress: d.Egress, fanouts: d.Fanouts,
		admits: d.EmbedAdmits, userAgent: "StandMeet-Webhooks/" + cmp.Or(d.Version, "dev"),
	}
}

func badCursor() error {
	return domain.Validation("INVALID_CURSOR", "cursor is not one this list handed out").WithField("cursor")
}

// endpointQuery validates a list's filters, order and cursor.
func endpointQuery(in ListInput) (EndpointQuery, error) {
	q := EndpointQuery{Limit: in.NormalizedLimit()}
	switch in.State {
	case "", StateEnabled, StateFailing, StateDisabled, StateDeleted:
		q.State = in.State
	default:
		return q, domain.Validation(CodeInvalidState, "state must be enabled, failing, disabled or deleted").WithField("state")
	}
	if t := strings.TrimSpace(in.EventType); t != "" {
		et, ok := domain.LookupEventType(t)
		if !ok || et.Exposure != domain.Webhook {
			return q, domain.Validation(CodeInvalidEventType, fmt.Sprintf("event_type %q is not a webhook event type (see GET /api/admin/webhooks/event-types)", truncate(t, 64))).WithField("event_type")
		}
		q.EventType = t
	}
	q.URLContains = strings.TrimSpace(in.URL)
	if len(q.URLContains) > MaxURLLen || strings.ContainsRune(q.URLContains, 0) {
		return q, domain.Validation(CodeInvalidURLFilter, fmt.Sprintf("url filter must be at most %d bytes of text", MaxURLLen)).WithField("url")
	}
	sort := in.Sort
	if sort == "" {
		// Newest first: the endpoint just made is on the first page.
		sort = "-" + SortCreated
	}
	if strings.HasPrefix(sort, "-") {
		q.Desc, sort = true, sort[1:]
	}
	switch sort {
	case SortCreated:
		q.Sort = SortCreated
	case SortURL:
		q.Sort = SortURL
	default:
		return q, domain.Validation(CodeInvalidSort, "sort must be created, -created, url or -url").WithField("sort")
	}
	if in.Cursor != "" {
		c, err := parseEndpointCursor(q.Sort, in.Cursor)
		if err != nil {
			return q, err
		}
		q.After = &c
	}
	return q, nil
}

// endpointCursor is the cursor after e in a list sorted by sort: its id, or
// for SortURL its URL (base64url) and id joined by '~'.
func endpointCursor(sort string, e Endpoint) string {
	if sort == SortURL {
		return base64.RawURLEncoding.EncodeToString([]byte(e.URL)) + "~" + e.ID.String()
	}
	return e.ID.String()
}

func parseEndpointCursor(sort, s string) (EndpointCursor, error) {
	var c EndpointCursor
	idPart := s
	if sort == SortURL {
		u, id, ok := strings.Cut(s, "~")
		if !ok {
			return c, badCursor()
		}
		b, err := base64.RawURLEncoding.DecodeString(u)
		if err != nil {
			return c, badCursor()
		}
		c.URL, idPart = string(b), id
	}
	id, err := uuid.Parse(idPart)
	if err != nil {
		return c, badCursor()
	}
	c.ID = id
	return c, nil
}

// List returns a page of the owner's endpoints that pass in's filters, in
// its order (newest first by default), each with its health.
func (s *Service) List(ctx context.Context, ownerID uuid.UUID, in ListInput) (op.Page[View], error) {
	q, err := endpointQuery(in)
	if err != nil {
		return op.Page[View]{}, err
	}
	limit := q.Limit
	q.Limit = limit + 1
	var rows []Endpoint
	err = s.uow.Do(ctx, func(tx Tx) error {
		var err error
		rows, err = tx.Endpoints().List(ctx, ownerID, q)
		return err
	})
	if err != nil {
		return op.Page[View]{}, fmt.Errorf("list endpoints: %w", err)
	}
	page := op.NewPage(rows, limit, func(e Endpoint) string { return endpointCursor(q.Sort, e) })
	views, err := s.viewsWithHealth(ctx, page.Data)
	if err != nil {
		return op.Page[View]{}, err
	}
	return op.Page[View]{Data: views, NextCursor: page.NextCursor}, nil
}

// viewsWithHealth returns the views of es with their health read in one
// call.
func (s *Service) viewsWithHealth(ctx context.Context, es []Endpoint) ([]View, error) {
	views := make([]View, len(es))
	for i, e := range es {
		views[i] = ViewOf(e)
	}
	if s.health == nil || len(es) == 0 {
		return views, nil
	}
	ids := make([]uuid.UUID, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	hs, err := s.health.Health(ctx, ids, s.clock.Now().Add(-HealthWindow))
	if err != nil {
		return nil, fmt.Errorf("read endpoint health: %w", err)
	}
	for i := range views {
		h := hs[views[i].ID]
		views[i].Health = &h
	}
	return views, nil
}

// Get returns one endpoint with its health, never its secret. A deleted
// endpoint is returned until it is purged (its state says deleted).
func (s *Service) Get(ctx context.Context, ownerID, id uuid.UUID) (View, error) {
	var e Endpoint
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		e, err = tx.Endpoints().Get(ctx, ownerID, id)
		return err
	})
	if err != nil {
		return View{}, fmt.Errorf("get endpoint %s: %w", id, err)
	}
	views, err := s.viewsWithHealth(ctx, []Endpoint{e})
	if err != nil {
		return View{}, err
	}
	return views[0], nil
}

// errDeleted refuses a change to a deleted endpoint.
func errDeleted() error {
	return domain.Conflict(CodeEndpointDeleted, "the endpoint is deleted; its delivery log stays readable until the retention purges it")
}

// getLive returns an endpoint that is not deleted (ENDPOINT_DELETED
// otherwise).
func getLive(ctx context.Context, tx Tx, ownerID, id uuid.UUID) (Endpoint, error) {
	e, err := tx.Endpoints().Get(ctx, ownerID, id)
	if err != nil {
		return e, err
	}
	return e, e.Live()
}

// checkEmbed refuses an embed_id that is not an embed of the owner.
func (s *Service) checkEmbed(ctx context.Context, ownerID uuid.UUID, embedID *uuid.UUID) error {
	if embedID == nil {
		return nil
	}
	unknown := domain.Validation(CodeUnknownEmbed, "embed_id names no embed of yours").WithField("embed_id")
	if s.embedBelongsTo == nil {
		return unknown
	}
	ok, err := s.embedBelongsTo(ctx, ownerID, *embedID)
	if err != nil {
		return fmt.Errorf("check embed %s: %w", embedID, err)
	}
	if !ok {
		return unknown
	}
	return nil
}

// newSealedSecret generates a secret of the signing scheme and seals it
// for endpoint id; public is an ed25519 key's public key ("" for HMAC).
func (s *Service) newSealedSecret(id uuid.UUID, signing string) (secret, public string, sealed []byte, err error) {
	if signing == SigningEd25519 {
		secret, public, err = s.newSigningKey()
	} else {
		secret, err = s.newSecret()
	}
	if err != nil {
		return "", "", nil, fmt.Errorf("generate secret: %w", err)
	}
	if s.seal == nil {
		return "", "", nil, fmt.Errorf("seal secret: no seal function")
	}
	sealed, err = s.seal([]byte(secret), id[:])
	if err != nil {
		return "", "", nil, fmt.Errorf("seal secret: %w", err)
	}
	return secret, public, sealed, nil
}

// Create validates and stores a new endpoint with a fresh secret, which it
// returns this once. The owner's endpoint count is checked against the
// soft limit (ENDPOINT_LIMIT).
func (s *Service) Create(ctx context.Context, ownerID uuid.UUID, in CreateInput) (WithSecret, error) {
	u, err := ValidateURL(in.URL)
	if err != nil {
		return WithSecret{}, err
	}
	if err := s.checkEgress(ctx, hostOf(u)); err != nil {
		return WithSecret{}, err
	}
	desc, err := ValidateDescription(in.Description)
	if err != nil {
		return WithSecret{}, err
	}
	types, err := ValidateEventTypes(in.EventTypes)
	if err != nil {
		return WithSecret{}, err
	}
	headers, err := in.headers()
	if err != nil {
		return WithSecret{}, err
	}
	maxInFlight := 1
	if in.MaxInFlight != nil {
		if err := ValidateMaxInFlight(*in.MaxInFlight); err != nil {
			return WithSecret{}, err
		}
		maxInFlight = *in.MaxInFlight
	}
	timeout, attempts := MaxTimeoutSeconds, MaxAttemptsCap
	if in.TimeoutSeconds != nil {
		if err := ValidateTimeout(*in.TimeoutSeconds); err != nil {
			return WithSecret{}, err
		}
		timeout = *in.TimeoutSeconds
	}
	if in.MaxAttempts != nil {
		if err := ValidateMaxAttempts(*in.MaxAttempts); err != nil {
			return WithSecret{}, err
		}
		attempts = *in.MaxAttempts
	}
	signing, err := ValidateSigning(in.Signing)
	if err != nil {
		return WithSecret{}, err
	}
	rate, burst, err := RateLimit(in.RateLimitPerSecond, in.RateLimitBurst, 0, 0)
	if err != nil {
		return WithSecret{}, err
	}
	flt, err := ValidateFilter(in.Filter, types)
	if err != nil {
		return WithSecret{}, err
	}
	if err := s.checkEmbed(ctx, ownerID, in.EmbedID); err != nil {
		return WithSecret{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return WithSecret{}, fmt.Errorf("new endpoint id: %w", err)
	}
	secret, public, sealed, err := s.newSealedSecret(id, signing)
	if err != nil {
		return WithSecret{}, err
	}
	if headers, err = s.sealHeaders(id, headers, nil); err != nil {
		return WithSecret{}, err
	}
	now := s.clock.Now()
	e := Endpoint{
		ID: id, OwnerID: ownerID, URL: u, Description: desc, EventTypes: types, EmbedID: in.EmbedID,
		Headers: headers, MaxInFlight: maxInFlight, TimeoutSeconds: timeout, MaxAttempts: attempts,
		Enabled:      in.Enabled == nil || *in.Enabled,
		SecretSealed: sealed, CreatedAt: now, UpdatedAt: now,
		PublicKey: public, Filter: flt, RateLimitPerSecond: rate, RateLimitBurst: burst,
		CreatedBy: actorOr(in.by), UpdatedBy: actorOr(in.by),
	}
	if signing == SigningEd25519 {
		e.Signing = signing
	}
	if !e.Enabled {
		r := ReasonDisabledByOwner
		e.DisabledReason = &r
	}
	err = s.uow.Do(ctx, func(tx Tx) error {
		n, err := tx.Endpoints().Count(ctx, ownerID)
		if err != nil {
			return err
		}
		if n >= s.maxEndpoints {
			return domain.Conflict(CodeEndpointLimit, fmt.Sprintf("an owner may have at most %d webhook endpoints", s.maxEndpoints))
		}
		return tx.Endpoints().Insert(ctx, e)
	})
	if err != nil {
		return WithSecret{}, fmt.Errorf("create endpoint: %w", err)
	}
	if signing == SigningEd25519 {
		// The private key never leaves the instance: receivers hold the
		// public key.
		secret = ""
	}
	return WithSecret{View: ViewOf(e), Secret: secret}, nil
}

// Update changes the fields given. enabled:true also clears the failure
// state (failing_since, disabled_reason); enabled:false disables the
// endpoint with the reason ReasonDisabledByOwner.
func (s *Service) Update(ctx context.Context, ownerID uuid.UUID, in UpdateInput) (View, error) {
	var (
		u, desc *string
		types   []string
		err     error
	)
	if in.URL != nil {
		v, err := ValidateURL(*in.URL)
		if err != nil {
			return View{}, err
		}
		if err := s.checkEgress(ctx, hostOf(v)); err != nil {
			return View{}, err
		}
		u = &v
	}
	if in.Description != nil {
		v, err := ValidateDescription(*in.Description)
		if err != nil {
			return View{}, err
		}
		desc = &v
	}
	if in.EventTypes != nil {
		if types, err = ValidateEventTypes(in.EventTypes); err != nil {
			return View{}, err
		}
	}
	headers, err := in.headers()
	if err != nil {
		return View{}, err
	}
	if in.MaxInFlight != nil {
		if err := ValidateMaxInFlight(*in.MaxInFlight); err != nil {
			return View{}, err
		}
	}
	if in.TimeoutSeconds != nil {
		if err := ValidateTimeout(*in.TimeoutSeconds); err != nil {
			return View{}, err
		}
	}
	if in.MaxAttempts != nil {
		if err := ValidateMaxAttempts(*in.MaxAttempts); err != nil {
			return View{}, err
		}
	}
	if _, _, err := RateLimit(in.RateLimitPerSecond, in.RateLimitBurst, 1, 1); err != nil {
		return View{}, err
	}
	embedChanged, embedID := in.embedChange()
	if embedChanged {
		if err := s.checkEmbed(ctx, ownerID, embedID); err != nil {
			return View{}, err
		}
	}
	var e Endpoint
	err = s.uow.Do(ctx, func(tx Tx) error {
		return tx.Endpoints().Update(ctx, ownerID, in.ID, func(ep *Endpoint) error {
			if err := ep.Live(); err != nil {
				return err
			}
			if u != nil {
				ep.URL = *u
			}
			if desc != nil {
				ep.Description = *desc
			}
			if types != nil {
				ep.EventTypes = types
			}
			if in.Filter != nil || types != nil && ep.Filter != nil {
				// A new filter is checked against the types it will
				// filter; new types against the filter they keep.
				raw := ep.Filter
				if in.Filter != nil {
					raw = in.Filter
				}
				f, err := ValidateFilter(raw, ep.EventTypes)
				if err != nil {
					return err
				}
				ep.Filter = f
			}
			if headers != nil {
				var err error
				if ep.Headers, err = s.sealHeaders(ep.ID, headers, ep.Headers); err != nil {
					return err
				}
			}
			if in.MaxInFlight != nil {
				ep.MaxInFlight = *in.MaxInFlight
			}
			if in.TimeoutSeconds != nil {
				ep.TimeoutSeconds = *in.TimeoutSeconds
			}
			if in.MaxAttempts != nil {
				ep.MaxAttempts = *in.MaxAttempts
			}
			rate, burst, err := RateLimit(in.RateLimitPerSecond, in.RateLimitBurst, ep.RateLimitPerSecond, ep.RateLimitBurst)
			if err != nil {
				return err
			}
			ep.RateLimitPerSecond, ep.RateLimitBurst = rate, burst
			if embedChanged {
				ep.EmbedID = embedID
			}
			if in.Enabled != nil {
				ep.SetEnabled(*in.Enabled)
			}
			ep.UpdatedAt, ep.UpdatedBy = s.clock.Now(), actorOr(in.by)
			e = *ep
			return nil
		})
	})
	if err != nil {
		return View{}, fmt.Errorf("update endpoint %s: %w", in.ID, err)
	}
	return ViewOf(e), nil
}

// Delete deletes an endpoint softly: it is disabled for good, so it gets
// no new delivery and its queued ones are discarded when they run
// (endpoint disabled); it leaves the default list and the endpoint limit,
// and it and its delivery log stay readable until the retention purges
// them. Deleting it again is not found.
func (s *Service) Delete(ctx context.Context, ownerID, id uuid.UUID) error {
	err := s.uow.Do(ctx, func(tx Tx) error {
		return tx.Endpoints().Delete(ctx, ownerID, id, s.clock.Now())
	})
	if err != nil {
		return fmt.Errorf("delete endpoint %s: %w", id, err)
	}
	return nil
}

// RotateSecret gives the endpoint a new secret, returned this once. The
// previous secret stays valid for SecretGrace: deliveries meanwhile carry
// both signatures, so the receiver can switch at its own pace. Rotating
// again within the grace drops the oldest secret.
//
// An ed25519 endpoint gets a new key pair: the output carries its public
// key, never the private one.
func (s *Service) RotateSecret(ctx context.Context, ownerID, id uuid.UUID, by string) (SecretOutput, error) {
	var (
		until          time.Time
		secret, public string
	)
	err := s.uow.Do(ctx, func(tx Tx) error {
		return tx.Endpoints().Update(ctx, ownerID, id, func(e *Endpoint) error {
			if err := e.Live(); err != nil {
				return err
			}
			var (
				sealed []byte
				err    error
			)
			if secret, public, sealed, err = s.newSealedSecret(id, e.signing()); err != nil {
				return err
			}
			until = e.RotateSecret(sealed, public, s.clock.Now())
			e.UpdatedBy = actorOr(by)
			return nil
		})
	})
	if err != nil {
		return SecretOutput{}, fmt.Errorf("rotate secret of endpoint %s: %w", id, err)
	}
	if public != "" {
		return SecretOutput{PublicKey: public, RotationGraceUntil: &until}, nil
	}
	return SecretOutput{Secret: secret, RotationGraceUntil: &until}, nil
}

// testEventData is the data of a webhook.test event.
type testEventData struct {
	EndpointID uuid.UUID `json:"endpoint_id"`
	Test       bool      `json:"test"`
}

// SendTest records a webhook.test event naming the endpoint and queues its
// delivery in the same transaction, so the job id can be returned. The
// fan-out of the event names the same job (unique by endpoint and event),
// so it is delivered once, to this endpoint only. A disabled endpoint is
// refused (ENDPOINT_DISABLED): it would be discarded.
func (s *Service) SendTest(ctx context.Context, ownerID, id uuid.UUID) (TestOutput, error) {
	var out TestOutput
	err := s.uow.Do(ctx, func(tx Tx) error {
		e, err := getLive(ctx, tx, ownerID, id)
		if err != nil {
			return err
		}
		if !e.Enabled {
			return domain.Conflict(CodeEndpointDisabled, "the endpoint is disabled; enable it first")
		}
		evID, err := tx.Recorder().Record(ctx, ownerID, domain.EventWebhookTest, "webhook:"+id.String(),
			testEventData{EndpointID: id, Test: true})
		if err != nil {
			return err
		}
		jobID, err := tx.Deliveries().Enqueue(ctx, id, evID)
		if err != nil {
			return err
		}
		out = TestOutput{EventID: evID, JobID: jobID}
		return nil
	})
	if err != nil {
		return TestOutput{}, fmt.Errorf("send test to endpoint %s: %w", id, err)
	}
	return out, nil
}

// Deliveries returns a page of the endpoint's delivery log, newest first,
// filtered by status, event type and creation time, with cursors to older
// (next_cursor) and newer (prev_cursor) pages.
func (s *Service) Deliveries(ctx context.Context, ownerID uuid.UUID, in DeliveriesInput) (DeliveryPage, error) {
	q, err := deliveryQuery(in)
	if err != nil {
		return DeliveryPage{}, err
	}
	limit := q.Limit
	q.Limit = limit + 1
	var rows []Delivery
	err = s.uow.Do(ctx, func(tx Tx) error {
		if _, err := tx.Endpoints().Get(ctx, ownerID, in.ID); err != nil {
			return err
		}
		var err error
		rows, err = tx.Deliveries().List(ctx, in.ID, q)
		return err
	})
	if err != nil {
		return DeliveryPage{}, fmt.Errorf("list deliveries of endpoint %s: %w", in.ID, err)
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	if q.After > 0 {
		slices.Reverse(rows)
	}
	for i := range rows {
		finishDelivery(&rows[i])
	}
	page := DeliveryPage{Data: rows}
	if page.Data == nil {
		page.Data = []Delivery{}
	}
	cursor := func(d Delivery) *string { c := strconv.FormatInt(d.JobID, 10); return &c }
	if len(rows) > 0 {
		if q.After > 0 {
			// Read upwards from the cursor: older rows exist (the cursor's
			// own), newer ones when the read overflowed.
			page.NextCursor = cursor(rows[len(rows)-1])
			if more {
				page.PrevCursor = cursor(rows[0])
			}
		} else {
			if more {
				page.NextCursor = cursor(rows[len(rows)-1])
			}
			if q.Before > 0 {
				page.PrevCursor = cursor(rows[0])
			}
		}
	}
	return page, nil
}

// maxEventDeliveries bounds the deliveries listed for one event: one per
// endpoint (the fan-out's unique key), plus redeliveries and tests.
const maxEventDeliveries = 500

// EventDeliveries lists the webhook deliveries of one of the owner's
// events, each with the endpoint it went to (a deleted one included), so
// the events view links each event to its deliveries.
func (s *Service) EventDeliveries(ctx context.Context, ownerID, eventID uuid.UUID) (op.List[EventDelivery], error) {
	var rows []EventDelivery
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		rows, err = tx.Deliveries().ListByEvent(ctx, ownerID, eventID, maxEventDeliveries)
		return err
	})
	if err != nil {
		return op.List[EventDelivery]{}, fmt.Errorf("list deliveries of event %s: %w", eventID, err)
	}
	for i := range rows {
		finishDelivery(&rows[i].Delivery)
	}
	if rows == nil {
		rows = []EventDelivery{}
	}
	return op.List[EventDelivery]{Data: rows}, nil
}

// Redeliver queues again every failed or cancelled delivery of the
// endpoint (River states discarded and cancelled — not retrying ones: retry
// now takes those), after the receiver was fixed. Each keeps
// its job and its webhook-id, so a receiver that did get it dedupes it. A
// disabled endpoint is refused (ENDPOINT_DISABLED): enable it first.
func (s *Service) Redeliver(ctx context.Context, ownerID, id uuid.UUID) (RedeliverOutput, error) {
	out := RedeliverOutput{States: RedeliverStates, ByState: map[string]int{}}
	err := s.uow.Do(ctx, func(tx Tx) error {
		e, err := getLive(ctx, tx, ownerID, id)
		if err != nil {
			return err
		}
		if !e.Enabled {
			return domain.Conflict(CodeEndpointDisabled, "the endpoint is disabled; enable it before redelivering")
		}
		failed, err := tx.Deliveries().Failed(ctx, id)
		if err != nil {
			return err
		}
		out.Skipped = []SkippedEvent{}
		for _, st := range RedeliverStates {
			out.ByState[st] = 0
		}
		ep := e.forRule()
		var again []int64
		for _, f := range failed {
			if f.Event == nil {
				out.Skipped = append(out.Skipped, skipped(delivery.Event{}, f.JobID, ReasonEventGone))
				continue
			}
			reason, err := delivery.Rule(ctx, s.admits, ep, *f.Event)
			if err != nil {
				return err
			}
			if reason != "" {
				out.Skipped = append(out.Skipped, skipped(*f.Event, f.JobID, string(reason)))
				continue
			}
			again = append(again, f.JobID)
			out.ByState[f.State]++
			out.Count++
		}
		if len(again) == 0 {
			return nil
		}
		return tx.Deliveries().Requeue(ctx, id, again)
	})
	if err != nil {
		return RedeliverOutput{}, fmt.Errorf("redeliver to endpoint %s: %w", id, err)
	}
	return out, nil
}

// EventTypes lists the types whose Exposure is Webhook.
func (s *Service) EventTypes() op.List[EventTypeView] {
	all := domain.WebhookEventTypes()
	out := op.List[EventTypeView]{Data: make([]EventTypeView, len(all))}
	for i, t := range all {
		out.Data[i] = EventTypeView{Name: t.Name, Domain: t.Domain, Description: t.Description, Producer: t.Producer,
			Publishable: t.Publishable(), DataSchema: json.RawMessage(t.DataSchema), Example: json.RawMessage(t.ExampleBody())}
	}
	return out
}
