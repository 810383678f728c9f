package owner

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain/op"
)

// OwnerView is an owner as the API shows it (never the password hash).
type OwnerView struct {
	ID        uuid.UUID `json:"id"`
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Operator tells whether the owner is the instance's operator (River's
	// UI at /admin/tasks).
	Operator bool `json:"operator"`
}

// ViewOwner returns the API view of o.
func ViewOwner(o Owner) OwnerView {
	return OwnerView{ID: o.ID, Email: o.Email, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt, Operator: o.Operator}
}

// APIKeyView is an API key as listed: never the key, never its digest.
type APIKeyView struct {
	ID         uuid.UUID  `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	// Scopes are the key's scopes; null for a full key.
	Scopes []op.Scope `json:"scopes" doc:"the scopes the key is limited to; null for a full key, which calls every op"`
}

// ViewAPIKey returns the API view of k.
func ViewAPIKey(k APIKey) APIKeyView {
	return APIKeyView{ID: k.ID, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt, Scopes: k.Scopes}
}

// IssuedAPIKeyView is a newly issued key, with the key itself shown this
// once.
type IssuedAPIKeyView struct {
	APIKeyView
	Key string `json:"key"`
}

// IPBanView is a ban as listed.
type IPBanView struct {
	ID        uuid.UUID `json:"id"`
	IP        string    `json:"ip"`
	Reason    string    `json:"reason"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// ViewIPBan returns the API view of b.
func ViewIPBan(b IPBan) IPBanView {
	return IPBanView{ID: b.ID, IP: b.IP, Reason: b.Reason, CreatedAt: b.CreatedAt, ExpiresAt: b.ExpiresAt}
}

// IssueAPIKeyInput is the input of api_keys.issue.
type IssueAPIKeyInput struct {
	Name string `json:"name" doc:"what the key is for, 1 to 100 characters"`
	// Scopes limit the new key; nil (the field left out) issues a full key.
	Scopes []op.Scope `json:"scopes,omitempty" doc:"limit the key to these scopes: read (every op that only reads), publish (events.publish*), webhooks (webhooks.*), inbound (inbound_sources.* and supplier connections), notes (notes.*, search, vault import); leave out for a full key. A scoped key never reaches api_keys.*, the owner's account, sessions or IP bans"`
}

// IDInput names one row by the id in the path.
type IDInput struct {
	ID uuid.UUID `json:"id" path:"id"`
}

// ChangeEmailInput is the input of owner.change_email.
type ChangeEmailInput struct {
	Email           string `json:"email" doc:"the new email"`
	CurrentPassword string `json:"current_password" doc:"the owner's current password"`
}

// UpgradeInput is the input of instance.request_upgrade.
type UpgradeInput struct {
	Note string `json:"note,omitempty" text:"multiline" doc:"optional note for whoever performs the upgrade"`
}

// ListBansInput is the input of ip_bans.list.
type ListBansInput struct {
	op.PageInput
}

// Ops returns the owner domain's ops, declared once for every surface.
func (s *Service) Ops() op.Set {
	return op.Set{
		op.New(op.Meta{
			Name: "owner.me", Summary: "Show the owner the credentials act for",
		}, func(ctx context.Context, c op.Caller, _ op.Empty) (OwnerView, error) {
			o, err := s.Me(ctx, c.OwnerID)
			return ViewOwner(o), err
		}),
		op.New(op.Meta{
			Name: "owner.change_email", Summary: "Change the owner's email (needs the current password)",
		}, func(ctx context.Context, c op.Caller, in ChangeEmailInput) (OwnerView, error) {
			o, err := s.ChangeEmail(ctx, c.OwnerID, in.Email, in.CurrentPassword)
			return ViewOwner(o), err
		}),
		op.New(op.Meta{
			Name: "owner.change_password", Summary: "Change the owner's password (needs the current one); every session ends",
		}, func(ctx context.Context, c op.Caller, in ChangePasswordInput) (op.Empty, error) {
			return op.Empty{}, s.ChangePassword(ctx, c.OwnerID, in.CurrentPassword, in.NewPassword)
		}),
		op.New(op.Meta{
			Name: "owner.end_sessions", Summary: "Sign out every browser session of the owner (API keys stay valid)",
		}, func(ctx context.Context, c op.Caller, _ op.Empty) (op.Empty, error) {
			return op.Empty{}, s.EndSessions(ctx, c.OwnerID)
		}),
		op.New(op.Meta{
			Name: "owner.sessions", Summary: "List the owner's signed-in browser sessions (never their tokens)",
		}, func(ctx context.Context, c op.Caller, _ op.Empty) (op.List[SessionView], error) {
			list, err := s.ListSessions(ctx, c.OwnerID)
			if err != nil {
				return op.List[SessionView]{}, err
			}
			out := op.List[SessionView]{Data: make([]SessionView, 0, len(list))}
			for _, x := range list {
				out.Data = append(out.Data, ViewSession(x))
			}
			return out, nil
		}),
		op.New(op.Meta{
			Name: "owner.end_session", Summary: "Sign out one browser session of the owner",
		}, func(ctx context.Context, c op.Caller, in IDInput) (op.Empty, error) {
			return op.Empty{}, s.EndSession(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "api_keys.list", Summary: "List the owner's API keys (name, prefix, last use; never the key)",
		}, func(ctx context.Context, c op.Caller, _ op.Empty) (op.List[APIKeyView], error) {
			keys, err := s.ListAPIKeys(ctx, c.OwnerID)
			if err != nil {
				return op.List[APIKeyView]{}, err
			}
			out := op.List[APIKeyView]{Data: make([]APIKeyView, 0, len(keys))}
			for _, k := range keys {
				out.Data = append(out.Data, ViewAPIKey(k))
			}
			return out, nil
		}),
		op.New(op.Meta{
			Name: "api_keys.issue", Summary: "Issue an API key; the key is shown in this answer only",
		}, func(ctx context.Context, c op.Caller, in IssueAPIKeyInput) (IssuedAPIKeyView, error) {
			k, err := s.IssueScopedAPIKey(ctx, c.OwnerID, in.Name, in.Scopes)
			if err != nil {
				return IssuedAPIKeyView{}, err
			}
			return IssuedAPIKeyView{APIKeyView: ViewAPIKey(k.APIKey), Key: k.Key}, nil
		}),
		op.New(op.Meta{
			Name: "api_keys.revoke", Summary: "Revoke an API key",
		}, func(ctx context.Context, c op.Caller, in IDInput) (op.Empty, error) {
			return op.Empty{}, s.RevokeAPIKey(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "ip_bans.list", Summary: "List the active IP bans added after repeated failed logins on the owner's account",
		}, func(ctx context.Context, c op.Caller, in ListBansInput) (op.Page[IPBanView], error) {
			p, err := s.ListBans(ctx, c.OwnerID, in.PageInput)
			if err != nil {
				return op.Page[IPBanView]{}, err
			}
			out := op.Page[IPBanView]{Data: make([]IPBanView, 0, len(p.Data)), NextCursor: p.NextCursor}
			for _, b := range p.Data {
				out.Data = append(out.Data, ViewIPBan(b))
			}
			return out, nil
		}),
		op.New(op.Meta{
			Name: "ip_bans.lift", Summary: "Lift an IP ban",
		}, func(ctx context.Context, c op.Caller, in IDInput) (op.Empty, error) {
			return op.Empty{}, s.LiftBan(ctx, c.OwnerID, in.ID)
		}),
		op.New(op.Meta{
			Name: "instance.request_upgrade", Summary: "Ask for the instance to be upgraded (records instance.upgrade_requested)",
		}, func(ctx context.Context, c op.Caller, in UpgradeInput) (UpgradeRequest, error) {
			return s.RequestUpgrade(ctx, c.OwnerID, in.Note)
		}),
	}
}
