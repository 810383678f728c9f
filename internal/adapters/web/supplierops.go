package web

import (
	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/inbound/supplier"
)

// supplierOps are the supplier connection ops as the supplier pages call
// them: typed handles, resolved once when the UI is built.
type supplierOps struct {
	list   op.Handle[op.PageInput, op.Page[supplier.View]]
	create op.Handle[supplier.CreateInput, supplier.View]
	get    op.Handle[supplier.IDInput, supplier.View]
	delete op.Handle[supplier.IDInput, op.Empty]
}

// supplierOpsOf resolves the supplier pages' handles in ops. It returns nil
// when ops has no supplier section (no supplier_connections.list), and
// fails, naming the op, when the section is there but one of its ops is
// missing or has other types.
func supplierOpsOf(ops op.Set) (*supplierOps, error) {
	if _, ok := ops.Find("supplier_connections.list"); !ok {
		return nil, nil
	}
	var o supplierOps
	hs := handles{ops: ops}
	bind(&hs, &o.list, "supplier_connections.list")
	bind(&hs, &o.create, "supplier_connections.create")
	bind(&hs, &o.get, "supplier_connections.get")
	bind(&hs, &o.delete, "supplier_connections.delete")
	if err := hs.err("the supplier pages need the supplier connection ops"); err != nil {
		return nil, err
	}
	return &o, nil
}

// connectionOf is the page's view of a connection.
func connectionOf(v supplier.View) connection {
	return connection{ID: v.ID, SourceID: v.SourceID, Name: v.Name, Supplier: v.Supplier, Status: v.Status, ActivatedAt: v.ActivatedAt, CreatedAt: v.CreatedAt}
}

// listConnections returns the owner's supplier connections, at most 100.
func (h *Handler) listConnections(c echo.Context, s *Session) ([]connection, error) {
	if h.suppliers == nil {
		return nil, notDeclared("supplier_connections.list")
	}
	p, err := h.suppliers.list.Call(c.Request().Context(), s.Caller, op.PageInput{Limit: 100})
	if err != nil {
		return nil, err
	}
	out := make([]connection, 0, len(p.Data))
	for _, v := range p.Data {
		out = append(out, connectionOf(v))
	}
	return out, nil
}
