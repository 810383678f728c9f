package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/inbound/supplier"
)

// connection is a supplier connection as the contract returns it.
type connection struct {
	ID          uuid.UUID  `json:"id"`
	SourceID    uuid.UUID  `json:"source_id"`
	Name        string     `json:"name"`
	Supplier    string     `json:"supplier"`
	Status      string     `json:"status"`
	ActivatedAt *time.Time `json:"activated_at"`
	CreatedAt   time.Time  `json:"created_at"`
}

type suppliersData struct {
	Connections []connection
	Sources     []source
	// SourceNames maps a source id to its name.
	SourceNames map[uuid.UUID]string
	Name        string
	Supplier    string
	SourceID    string
	CSRF        string
}

func (h *Handler) suppliersRender(c echo.Context, s *Session, status int, d suppliersData, formErr error) error {
	ctx := c.Request().Context()
	conns, err := h.listConnections(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	if h.inbound == nil {
		return h.fail(c, s, notDeclared("inbound_sources.list"))
	}
	srcs, err := h.inbound.list.Call(ctx, s.Caller, op.PageInput{Limit: 100})
	if err != nil {
		return h.fail(c, s, err)
	}
	d.Connections, d.CSRF = conns, s.CSRFToken
	d.SourceNames = map[uuid.UUID]string{}
	for _, v := range srcs.Data {
		d.Sources = append(d.Sources, sourceOf(v))
		d.SourceNames[v.ID] = v.Name
	}
	v := view{Title: "Supplier connections", Section: "suppliers", Session: s, Notice: notice(c), Data: d}
	if formErr != nil {
		status, v.Error = h.describe(c, formErr)
	}
	return h.render(c, status, "suppliers", v)
}

func (h *Handler) suppliersPage(c echo.Context, s *Session) error {
	return h.suppliersRender(c, s, http.StatusOK, suppliersData{SourceID: c.QueryParam("source")}, nil)
}

func (h *Handler) supplierCreate(c echo.Context, s *Session) error {
	d := suppliersData{Name: strings.TrimSpace(c.FormValue("name")), Supplier: strings.TrimSpace(c.FormValue("supplier")), SourceID: c.FormValue("source_id")}
	src, err := uuid.Parse(d.SourceID)
	if err != nil {
		return h.suppliersRender(c, s, 0, d, domain.Validation("INVALID_ID", "choose the inbound source the supplier sends to").WithField("source_id"))
	}
	if h.suppliers == nil {
		return h.fail(c, s, notDeclared("supplier_connections.create"))
	}
	in := supplier.CreateInput{Name: d.Name, Supplier: d.Supplier, SourceID: src}
	if _, err := h.suppliers.create.Call(c.Request().Context(), s.Caller, in); err != nil {
		return h.suppliersRender(c, s, 0, d, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/suppliers?notice=supplier_connected")
}

func (h *Handler) supplierDelete(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if h.suppliers == nil {
		return h.fail(c, s, notDeclared("supplier_connections.delete"))
	}
	if !confirmed(c) {
		conn, err := h.suppliers.get.Call(c.Request().Context(), s.Caller, supplier.IDInput{ID: id})
		if err != nil {
			return h.fail(c, s, err)
		}
		return h.confirm(c, s, "suppliers", confirmData{
			Heading: "Remove supplier connection?", Action: "/admin/suppliers/" + id.String() + "/delete", Button: "Remove connection", Back: "/admin/suppliers", Danger: true,
			Lines: []string{"The connection \u201c" + conn.Name + "\u201d is removed and supplier.disconnected is recorded. Its inbound source stays, with its secret and inbox: messages keep arriving there and are marked done without activating anything."},
		})
	}
	if _, err := h.suppliers.delete.Call(c.Request().Context(), s.Caller, supplier.IDInput{ID: id}); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/suppliers?notice=supplier_removed")
}
