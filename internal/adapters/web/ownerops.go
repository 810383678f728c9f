package web

import (
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner"
)

// ownerOps are the owner domain's ops as the account and API key pages call
// them: typed handles, resolved once when the UI is built.
type ownerOps struct {
	me             op.Handle[op.Empty, owner.OwnerView]
	changeEmail    op.Handle[owner.ChangeEmailInput, owner.OwnerView]
	changePassword op.Handle[owner.ChangePasswordInput, op.Empty]
	endSessions    op.Handle[op.Empty, op.Empty]
	sessions       op.Handle[op.Empty, op.List[owner.SessionView]]
	endSession     op.Handle[owner.IDInput, op.Empty]
	apiKeys        op.Handle[op.Empty, op.List[owner.APIKeyView]]
	issueAPIKey    op.Handle[owner.IssueAPIKeyInput, owner.IssuedAPIKeyView]
	revokeAPIKey   op.Handle[owner.IDInput, op.Empty]
	ipBans         op.Handle[owner.ListBansInput, op.Page[owner.IPBanView]]
	liftBan        op.Handle[owner.IDInput, op.Empty]
	requestUpgrade op.Handle[owner.UpgradeInput, owner.UpgradeRequest]
}

// ownerOpsOf resolves the owner pages' handles in ops. It returns nil when
// ops has no account section (no owner.me), and fails, naming the op, when
// the section is there but one of its ops is missing or has other types.
func ownerOpsOf(ops op.Set) (*ownerOps, error) {
	if _, ok := ops.Find("owner.me"); !ok {
		return nil, nil
	}
	var o ownerOps
	hs := handles{ops: ops}
	bind(&hs, &o.me, "owner.me")
	bind(&hs, &o.changeEmail, "owner.change_email")
	bind(&hs, &o.changePassword, "owner.change_password")
	bind(&hs, &o.endSessions, "owner.end_sessions")
	bind(&hs, &o.sessions, "owner.sessions")
	bind(&hs, &o.endSession, "owner.end_session")
	bind(&hs, &o.apiKeys, "api_keys.list")
	bind(&hs, &o.issueAPIKey, "api_keys.issue")
	bind(&hs, &o.revokeAPIKey, "api_keys.revoke")
	bind(&hs, &o.ipBans, "ip_bans.list")
	bind(&hs, &o.liftBan, "ip_bans.lift")
	bind(&hs, &o.requestUpgrade, "instance.request_upgrade")
	if err := hs.err("the account pages need the owner's ops"); err != nil {
		return nil, err
	}
	return &o, nil
}
