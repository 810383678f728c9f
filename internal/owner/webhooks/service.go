package webhooks

import (
	"context"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
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
	maxEndpoints   int
	egress         EgressCheckFunc
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
	// MaxEndpoints is the soft limit per owner (DefaultMaxEndpoints).
	MaxEndpoints int
	// Egress refuses, at create and update, URLs whose host is an IP
	// literal or localhost the egress policy refuses; nil checks nothing
	// here (the delivery client still does at dial time).
	Egress EgressCheckFunc
}

// NewService builds the Service.
func NewService(d Deps) *Service {
	if d.Clock == nil {
		d.Clock = domain.SystemClock{}
	}
	if d.NewSecret == nil {
		d.NewSecret = standardwebhooks.NewSecret
	}
	if d.MaxEndpoints <= 0 {
		d.MaxEndpoints = DefaultMaxEndpoints
	}
	return &Service{
		uow: d.UnitOfWork, seal: d.Seal, embedBelongsTo: d.EmbedBelongsTo, clock: d.Clock,
		newSecret: d.NewSecret, maxEndpoints: d.MaxEndpoints, egress: d.Egress,
	}
}

func badCursor() error {
	return domain.Validation("INVALID_CURSOR", "cursor is not one this list handed out").WithField("cursor")
}

// List returns a page of the owner's endpoints, oldest first.
func (s *Service) List(ctx context.Context, ownerID uuid.UUID, in ListInput) (op.Page[View], error) {
	after := uuid.Nil
	if in.Cursor != "" {
		id, err := uuid.Parse(in.Cursor)
		if err != nil {
			return op.Page[View]{}, badCursor()
		}
		after = id
	}
	limit := in.NormalizedLimit()
	var rows []Endpoint
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		rows, err = tx.Endpoints().List(ctx, ownerID, after, limit+1)
		return err
	})
	if err != nil {
		return op.Page[View]{}, fmt.Errorf("list endpoints: %w", err)
	}
	views := make([]View, len(rows))
	for i, e := range rows {
		views[i] = ViewOf(e)
	}
	return op.NewPage(views, limit, func(v View) string { return v.ID.String() }), nil
}

// Get returns one endpoint, never its secret.
func (s *Service) Get(ctx context.Context, ownerID, id uuid.UUID) (View, error) {
	var e Endpoint
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		e, err = tx.Endpoints().Get(ctx, ownerID, id, false)
		return err
	})
	if err != nil {
		return View{}, fmt.Errorf("get endpoint %s: %w", id, err)
	}
	return ViewOf(e), nil
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

// newSealedSecret generates a secret and seals it for endpoint id.
func (s *Service) newSealedSecret(id uuid.UUID) (secret string, sealed []byte, err error) {
	secret, err = s.newSecret()
	if err != nil {
		return "", nil, fmt.Errorf("generate secret: %w", err)
	}
	if s.seal == nil {
		return "", nil, fmt.Errorf("seal secret: no seal function")
	}
	sealed, err = s.seal([]byte(secret), id[:])
	if err != nil {
		return "", nil, fmt.Errorf("seal secret: %w", err)
	}
	return secret, sealed, nil
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
	if err := s.checkEmbed(ctx, ownerID, in.EmbedID); err != nil {
		return WithSecret{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return WithSecret{}, fmt.Errorf("new endpoint id: %w", err)
	}
	secret, sealed, err := s.newSealedSecret(id)
	if err != nil {
		return WithSecret{}, err
	}
	if headers, err = s.sealHeaders(id, headers, nil); err != nil {
		return WithSecret{}, err
	}
	now := s.clock.Now()
	e := Endpoint{
		ID: id, OwnerID: ownerID, URL: u, Description: desc, EventTypes: types, EmbedID: in.EmbedID,
		Headers: headers, MaxInFlight: maxInFlight, Enabled: in.Enabled == nil || *in.Enabled,
		SecretSealed: sealed, CreatedAt: now, UpdatedAt: now,
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
	embedChanged, embedID := in.embedChange()
	if embedChanged {
		if err := s.checkEmbed(ctx, ownerID, embedID); err != nil {
			return View{}, err
		}
	}
	var e Endpoint
	err = s.uow.Do(ctx, func(tx Tx) error {
		var err error
		if e, err = tx.Endpoints().Get(ctx, ownerID, in.ID, true); err != nil {
			return err
		}
		if u != nil {
			e.URL = *u
		}
		if desc != nil {
			e.Description = *desc
		}
		if types != nil {
			e.EventTypes = types
		}
		if headers != nil {
			if e.Headers, err = s.sealHeaders(e.ID, headers, e.Headers); err != nil {
				return err
			}
		}
		if in.MaxInFlight != nil {
			e.MaxInFlight = *in.MaxInFlight
		}
		if embedChanged {
			e.EmbedID = embedID
		}
		if in.Enabled != nil {
			if *in.Enabled {
				e.Enabled, e.DisabledReason, e.FailingSince = true, nil, nil
			} else if e.Enabled {
				r := ReasonDisabledByOwner
				e.Enabled, e.DisabledReason = false, &r
			}
		}
		e.UpdatedAt = s.clock.Now()
		return tx.Endpoints().Update(ctx, e)
	})
	if err != nil {
		return View{}, fmt.Errorf("update endpoint %s: %w", in.ID, err)
	}
	return ViewOf(e), nil
}

// Delete removes an endpoint. Its queued deliveries are discarded when
// they run (endpoint gone).
func (s *Service) Delete(ctx context.Context, ownerID, id uuid.UUID) error {
	err := s.uow.Do(ctx, func(tx Tx) error {
		return tx.Endpoints().Delete(ctx, ownerID, id)
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
func (s *Service) RotateSecret(ctx context.Context, ownerID, id uuid.UUID) (SecretOutput, error) {
	secret, sealed, err := s.newSealedSecret(id)
	if err != nil {
		return SecretOutput{}, err
	}
	err = s.uow.Do(ctx, func(tx Tx) error {
		e, err := tx.Endpoints().Get(ctx, ownerID, id, true)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		until := now.Add(SecretGrace)
		e.PrevSecretSealed, e.PrevSecretUntil = e.SecretSealed, &until
		e.SecretSealed = sealed
		e.UpdatedAt = now
		return tx.Endpoints().Update(ctx, e)
	})
	if err != nil {
		return SecretOutput{}, fmt.Errorf("rotate secret of endpoint %s: %w", id, err)
	}
	return SecretOutput{Secret: secret}, nil
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
		e, err := tx.Endpoints().Get(ctx, ownerID, id, false)
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

// Deliveries returns a page of the endpoint's delivery log, newest first.
func (s *Service) Deliveries(ctx context.Context, ownerID uuid.UUID, in DeliveriesInput) (op.Page[Delivery], error) {
	var before int64
	if in.Cursor != "" {
		n, err := strconv.ParseInt(in.Cursor, 10, 64)
		if err != nil || n <= 0 {
			return op.Page[Delivery]{}, badCursor()
		}
		before = n
	}
	limit := in.NormalizedLimit()
	var rows []Delivery
	err := s.uow.Do(ctx, func(tx Tx) error {
		if _, err := tx.Endpoints().Get(ctx, ownerID, in.ID, false); err != nil {
			return err
		}
		var err error
		rows, err = tx.Deliveries().List(ctx, in.ID, before, limit+1)
		return err
	})
	if err != nil {
		return op.Page[Delivery]{}, fmt.Errorf("list deliveries of endpoint %s: %w", in.ID, err)
	}
	for i := range rows {
		rows[i].TaskURL = TaskURL(rows[i].JobID)
	}
	return op.NewPage(rows, limit, func(d Delivery) string { return strconv.FormatInt(d.JobID, 10) }), nil
}

// Redeliver queues again every discarded delivery of the endpoint (River
// states discarded and cancelled), after the receiver was fixed. Each keeps
// its job and its webhook-id, so a receiver that did get it dedupes it. A
// disabled endpoint is refused (ENDPOINT_DISABLED): enable it first.
func (s *Service) Redeliver(ctx context.Context, ownerID, id uuid.UUID) (RedeliverOutput, error) {
	var n int
	err := s.uow.Do(ctx, func(tx Tx) error {
		e, err := tx.Endpoints().Get(ctx, ownerID, id, false)
		if err != nil {
			return err
		}
		if !e.Enabled {
			return domain.Conflict(CodeEndpointDisabled, "the endpoint is disabled; enable it before redelivering")
		}
		n, err = tx.Deliveries().Redeliver(ctx, id)
		return err
	})
	if err != nil {
		return RedeliverOutput{}, fmt.Errorf("redeliver to endpoint %s: %w", id, err)
	}
	return RedeliverOutput{Count: n}, nil
}

// EventTypes lists the types whose Exposure is Webhook.
func (s *Service) EventTypes() op.List[EventTypeView] {
	all := domain.WebhookEventTypes()
	out := op.List[EventTypeView]{Data: make([]EventTypeView, len(all))}
	for i, t := range all {
		out.Data[i] = EventTypeView{Name: t.Name, Domain: t.Domain, Description: t.Description}
	}
	return out
}
