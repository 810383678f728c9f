// Package hook is the HTTP surface of the inbound gateway: POST
// /hooks/{source_id}. It is an httpapi.Mounter; the server skips its global
// body limit under /hooks/, because each source has its own, which the
// gateway enforces while reading.
//
// Statuses (the contract): 202 new message durably in the inbox, 200
// duplicate, 401 bad or missing signature, 400 stale or malformed, 404
// unknown or disabled source, 409 same message id with another payload,
// 413 over the source's body limit, 503 with Retry-After when the database
// cannot be reached (nothing stored). Bad input never yields a 500 or a
// panic.
package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// Path is the route of the gateway.
const Path = "/hooks/:source_id"

// Receiver is the gateway as this adapter uses it (inbound.Gateway).
type Receiver interface {
	Receive(ctx context.Context, sourceID uuid.UUID, req inbound.Request) (inbound.Receipt, error)
}

// Answer is the body of a 2xx answer.
type Answer struct {
	// Status is "accepted" (202) or "duplicate" (200).
	Status string `json:"status"`
	// ID is the inbox message's id, when known.
	ID *uuid.UUID `json:"id,omitempty"`
	// MessageID is the sender's message id.
	MessageID string `json:"message_id"`
}

// Mounter mounts the gateway.
type Mounter struct {
	gw       Receiver
	log      *zap.Logger
	requests *prometheus.CounterVec
	refused  *prometheus.CounterVec
}

var _ httpapi.Mounter = (*Mounter)(nil)

// New returns the Mounter. reg may be nil (no metrics).
func New(gw Receiver, log *zap.Logger, reg prometheus.Registerer) (*Mounter, error) {
	if log == nil {
		log = zap.NewNop()
	}
	m := &Mounter{gw: gw, log: log}
	if reg != nil {
		m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "standmeet_inbound_requests_total",
			Help: "Inbound webhook requests by answer status.",
		}, []string{"status"})
		if err := reg.Register(m.requests); err != nil {
			return nil, err
		}
		m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "standmeet_inbound_refused_total",
			Help: "Inbound webhook requests refused for their input (4xx), by reason: the error code the sender got.",
		}, []string{"reason"})
		if err := reg.Register(m.refused); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Mount adds POST /hooks/:source_id.
func (m *Mounter) Mount(e *echo.Echo) { e.POST(Path, m.receive) }

func (m *Mounter) receive(c echo.Context) error {
	status, err := m.handle(c)
	if m.requests != nil {
		m.requests.WithLabelValues(strconv.Itoa(status)).Inc()
	}
	return err
}

// countRefusal counts a 4xx answer by its error code.
func (m *Mounter) countRefusal(status int, err error) {
	if m.refused == nil || status < 400 || status >= 500 {
		return
	}
	if de := domain.AsError(err); de != nil {
		m.refused.WithLabelValues(de.Code).Inc()
	}
}

// limitedBody reports a body cut by a server-side limit
// (http.MaxBytesReader) as the gateway's ErrBodyTooLarge.
type limitedBody struct{ r io.Reader }

func (b limitedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return n, fmt.Errorf("%w: %w", inbound.ErrBodyTooLarge, err)
	}
	return n, err
}

func (m *Mounter) handle(c echo.Context) (int, error) {
	id, err := uuid.Parse(c.Param("source_id"))
	if err != nil {
		return m.fail(c, inbound.ErrSourceNotFound)
	}
	req := c.Request()
	in := inbound.Request{Headers: domain.Header(req.Header), ContentLength: req.ContentLength}
	if req.Body != nil {
		in.Body = limitedBody{req.Body}
	}
	receipt, err := m.gw.Receive(req.Context(), id, in)
	if err != nil {
		if errors.Is(err, inbound.ErrMessageConflict) {
			// The contract asks for conflicts to be logged: a sender reusing
			// ids, or someone replaying an id with a forged body.
			m.log.Warn("inbound message id conflict", zap.String("source", id.String()),
				zap.String("request_id", httpapi.RequestID(c)), zap.Error(err))
		}
		return m.fail(c, err)
	}
	a := Answer{Status: "accepted", MessageID: receipt.MessageID}
	if receipt.ID != uuid.Nil {
		a.ID = &receipt.ID
	}
	status := http.StatusAccepted
	if receipt.Status == inbound.Duplicate {
		a.Status, status = "duplicate", http.StatusOK
	}
	return status, c.JSON(status, a)
}

// RetryAfter is the Retry-After of a 503, in seconds.
const RetryAfter = "5"

func (m *Mounter) fail(c echo.Context, err error) (int, error) {
	status, werr := m.answer(c, err)
	m.countRefusal(status, err)
	return status, werr
}

func (m *Mounter) answer(c echo.Context, err error) (int, error) {
	if errors.Is(err, inbound.ErrUnavailable) {
		// The sender retries later (providers do on 5xx); nothing was stored.
		m.log.Warn("inbound request refused: the database cannot be reached",
			zap.String("request_id", httpapi.RequestID(c)), zap.Error(err))
		c.Response().Header().Set("Retry-After", RetryAfter)
		return http.StatusServiceUnavailable, c.JSON(http.StatusServiceUnavailable, httpapi.ErrorBody{Error: httpapi.ErrorDetail{
			Code: inbound.ErrUnavailable.Code, Message: inbound.ErrUnavailable.Message}})
	}
	status := http.StatusInternalServerError
	if de := domain.AsError(err); de != nil {
		status = httpapi.StatusOf(de.Kind)
	}
	return status, httpapi.WriteError(c, m.log, err)
}
