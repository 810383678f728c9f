package access

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain/entity"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// RoleView is a role as the API shows it.
type RoleView struct {
	ID            uuid.UUID `json:"id"`
	Name          string    `json:"name"`
	URIGlobs      []string  `json:"uri_globs"`
	PublishedOnly bool      `json:"published_only"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

func roleView(r Role) RoleView {
	return RoleView{ID: r.ID, Name: r.Name, URIGlobs: nonNil(r.URIGlobs), PublishedOnly: r.PublishedOnly, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// CodeView is a code as the API shows it: never its value or hash.
type CodeView struct {
	ID             uuid.UUID  `json:"id"`
	RoleID         uuid.UUID  `json:"role_id"`
	Label          string     `json:"label"`
	Prefix         string     `json:"prefix"`
	DenyGlobs      []string   `json:"deny_globs"`
	ExpiresAt      *time.Time `json:"expires_at"`
	RevokedAt      *time.Time `json:"revoked_at"`
	Status         string     `json:"status" doc:"active, expired or revoked"`
	RequestID      *uuid.UUID `json:"request_id"`
	RedeemCount    int        `json:"redeem_count"`
	LastRedeemedAt *time.Time `json:"last_redeemed_at"`
	CreatedAt      time.Time  `json:"created_at"`
}

func codeView(c Code, now time.Time) CodeView {
	return CodeView{ID: c.ID, RoleID: c.RoleID, Label: c.Label, Prefix: c.Prefix, DenyGlobs: nonNil(c.DenyGlobs),
		ExpiresAt: c.ExpiresAt, RevokedAt: c.RevokedAt, Status: c.Status(now), RequestID: c.RequestID,
		RedeemCount: c.RedeemCount, LastRedeemedAt: c.LastRedeemedAt, CreatedAt: c.CreatedAt}
}

// IssuedCodeView is a new code with its value, shown this once.
type IssuedCodeView struct {
	CodeView
	Code string `json:"code" doc:"the code's value; shown only in this answer"`
}

// EmbedView is an embed as the API shows it.
type EmbedView struct {
	ID        uuid.UUID `json:"id"`
	CodeID    uuid.UUID `json:"code_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

func embedView(e Embed) EmbedView {
	return EmbedView{ID: e.ID, CodeID: e.CodeID, Name: e.Name, CreatedAt: e.CreatedAt}
}

// AccessRequestView is an access request as the admin API shows it.
type AccessRequestView struct {
	ID        uuid.UUID     `json:"id"`
	Name      string        `json:"name"`
	Email     string        `json:"email"`
	Message   string        `json:"message"`
	Status    RequestStatus `json:"status"`
	CodeID    *uuid.UUID    `json:"code_id"`
	CreatedAt time.Time     `json:"created_at"`
	UpdatedAt time.Time     `json:"updated_at"`
}

// RequestView returns the admin view of r.
func RequestView(r AccessRequest) AccessRequestView {
	return AccessRequestView{ID: r.ID, Name: r.Name, Email: r.Email, Message: r.Message, Status: r.Status,
		CodeID: r.CodeID, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// ApprovedView is an approved request with the code issued for it.
type ApprovedView struct {
	Request AccessRequestView `json:"request"`
	Code    IssuedCodeView    `json:"code"`
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ID addresses one row.
type ID struct {
	ID uuid.UUID `json:"id" path:"id"`
}

// RoleInputView is the body of roles.create.
type RoleInputView struct {
	Name          string   `json:"name"`
	URIGlobs      []string `json:"uri_globs" text:"glob" doc:"URI globs the role may read, e.g. wiki://software/*"`
	PublishedOnly bool     `json:"published_only,omitempty" doc:"read only the published slice"`
}

// RolePatchView is the body of roles.update.
type RolePatchView struct {
	ID            uuid.UUID `json:"id" path:"id"`
	Name          *string   `json:"name,omitempty"`
	URIGlobs      *[]string `json:"uri_globs,omitempty" text:"glob"`
	PublishedOnly *bool     `json:"published_only,omitempty"`
}

// IssueInputView is the body of codes.issue and access_requests.approve.
type IssueInputView struct {
	RoleID    uuid.UUID  `json:"role_id"`
	Label     string     `json:"label,omitempty"`
	DenyGlobs []string   `json:"deny_globs,omitempty" text:"glob" doc:"URI globs this code may not read, whatever its role allows"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

func (v IssueInputView) input() IssueInput {
	return IssueInput(v)
}

// ApproveInputView is the body of access_requests.approve.
type ApproveInputView struct {
	ID uuid.UUID `json:"id" path:"id"`
	IssueInputView
}

// EmbedInputView is the body of embeds.create.
type EmbedInputView struct {
	CodeID uuid.UUID `json:"code_id"`
	Name   string    `json:"name"`
}

// CheckInputView is the body of codes.check: a corpus entry to test the
// code against.
type CheckInputView struct {
	ID        uuid.UUID `json:"id" path:"id"`
	URI       string    `json:"uri" doc:"the note's URI (the event's subject), e.g. wiki://software/go"`
	Published bool      `json:"published,omitempty" doc:"whether the note is in the published slice"`
}

// CheckView is the answer of codes.check.
type CheckView struct {
	Admitted   bool          `json:"admitted"`
	Reason     VerdictReason `json:"reason" doc:"admitted, code_revoked, code_expired, raw, unpublished, no_role_glob or denied"`
	Glob       string        `json:"glob,omitempty" doc:"the role glob that admits, or the code's deny glob that refuses"`
	CodeStatus string        `json:"code_status" doc:"active, expired or revoked"`
	Explain    string        `json:"explain"`
}

// CheckViewOf is the API's view of a verdict.
func CheckViewOf(v Verdict) CheckView {
	return CheckView{Admitted: v.Admitted, Reason: v.Reason, Glob: v.Glob, CodeStatus: v.CodeStatus, Explain: v.Explain()}
}

// ListRequestsInput filters and pages access requests.
type ListRequestsInput struct {
	op.PageInput
	Status RequestStatus `json:"status,omitempty" query:"status" doc:"pending, approved or rejected"`
}

// Ops declares the access ops once; every surface projects them.
func (s *Service) Ops() op.Set {
	issued := func(c IssuedCode) IssuedCodeView {
		return IssuedCodeView{CodeView: codeView(c.Code, s.now()), Code: c.Value}
	}
	return op.Set{
		op.New(op.Meta{Name: "roles.list", Scopes: op.Reads, Summary: "List access roles"},
			func(ctx context.Context, c op.Caller, _ op.Empty) (op.List[RoleView], error) {
				rs, err := s.ListRoles(ctx, c.OwnerID)
				out := op.List[RoleView]{Data: make([]RoleView, 0, len(rs))}
				for _, r := range rs {
					out.Data = append(out.Data, roleView(r))
				}
				return out, err
			}),
		op.New(op.Meta{Name: "roles.create", Summary: "Create an access role"},
			func(ctx context.Context, c op.Caller, in RoleInputView) (RoleView, error) {
				r, err := s.CreateRole(ctx, c.OwnerID, RoleInput(in))
				return roleView(r), err
			}),
		op.New(op.Meta{Name: "roles.update", Summary: "Change an access role (its codes follow at once)"},
			func(ctx context.Context, c op.Caller, in RolePatchView) (RoleView, error) {
				r, err := s.UpdateRole(ctx, c.OwnerID, in.ID, RolePatch{Name: in.Name, URIGlobs: in.URIGlobs, PublishedOnly: in.PublishedOnly})
				return roleView(r), err
			}),
		op.New(op.Meta{Name: "roles.delete", Summary: "Delete an access role no code uses"},
			func(ctx context.Context, c op.Caller, in ID) (op.Empty, error) {
				return op.Empty{}, s.DeleteRole(ctx, c.OwnerID, in.ID)
			}),
		op.New(op.Meta{Name: "codes.list", Scopes: op.Reads, Summary: "List access codes, newest first"},
			func(ctx context.Context, c op.Caller, in op.PageInput) (op.Page[CodeView], error) {
				rows, next, err := s.ListCodes(ctx, c.OwnerID, in)
				if err != nil {
					return op.Page[CodeView]{}, err
				}
				return page(rows, next, func(x Code) CodeView { return codeView(x, s.now()) }), nil
			}),
		op.New(op.Meta{Name: "codes.issue", Summary: "Issue an access code (its value is shown once)"},
			func(ctx context.Context, c op.Caller, in IssueInputView) (IssuedCodeView, error) {
				ic, err := s.IssueCode(ctx, c.OwnerID, in.input())
				return issued(ic), err
			}),
		op.New(op.Meta{Name: "codes.get", Scopes: op.Reads, Summary: "Get an access code (never its value)"},
			func(ctx context.Context, c op.Caller, in ID) (CodeView, error) {
				code, err := s.GetCode(ctx, c.OwnerID, in.ID)
				return codeView(code, s.now()), err
			}),
		op.New(op.Meta{Name: "codes.revoke", Summary: "Revoke an access code; its embeds admit nothing"},
			func(ctx context.Context, c op.Caller, in ID) (CodeView, error) {
				code, err := s.RevokeCode(ctx, c.OwnerID, in.ID)
				return codeView(code, s.now()), err
			}),
		op.New(op.Meta{Name: "codes.check", Scopes: op.Reads, Summary: "Tell whether a code admits a note now, and why",
			Description: "Answers from the code's current state and role with the decision embed-scoped webhook endpoints " +
				"are delivered by: revoked and expired codes admit nothing, raw:// never, a published-only role no unpublished " +
				"note, then the role's globs minus the code's deny globs. Changes nothing."},
			func(ctx context.Context, c op.Caller, in CheckInputView) (CheckView, error) {
				v, err := s.CheckCode(ctx, c.OwnerID, in.ID, entity.CorpusEntry{URI: in.URI, Published: in.Published})
				return CheckViewOf(v), err
			}),
		op.New(op.Meta{Name: "embeds.list", Scopes: op.Reads, Summary: "List embeds"},
			func(ctx context.Context, c op.Caller, _ op.Empty) (op.List[EmbedView], error) {
				es, err := s.ListEmbeds(ctx, c.OwnerID)
				out := op.List[EmbedView]{Data: make([]EmbedView, 0, len(es))}
				for _, e := range es {
					out.Data = append(out.Data, embedView(e))
				}
				return out, err
			}),
		op.New(op.Meta{Name: "embeds.create", Summary: "Create an embed exposing one access code"},
			func(ctx context.Context, c op.Caller, in EmbedInputView) (EmbedView, error) {
				e, err := s.CreateEmbed(ctx, c.OwnerID, EmbedInput(in))
				return embedView(e), err
			}),
		op.New(op.Meta{Name: "embeds.delete", Summary: "Delete an embed; it admits nothing from then on"},
			func(ctx context.Context, c op.Caller, in ID) (op.Empty, error) {
				return op.Empty{}, s.DeleteEmbed(ctx, c.OwnerID, in.ID)
			}),
		op.New(op.Meta{Name: "access_requests.list", Scopes: op.Reads, Summary: "List access requests, newest first"},
			func(ctx context.Context, c op.Caller, in ListRequestsInput) (op.Page[AccessRequestView], error) {
				rows, next, err := s.ListAccessRequests(ctx, c.OwnerID, in.Status, in.PageInput)
				if err != nil {
					return op.Page[AccessRequestView]{}, err
				}
				return page(rows, next, RequestView), nil
			}),
		op.New(op.Meta{Name: "access_requests.approve", Summary: "Approve an access request: issues a code (shown once)"},
			func(ctx context.Context, c op.Caller, in ApproveInputView) (ApprovedView, error) {
				a, err := s.ApproveRequest(ctx, c.OwnerID, in.ID, in.input())
				return ApprovedView{Request: RequestView(a.Request), Code: issued(a.Code)}, err
			}),
		op.New(op.Meta{Name: "access_requests.reject", Summary: "Reject an access request"},
			func(ctx context.Context, c op.Caller, in ID) (AccessRequestView, error) {
				r, err := s.RejectRequest(ctx, c.OwnerID, in.ID)
				return RequestView(r), err
			}),
	}
}

func page[T, V any](rows []T, next string, view func(T) V) op.Page[V] {
	out := op.Page[V]{Data: make([]V, 0, len(rows))}
	for _, r := range rows {
		out.Data = append(out.Data, view(r))
	}
	if next != "" {
		out.NextCursor = &next
	}
	return out
}
