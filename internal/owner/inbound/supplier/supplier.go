// Package supplier holds supplier connections: an outside supplier whose
// webhooks reach the instance through one inbound source. It is the first
// real handler of the inbound pipeline, and records its facts like any use
// case, through Record in its own transaction:
//
//   - supplier.connected when a connection is created,
//   - supplier.activated when its source's first verified message is
//     processed (once per connection),
//   - supplier.disconnected when it is removed.
package supplier

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// Errors of the supplier use cases.
var (
	// ErrNotFound (404): no such connection of the owner.
	ErrNotFound = domain.NotFound("SUPPLIER_CONNECTION_NOT_FOUND", "no such supplier connection")
	// ErrSourceNotFound (404): the source does not exist or is not the owner's.
	ErrSourceNotFound = domain.NotFound("INBOUND_SOURCE_NOT_FOUND", "no such inbound source").WithField("source_id")
	// ErrSourceTaken (409): the source already serves another connection.
	ErrSourceTaken = domain.Conflict("INBOUND_SOURCE_CONNECTED", "the inbound source already serves a supplier connection").WithField("source_id")
)

// MaxNameLen bounds names and supplier labels.
const MaxNameLen = 200

// Connection is a supplier connection.
type Connection struct {
	ID       uuid.UUID
	OwnerID  uuid.UUID
	SourceID uuid.UUID
	Name     string
	// Supplier is an optional label naming the supplier ("acme-logistics").
	Supplier string
	// ActivatedAt is when the first verified message was processed; zero
	// until then.
	ActivatedAt time.Time
	CreatedAt   time.Time
}

// Subject is the events' subject for the connection.
func (c Connection) Subject() string { return "supplier://" + c.ID.String() }

// UnitOfWork runs fn in one transaction.
type UnitOfWork interface {
	Do(ctx context.Context, fn func(tx Tx) error) error
}

// Tx hands out the store and the Recorder bound to one transaction.
type Tx interface {
	Connections() Store
	Recorder() domain.Recorder
}

// Store keeps connections, scoped by owner.
type Store interface {
	// Insert adds c; ErrSourceNotFound when c.SourceID is not one of the
	// owner's sources, ErrSourceTaken when it already has a connection.
	Insert(ctx context.Context, c Connection) error
	Get(ctx context.Context, ownerID, id uuid.UUID) (Connection, error)
	// List returns connections newest first (created_at, id).
	List(ctx context.Context, ownerID uuid.UUID, q inbound.PageQuery) ([]Connection, error)
	// Delete removes the connection and returns it as it was.
	Delete(ctx context.Context, ownerID, id uuid.UUID) (Connection, error)
	// Activate sets ActivatedAt on the connection of the owner's source when
	// it is still zero; activated is false when there is no such connection
	// or it was active already.
	Activate(ctx context.Context, ownerID, sourceID uuid.UUID, at time.Time) (c Connection, activated bool, err error)
}

// Service holds the supplier connection use cases.
type Service struct {
	uow   UnitOfWork
	clock domain.Clock
}

// NewService builds the service.
func NewService(uow UnitOfWork, clock domain.Clock) *Service {
	if clock == nil {
		clock = domain.SystemClock{}
	}
	return &Service{uow: uow, clock: clock}
}

// View is a connection as the admin surfaces show it.
type View struct {
	ID       uuid.UUID `json:"id"`
	SourceID uuid.UUID `json:"source_id"`
	Name     string    `json:"name"`
	Supplier string    `json:"supplier"`
	// Status is "connected" until the first verified message, then "active".
	Status      string     `json:"status"`
	ActivatedAt *time.Time `json:"activated_at"`
	CreatedAt   time.Time  `json:"created_at"`
	// ReceiveURL is the source's receive URL, to give the supplier.
	ReceiveURL string `json:"receive_url"`
}

func viewOf(c Connection) View {
	v := View{ID: c.ID, SourceID: c.SourceID, Name: c.Name, Supplier: c.Supplier, Status: "connected", CreatedAt: c.CreatedAt,
		ReceiveURL: "/hooks/" + c.SourceID.String()}
	if !c.ActivatedAt.IsZero() {
		at := c.ActivatedAt
		v.Status, v.ActivatedAt = "active", &at
	}
	return v
}

// CreateInput creates a connection on an existing inbound source.
type CreateInput struct {
	Name     string    `json:"name"`
	Supplier string    `json:"supplier,omitempty" doc:"optional label naming the supplier"`
	SourceID uuid.UUID `json:"source_id" doc:"the inbound source the supplier sends to"`
}

// IDInput names one connection.
type IDInput struct {
	ID uuid.UUID `json:"id" path:"id"`
}

// eventData is the thin payload of the supplier.* events.
type eventData struct {
	ConnectionID uuid.UUID `json:"connection_id"`
	SourceID     uuid.UUID `json:"source_id"`
	MessageID    string    `json:"message_id,omitempty"`
}

func dataOf(c Connection) eventData {
	return eventData{ConnectionID: c.ID, SourceID: c.SourceID}
}

// Create connects a supplier through one of the owner's sources and records
// supplier.connected in the same transaction.
func (s *Service) Create(ctx context.Context, ownerID uuid.UUID, in CreateInput) (View, error) {
	name, err := validText("name", in.Name, true)
	if err != nil {
		return View{}, err
	}
	label, err := validText("supplier", in.Supplier, false)
	if err != nil {
		return View{}, err
	}
	if in.SourceID == uuid.Nil {
		return View{}, domain.Validation("INVALID_SOURCE_ID", "source_id is required").WithField("source_id")
	}
	id, err := uuid.NewV7()
	if err != nil {
		id = uuid.New()
	}
	c := Connection{ID: id, OwnerID: ownerID, SourceID: in.SourceID, Name: name, Supplier: label, CreatedAt: s.clock.Now()}
	err = s.uow.Do(ctx, func(tx Tx) error {
		if err := tx.Connections().Insert(ctx, c); err != nil {
			return err
		}
		_, err := tx.Recorder().Record(ctx, ownerID, domain.EventSupplierConnected, c.Subject(), dataOf(c))
		return err
	})
	if err != nil {
		return View{}, fmt.Errorf("create supplier connection: %w", err)
	}
	return viewOf(c), nil
}

// Get returns one connection.
func (s *Service) Get(ctx context.Context, ownerID, id uuid.UUID) (View, error) {
	var c Connection
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		c, err = tx.Connections().Get(ctx, ownerID, id)
		return err
	})
	if err != nil {
		return View{}, notFound(err)
	}
	return viewOf(c), nil
}

// List pages through the owner's connections, newest first.
func (s *Service) List(ctx context.Context, ownerID uuid.UUID, in op.PageInput) (op.Page[View], error) {
	after, err := inbound.ParseCursor(in.Cursor)
	if err != nil {
		return op.Page[View]{}, err
	}
	limit := in.NormalizedLimit()
	var rows []Connection
	err = s.uow.Do(ctx, func(tx Tx) error {
		var err error
		rows, err = tx.Connections().List(ctx, ownerID, inbound.PageQuery{Limit: limit, After: after})
		return err
	})
	if err != nil {
		return op.Page[View]{}, fmt.Errorf("list supplier connections: %w", err)
	}
	page := op.NewPage(rows, limit, func(c Connection) string { return inbound.Cursor{At: c.CreatedAt, ID: c.ID}.String() })
	out := op.Page[View]{Data: make([]View, len(page.Data)), NextCursor: page.NextCursor}
	for i, c := range page.Data {
		out.Data[i] = viewOf(c)
	}
	return out, nil
}

// Delete removes a connection (its source stays) and records
// supplier.disconnected in the same transaction.
func (s *Service) Delete(ctx context.Context, ownerID, id uuid.UUID) error {
	err := s.uow.Do(ctx, func(tx Tx) error {
		c, err := tx.Connections().Delete(ctx, ownerID, id)
		if err != nil {
			return err
		}
		_, err = tx.Recorder().Record(ctx, ownerID, domain.EventSupplierDisconnected, c.Subject(), dataOf(c))
		return err
	})
	if err != nil {
		return notFound(err)
	}
	return nil
}

// Route is the inbound route of supplier connections: a verified message of
// any source kind whose source has a connection not activated yet reaches
// HandleInbound, which activates it; other messages are admitted done, with
// no processing job.
func (s *Service) Route() inbound.Route {
	return inbound.Route{Name: "supplier.activate", Kind: inbound.AnyKind, EventType: "*", Handler: inbound.HandlerFunc(s.HandleInbound),
		When: inbound.IfActivationPending}
}

// HandleInbound activates the connection of m's source, if it has one and it
// is not active yet, and records supplier.activated in the same transaction.
// It is idempotent: a second message, or the same one again, changes nothing.
func (s *Service) HandleInbound(ctx context.Context, m inbound.Message) error {
	return s.uow.Do(ctx, func(tx Tx) error {
		c, activated, err := tx.Connections().Activate(ctx, m.OwnerID, m.SourceID, m.ReceivedAt)
		if err != nil || !activated {
			return err
		}
		data := dataOf(c)
		data.MessageID = m.ID.String()
		_, err = tx.Recorder().Record(ctx, m.OwnerID, domain.EventSupplierActivated, c.Subject(), data)
		return err
	})
}

// Ops declares the supplier connection ops once.
func (s *Service) Ops() op.Set {
	return op.Set{
		op.New(op.Meta{Name: "supplier_connections.list", Scopes: op.ReadsIn(op.ScopeInbound), Summary: "List supplier connections"},
			func(ctx context.Context, c op.Caller, in op.PageInput) (op.Page[View], error) {
				return s.List(ctx, c.OwnerID, in)
			}),
		op.New(op.Meta{Name: "supplier_connections.create", Scopes: op.WritesIn(op.ScopeInbound), Summary: "Connect a supplier through an inbound source",
			Description: "Records supplier.connected; the first verified message on the source records supplier.activated."},
			func(ctx context.Context, c op.Caller, in CreateInput) (View, error) {
				return s.Create(ctx, c.OwnerID, in)
			}),
		op.New(op.Meta{Name: "supplier_connections.get", Scopes: op.ReadsIn(op.ScopeInbound), Summary: "Get a supplier connection"},
			func(ctx context.Context, c op.Caller, in IDInput) (View, error) { return s.Get(ctx, c.OwnerID, in.ID) }),
		op.New(op.Meta{Name: "supplier_connections.delete", Scopes: op.WritesIn(op.ScopeInbound), Summary: "Remove a supplier connection (its source stays)",
			Description: "Records supplier.disconnected."},
			func(ctx context.Context, c op.Caller, in IDInput) (op.Empty, error) {
				return op.Empty{}, s.Delete(ctx, c.OwnerID, in.ID)
			}),
	}
}

func notFound(err error) error {
	if errors.Is(err, domain.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

func validText(field, s string, required bool) (string, error) {
	s = strings.TrimSpace(s)
	if (required && s == "") || len(s) > MaxNameLen {
		lo := 0
		if required {
			lo = 1
		}
		return "", domain.Validation("INVALID_"+strings.ToUpper(field), fmt.Sprintf("%s must be %d..%d characters", field, lo, MaxNameLen)).WithField(field)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return "", domain.Validation("INVALID_"+strings.ToUpper(field), field+" must not contain control characters").WithField(field)
		}
	}
	return s, nil
}
