package web

import (
	"errors"
	"fmt"

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
	var errs []error
	resolve := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	o.me, err = op.HandleOf[op.Empty, owner.OwnerView](ops, "owner.me")
	resolve(err)
	o.changeEmail, err = op.HandleOf[owner.ChangeEmailInput, owner.OwnerView](ops, "owner.change_email")
	resolve(err)
	o.changePassword, err = op.HandleOf[owner.ChangePasswordInput, op.Empty](ops, "owner.change_password")
	resolve(err)
	o.endSessions, err = op.HandleOf[op.Empty, op.Empty](ops, "owner.end_sessions")
	resolve(err)
	o.sessions, err = op.HandleOf[op.Empty, op.List[owner.SessionView]](ops, "owner.sessions")
	resolve(err)
	o.endSession, err = op.HandleOf[owner.IDInput, op.Empty](ops, "owner.end_session")
	resolve(err)
	o.apiKeys, err = op.HandleOf[op.Empty, op.List[owner.APIKeyView]](ops, "api_keys.list")
	resolve(err)
	o.issueAPIKey, err = op.HandleOf[owner.IssueAPIKeyInput, owner.IssuedAPIKeyView](ops, "api_keys.issue")
	resolve(err)
	o.revokeAPIKey, err = op.HandleOf[owner.IDInput, op.Empty](ops, "api_keys.revoke")
	resolve(err)
	o.ipBans, err = op.HandleOf[owner.ListBansInput, op.Page[owner.IPBanView]](ops, "ip_bans.list")
	resolve(err)
	o.liftBan, err = op.HandleOf[owner.IDInput, op.Empty](ops, "ip_bans.lift")
	resolve(err)
	o.requestUpgrade, err = op.HandleOf[owner.UpgradeInput, owner.UpgradeRequest](ops, "instance.request_upgrade")
	resolve(err)
	if len(errs) > 0 {
		return nil, fmt.Errorf("web: the account pages need the owner's ops: %w", errors.Join(errs...))
	}
	return &o, nil
}
