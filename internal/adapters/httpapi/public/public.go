// Package public serves the routes anyone may call, without owner
// credentials: search of the published slice (GET /api/search), redeeming an
// access code (POST /api/access/redeem) and asking for access (POST
// /api/access-requests).
//
// Which owner: a StandMeet instance normally has one owner, and the public
// routes act for it. When an instance has several, a request names one with
// ?owner=<id>; without it such an instance answers 400 OWNER_REQUIRED. An
// unknown ?owner= is 404, as is an instance with no owner yet.
package public

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// Paths of the public routes.
const (
	SearchPath         = "/api/search"
	RedeemPath         = "/api/access/redeem"
	AccessRequestsPath = "/api/access-requests"
)

// maxBody caps a public request body: these are a few short fields.
const maxBody = 16 << 10

// ResolveOwnerFunc names the owner a public request acts for: requested is
// the ?owner= parameter ("" when absent).
type ResolveOwnerFunc func(ctx context.Context, requested string) (uuid.UUID, error)

// SearchFunc searches an owner's published slice.
type SearchFunc func(ctx context.Context, ownerID uuid.UUID, q string, limit int) ([]corpus.SearchHit, error)

// RedeemFunc redeems an access code.
type RedeemFunc func(ctx context.Context, value string) (access.Redeemed, error)

// RequestAccessFunc stores a visitor's access request (rate-limited by
// clientKey).
type RequestAccessFunc func(ctx context.Context, ownerID uuid.UUID, in access.RequestInput, clientKey string) (access.AccessRequest, error)

// ClientIPFunc returns the address a request came from (the owner domain's
// gate knows which proxies to trust).
type ClientIPFunc func(r *http.Request) string

// Deps are what the public routes are built from.
type Deps struct {
	ResolveOwner  ResolveOwnerFunc
	Search        SearchFunc
	Redeem        RedeemFunc
	RequestAccess RequestAccessFunc
	// ClientIP defaults to the TCP peer.
	ClientIP ClientIPFunc
	Logger   *zap.Logger
}

// Mounter mounts the public routes.
type Mounter struct {
	d Deps
}

var _ httpapi.Mounter = (*Mounter)(nil)

// New returns the public routes.
func New(d Deps) *Mounter {
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	if d.ClientIP == nil {
		d.ClientIP = peer
	}
	return &Mounter{d: d}
}

func peer(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// Mount implements httpapi.Mounter.
func (m *Mounter) Mount(e *echo.Echo) {
	e.GET(SearchPath, m.search)
	e.POST(RedeemPath, m.redeem)
	e.POST(AccessRequestsPath, m.requestAccess)
}

// Hit is one public search result: no id, no draft, never raw.
type Hit struct {
	URI     string       `json:"uri"`
	Genre   corpus.Genre `json:"genre"`
	Title   string       `json:"title"`
	Excerpt string       `json:"excerpt"`
	Rank    float64      `json:"rank"`
}

func (m *Mounter) fail(c echo.Context, err error) error {
	return httpapi.WriteError(c, m.d.Logger, err)
}

func (m *Mounter) search(c echo.Context) error {
	ctx := c.Request().Context()
	owner, err := m.d.ResolveOwner(ctx, c.QueryParam("owner"))
	if err != nil {
		return m.fail(c, err)
	}
	limit := 0
	if l := c.QueryParam("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil {
			return m.fail(c, domain.Validation("INVALID_QUERY", "limit must be an integer").WithField("limit"))
		}
	}
	hits, err := m.d.Search(ctx, owner, c.QueryParam("q"), limit)
	if err != nil {
		return m.fail(c, err)
	}
	out := make([]Hit, 0, len(hits))
	for _, h := range hits {
		out = append(out, Hit{URI: h.URI, Genre: h.Genre, Title: h.Title, Excerpt: h.Excerpt, Rank: h.Rank})
	}
	return c.JSON(http.StatusOK, map[string]any{"data": out})
}

// decode reads a small JSON body into v through the ops' input gate
// (op.DecodeJSON, then op.Check): valid UTF-8, one JSON value, no unknown
// field, no NUL in any string.
func decode(c echo.Context, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return domain.TooLarge("PAYLOAD_TOO_LARGE", "request body is over the limit")
		}
		return domain.Validation("BAD_REQUEST", "cannot read the request body")
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return domain.Validation(op.CodeInvalidJSON, "request body is empty")
	}
	if err := op.DecodeJSON(body, v); err != nil {
		return err
	}
	return op.Check(v)
}

// RedeemInput is the body of POST /api/access/redeem.
type RedeemInput struct {
	Code string `json:"code"`
}

// RedeemOutput says what a valid code grants.
type RedeemOutput struct {
	Role          string     `json:"role"`
	PublishedOnly bool       `json:"published_only"`
	ExpiresAt     *time.Time `json:"expires_at"`
}

func (m *Mounter) redeem(c echo.Context) error {
	var in RedeemInput
	if err := decode(c, &in); err != nil {
		return m.fail(c, err)
	}
	r, err := m.d.Redeem(c.Request().Context(), in.Code)
	if err != nil {
		return m.fail(c, err)
	}
	return c.JSON(http.StatusOK, RedeemOutput{Role: r.RoleName, PublishedOnly: r.PublishedOnly, ExpiresAt: r.ExpiresAt})
}

// AccessRequestInput is the body of POST /api/access-requests.
type AccessRequestInput struct {
	Name    string `json:"name"`
	Email   string `json:"email"`
	Message string `json:"message,omitempty" text:"multiline"`
}

// AccessRequestOutput acknowledges a stored request.
type AccessRequestOutput struct {
	ID        uuid.UUID            `json:"id"`
	Status    access.RequestStatus `json:"status"`
	CreatedAt time.Time            `json:"created_at"`
}

func (m *Mounter) requestAccess(c echo.Context) error {
	ctx := c.Request().Context()
	var in AccessRequestInput
	if err := decode(c, &in); err != nil {
		return m.fail(c, err)
	}
	owner, err := m.d.ResolveOwner(ctx, c.QueryParam("owner"))
	if err != nil {
		return m.fail(c, err)
	}
	key := access.ClientKey(owner, m.d.ClientIP(c.Request()))
	r, err := m.d.RequestAccess(ctx, owner, access.RequestInput{Name: in.Name, Email: in.Email, Message: in.Message}, key)
	if err != nil {
		return m.fail(c, err)
	}
	return c.JSON(http.StatusCreated, AccessRequestOutput{ID: r.ID, Status: r.Status, CreatedAt: r.CreatedAt})
}
