package web

import (
	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// accessOps are the access domain's ops as the Access pages call them:
// typed handles, resolved once when the UI is built.
type accessOps struct {
	roles       op.Handle[op.Empty, op.List[access.RoleView]]
	createRole  op.Handle[access.RoleInputView, access.RoleView]
	updateRole  op.Handle[access.RolePatchView, access.RoleView]
	deleteRole  op.Handle[access.ID, op.Empty]
	codes       op.Handle[op.PageInput, op.Page[access.CodeView]]
	issueCode   op.Handle[access.IssueInputView, access.IssuedCodeView]
	getCode     op.Handle[access.ID, access.CodeView]
	revokeCode  op.Handle[access.ID, access.CodeView]
	checkCode   op.Handle[access.CheckInputView, access.CheckView]
	embeds      op.Handle[op.Empty, op.List[access.EmbedView]]
	createEmbed op.Handle[access.EmbedInputView, access.EmbedView]
	deleteEmbed op.Handle[access.ID, op.Empty]
	requests    op.Handle[access.ListRequestsInput, op.Page[access.AccessRequestView]]
	approve     op.Handle[access.ApproveInputView, access.ApprovedView]
	reject      op.Handle[access.ID, access.AccessRequestView]
}

// accessOpsOf resolves the Access pages' handles in ops. It returns nil
// when ops has no access section (no roles.list), and fails, naming the op,
// when the section is there but one of its ops is missing or has other
// types.
func accessOpsOf(ops op.Set) (*accessOps, error) {
	if _, ok := ops.Find("roles.list"); !ok {
		return nil, nil
	}
	var o accessOps
	hs := handles{ops: ops}
	bind(&hs, &o.roles, "roles.list")
	bind(&hs, &o.createRole, "roles.create")
	bind(&hs, &o.updateRole, "roles.update")
	bind(&hs, &o.deleteRole, "roles.delete")
	bind(&hs, &o.codes, "codes.list")
	bind(&hs, &o.issueCode, "codes.issue")
	bind(&hs, &o.getCode, "codes.get")
	bind(&hs, &o.revokeCode, "codes.revoke")
	bind(&hs, &o.checkCode, "codes.check")
	bind(&hs, &o.embeds, "embeds.list")
	bind(&hs, &o.createEmbed, "embeds.create")
	bind(&hs, &o.deleteEmbed, "embeds.delete")
	bind(&hs, &o.requests, "access_requests.list")
	bind(&hs, &o.approve, "access_requests.approve")
	bind(&hs, &o.reject, "access_requests.reject")
	if err := hs.err("the access pages need the access domain's ops"); err != nil {
		return nil, err
	}
	return &o, nil
}
