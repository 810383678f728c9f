package access_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/access/accesstest"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/entity"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// clock is a controllable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type testBundle struct {
	svc   *access.Service
	mem   *accesstest.Memory
	clock *clock
	owner uuid.UUID
	ctx   context.Context
}

func setup(t *testing.T) testBundle {
	t.Helper()
	mem := accesstest.NewMemory()
	c := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	return testBundle{svc: access.New(access.Deps{UoW: mem, Clock: c}), mem: mem, clock: c, owner: uuid.New(), ctx: context.Background()}
}

func (b testBundle) recorded(typ string) []accesstest.Event {
	var out []accesstest.Event
	for _, e := range b.mem.Events() {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func (b testBundle) role(t *testing.T, globs []string, publishedOnly bool) access.Role {
	t.Helper()
	r, err := b.svc.CreateRole(b.ctx, b.owner, access.RoleInput{Name: "role-" + uuid.NewString()[:8], URIGlobs: globs, PublishedOnly: publishedOnly})
	require.NoError(t, err)
	return r
}

func (b testBundle) code(t *testing.T, roleID uuid.UUID, deny []string, expires *time.Time) access.IssuedCode {
	t.Helper()
	c, err := b.svc.IssueCode(b.ctx, b.owner, access.IssueInput{RoleID: roleID, DenyGlobs: deny, ExpiresAt: expires})
	require.NoError(t, err)
	return c
}

func (b testBundle) embed(t *testing.T, codeID uuid.UUID) access.Embed {
	t.Helper()
	e, err := b.svc.CreateEmbed(b.ctx, b.owner, access.EmbedInput{CodeID: codeID, Name: "site"})
	require.NoError(t, err)
	return e
}

func requireCode(t *testing.T, err error, kind domain.Kind, code string) {
	t.Helper()
	de := domain.AsError(err)
	require.NotNil(t, de, "want domain error %s, got %v", code, err)
	require.Equal(t, code, de.Code, "%v", err)
	require.Equal(t, kind, de.Kind, "%v", err)
}

// TestEmbedAdmits is the predicate table as an embed sees it: role globs
// minus the code's denials, published-only, revoked, expired, deleted, raw.
func TestEmbedAdmits(t *testing.T) {
	t.Parallel()
	pub := func(uri string) entity.CorpusEntry { return entity.CorpusEntry{URI: uri, Published: true} }
	draft := func(uri string) entity.CorpusEntry { return entity.CorpusEntry{URI: uri} }
	cases := []struct {
		name          string
		globs, deny   []string
		publishedOnly bool
		change        func(t *testing.T, b testBundle, code access.IssuedCode, embed access.Embed)
		entry         entity.CorpusEntry
		want          bool
	}{
		{name: "role glob admits", globs: []string{"wiki://software/*"}, publishedOnly: true, entry: pub("wiki://software/standmeet"), want: true},
		{name: "outside the globs", globs: []string{"wiki://software/*"}, publishedOnly: true, entry: pub("wiki://life/x")},
		{name: "second glob admits", globs: []string{"wiki://software/*", "writing://*"}, publishedOnly: true, entry: pub("writing://essay"), want: true},
		{name: "the code's deny wins", globs: []string{"wiki://*"}, deny: []string{"wiki://private/*"}, publishedOnly: true, entry: pub("wiki://private/diary")},
		{name: "deny elsewhere", globs: []string{"wiki://*"}, deny: []string{"wiki://private/*"}, publishedOnly: true, entry: pub("wiki://public/x"), want: true},
		{name: "published-only refuses a draft", globs: []string{"*"}, publishedOnly: true, entry: draft("wiki://a")},
		{name: "a full reader sees a draft", globs: []string{"*"}, entry: draft("wiki://a"), want: true},
		{name: "raw never", globs: []string{"*"}, entry: pub("raw://inbox/1")},
		{name: "revoked code admits nothing", globs: []string{"*"}, entry: pub("wiki://a"),
			change: func(t *testing.T, b testBundle, c access.IssuedCode, _ access.Embed) {
				_, err := b.svc.RevokeCode(b.ctx, b.owner, c.Code.ID)
				require.NoError(t, err)
			}},
		{name: "expired code admits nothing", globs: []string{"*"}, entry: pub("wiki://a"),
			change: func(t *testing.T, b testBundle, _ access.IssuedCode, _ access.Embed) { b.clock.advance(25 * time.Hour) }},
		{name: "deleted embed admits nothing", globs: []string{"*"}, entry: pub("wiki://a"),
			change: func(t *testing.T, b testBundle, _ access.IssuedCode, e access.Embed) {
				require.NoError(t, b.svc.DeleteEmbed(b.ctx, b.owner, e.ID))
			}},
		{name: "a re-scoped role applies at once", globs: []string{"*"}, entry: pub("wiki://a"),
			change: func(t *testing.T, b testBundle, c access.IssuedCode, _ access.Embed) {
				_, err := b.svc.UpdateRole(b.ctx, b.owner, c.Code.RoleID, access.RolePatch{URIGlobs: &[]string{"writing://*"}})
				require.NoError(t, err)
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			r := b.role(t, c.globs, c.publishedOnly)
			expires := b.clock.Now().Add(24 * time.Hour)
			code := b.code(t, r.ID, c.deny, &expires)
			e := b.embed(t, code.Code.ID)
			ok, err := b.svc.EmbedAdmits(b.ctx, e.ID, entity.CorpusEntry{URI: "wiki://software/x", Published: true})
			require.NoError(t, err)
			if c.change != nil {
				require.Equal(t, domain.MatchAnyGlob(c.globs, "wiki://software/x") && !domain.MatchAnyGlob(c.deny, "wiki://software/x"), ok,
					"before the change the embed follows its role")
				c.change(t, b, code, e)
			}
			got, err := b.svc.EmbedAdmits(b.ctx, e.ID, c.entry)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
	b := setup(t)
	ok, err := b.svc.EmbedAdmits(b.ctx, uuid.New(), entity.CorpusEntry{URI: "wiki://a", Published: true})
	require.NoError(t, err)
	require.False(t, ok, "an unknown embed admits nothing")
}

func TestEmbedBelongsTo(t *testing.T) {
	t.Parallel()
	b := setup(t)
	e := b.embed(t, b.code(t, b.role(t, []string{"*"}, true).ID, nil, nil).Code.ID)
	ok, err := b.svc.EmbedBelongsTo(b.ctx, b.owner, e.ID)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = b.svc.EmbedBelongsTo(b.ctx, uuid.New(), e.ID)
	require.NoError(t, err)
	require.False(t, ok)
	ok, err = b.svc.EmbedBelongsTo(b.ctx, b.owner, uuid.New())
	require.NoError(t, err)
	require.False(t, ok)
}

func TestRolesValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   access.RoleInput
		code string
	}{
		{"no name", access.RoleInput{URIGlobs: []string{"*"}}, "REQUIRED"},
		{"no globs", access.RoleInput{Name: "r"}, "REQUIRED"},
		{"empty glob", access.RoleInput{Name: "r", URIGlobs: []string{" "}}, "INVALID_GLOB"},
		{"raw glob", access.RoleInput{Name: "r", URIGlobs: []string{"RAW://*"}}, "RAW_NEVER_ADMITTED"},
		{"long name", access.RoleInput{Name: strings.Repeat("n", access.MaxNameLen+1), URIGlobs: []string{"*"}}, "TOO_LONG"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			_, err := b.svc.CreateRole(b.ctx, b.owner, c.in)
			requireCode(t, err, domain.KindValidation, c.code)
		})
	}
	b := setup(t)
	r := b.role(t, []string{"*"}, true)
	_, err := b.svc.CreateRole(b.ctx, b.owner, access.RoleInput{Name: r.Name, URIGlobs: []string{"*"}})
	requireCode(t, err, domain.KindConflict, "ROLE_NAME_TAKEN")
	b.code(t, r.ID, nil, nil)
	requireCode(t, b.svc.DeleteRole(b.ctx, b.owner, r.ID), domain.KindConflict, "ROLE_IN_USE")
	unused := b.role(t, []string{"*"}, false)
	require.NoError(t, b.svc.DeleteRole(b.ctx, b.owner, unused.ID))
	roles, err := b.svc.ListRoles(b.ctx, b.owner)
	require.NoError(t, err)
	require.Len(t, roles, 1)
	require.Len(t, b.mem.Events(), 1, "roles record no events (only the code did)")
}

func TestIssueCode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.role(t, []string{"wiki://*"}, true)
	expires := b.clock.Now().Add(time.Hour)
	ic, err := b.svc.IssueCode(b.ctx, b.owner, access.IssueInput{RoleID: r.ID, Label: " for Ann ", DenyGlobs: []string{"wiki://private/*"}, ExpiresAt: &expires})
	require.NoError(t, err)
	require.Regexp(t, `^smac_[a-z2-7]{32}$`, ic.Value)
	sum := sha256.Sum256([]byte(ic.Value))
	require.Equal(t, sum[:], ic.Code.Hash, "stored hashed")
	require.True(t, strings.HasPrefix(ic.Value, ic.Code.Prefix))
	require.Equal(t, "for Ann", ic.Code.Label)
	require.Equal(t, "active", ic.Code.Status(b.clock.Now()))

	evs := b.recorded(domain.EventCodeIssued)
	require.Len(t, evs, 1)
	require.Equal(t, "code/"+ic.Code.ID.String(), evs[0].Subject)
	require.NotContains(t, string(evs[0].Data), ic.Value, "the value never goes into an event")
	var data access.CodeIssuedData
	require.NoError(t, json.Unmarshal(evs[0].Data, &data))
	require.Equal(t, ic.Code.ID, data.CodeID)
	require.Equal(t, r.ID, data.RoleID)

	other, err := b.svc.IssueCode(b.ctx, b.owner, access.IssueInput{RoleID: r.ID})
	require.NoError(t, err)
	require.NotEqual(t, ic.Value, other.Value)

	_, err = b.svc.IssueCode(b.ctx, b.owner, access.IssueInput{RoleID: uuid.New()})
	requireCode(t, err, domain.KindUnprocessable, "UNKNOWN_ROLE")
	_, err = b.svc.IssueCode(b.ctx, uuid.New(), access.IssueInput{RoleID: r.ID})
	requireCode(t, err, domain.KindUnprocessable, "UNKNOWN_ROLE")
	past := b.clock.Now().Add(-time.Second)
	_, err = b.svc.IssueCode(b.ctx, b.owner, access.IssueInput{RoleID: r.ID, ExpiresAt: &past})
	requireCode(t, err, domain.KindValidation, "EXPIRES_IN_PAST")
	_, err = b.svc.IssueCode(b.ctx, b.owner, access.IssueInput{RoleID: r.ID, DenyGlobs: []string{""}})
	requireCode(t, err, domain.KindValidation, "INVALID_GLOB")
	require.Len(t, b.recorded(domain.EventCodeIssued), 2, "refused issues record nothing")

	codes, next, err := b.svc.ListCodes(b.ctx, b.owner, op.PageInput{Limit: 1})
	require.NoError(t, err)
	require.Len(t, codes, 1)
	require.NotEmpty(t, next)
	codes, next, err = b.svc.ListCodes(b.ctx, b.owner, op.PageInput{Limit: 1, Cursor: next})
	require.NoError(t, err)
	require.Len(t, codes, 1)
	require.Empty(t, next)
}

func TestRevokeAndRedeem(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.role(t, []string{"wiki://*"}, true)
	expires := b.clock.Now().Add(time.Hour)
	ic := b.code(t, r.ID, nil, &expires)

	red, err := b.svc.Redeem(b.ctx, "  "+ic.Value+" ")
	require.NoError(t, err)
	require.Equal(t, access.Redeemed{CodeID: ic.Code.ID, OwnerID: b.owner, RoleName: r.Name, PublishedOnly: true, ExpiresAt: ic.Code.ExpiresAt}, red)
	evs := b.recorded(domain.EventCodeRedeemed)
	require.Len(t, evs, 1)
	require.Equal(t, b.owner, evs[0].OwnerID)
	c, err := b.svc.GetCode(b.ctx, b.owner, ic.Code.ID)
	require.NoError(t, err)
	require.Equal(t, 1, c.RedeemCount)

	for _, bad := range []string{"", "smac_nope", "not-a-code", ic.Value + "x", strings.Repeat("smac_", 30)} {
		_, err := b.svc.Redeem(b.ctx, bad)
		requireCode(t, err, domain.KindUnauthorized, "INVALID_CODE")
	}

	revoked, err := b.svc.RevokeCode(b.ctx, b.owner, ic.Code.ID)
	require.NoError(t, err)
	require.Equal(t, "revoked", revoked.Status(b.clock.Now()))
	again, err := b.svc.RevokeCode(b.ctx, b.owner, ic.Code.ID)
	require.NoError(t, err)
	require.Equal(t, revoked.RevokedAt, again.RevokedAt)
	require.Len(t, b.recorded(domain.EventCodeRevoked), 1, "revoking twice records once")
	_, err = b.svc.Redeem(b.ctx, ic.Value)
	requireCode(t, err, domain.KindUnauthorized, "INVALID_CODE")
	_, err = b.svc.RevokeCode(b.ctx, uuid.New(), ic.Code.ID)
	require.ErrorIs(t, err, domain.ErrNotFound)

	expiring := b.code(t, r.ID, nil, &expires)
	b.clock.advance(time.Hour)
	_, err = b.svc.Redeem(b.ctx, expiring.Value)
	requireCode(t, err, domain.KindUnauthorized, "INVALID_CODE")
	require.Len(t, b.recorded(domain.EventCodeRedeemed), 1, "refused redemptions record nothing")
}

func TestCreateEmbedNeedsAnActiveCodeOfTheOwner(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ic := b.code(t, b.role(t, []string{"*"}, true).ID, nil, nil)
	_, err := b.svc.CreateEmbed(b.ctx, uuid.New(), access.EmbedInput{CodeID: ic.Code.ID, Name: "x"})
	requireCode(t, err, domain.KindUnprocessable, "UNKNOWN_CODE")
	_, err = b.svc.CreateEmbed(b.ctx, b.owner, access.EmbedInput{CodeID: ic.Code.ID})
	requireCode(t, err, domain.KindValidation, "REQUIRED")
	_, err = b.svc.RevokeCode(b.ctx, b.owner, ic.Code.ID)
	require.NoError(t, err)
	_, err = b.svc.CreateEmbed(b.ctx, b.owner, access.EmbedInput{CodeID: ic.Code.ID, Name: "x"})
	requireCode(t, err, domain.KindUnprocessable, "CODE_INACTIVE")
}

func TestAccessRequests(t *testing.T) {
	t.Parallel()
	b := setup(t)
	key := access.ClientKey(b.owner, "203.0.113.7")
	require.NotContains(t, key, "203.0.113.7")
	in := access.RequestInput{Name: "Ann", Email: "ann@example.com", Message: "May I read your wiki?"}
	req, err := b.svc.CreateAccessRequest(b.ctx, b.owner, in, key)
	require.NoError(t, err)
	require.Equal(t, access.RequestPending, req.Status)
	created := b.recorded(domain.EventAccessRequestCreated)
	require.Len(t, created, 1)
	require.JSONEq(t, `{"request_id":"`+req.ID.String()+`"}`, string(created[0].Data), "no personal data in the event")

	_, err = b.svc.CreateAccessRequest(b.ctx, b.owner, access.RequestInput{Name: "Ann", Email: "not an email"}, key)
	requireCode(t, err, domain.KindValidation, "INVALID_EMAIL")
	_, err = b.svc.CreateAccessRequest(b.ctx, b.owner, access.RequestInput{Email: "a@example.com"}, key)
	requireCode(t, err, domain.KindValidation, "REQUIRED")

	r := b.role(t, []string{"wiki://*"}, true)
	approved, err := b.svc.ApproveRequest(b.ctx, b.owner, req.ID, access.IssueInput{RoleID: r.ID})
	require.NoError(t, err)
	require.Equal(t, access.RequestApproved, approved.Request.Status)
	require.Equal(t, approved.Code.Code.ID, *approved.Request.CodeID)
	require.Equal(t, &req.ID, approved.Code.Code.RequestID)
	_, err = b.svc.Redeem(b.ctx, approved.Code.Value)
	require.NoError(t, err, "the issued code works")
	var types []string
	for _, e := range b.mem.Events() {
		types = append(types, e.Type)
	}
	require.Equal(t, []string{domain.EventAccessRequestCreated, domain.EventCodeIssued, domain.EventAccessRequestApproved,
		domain.EventAccessRequestStatusChanged, domain.EventCodeRedeemed}, types)
	status := b.recorded(domain.EventAccessRequestStatusChanged)
	require.JSONEq(t, `{"request_id":"`+req.ID.String()+`","from":"pending","to":"approved"}`, string(status[0].Data))

	_, err = b.svc.ApproveRequest(b.ctx, b.owner, req.ID, access.IssueInput{RoleID: r.ID})
	requireCode(t, err, domain.KindConflict, "REQUEST_NOT_PENDING")
	_, err = b.svc.RejectRequest(b.ctx, b.owner, req.ID)
	requireCode(t, err, domain.KindConflict, "REQUEST_NOT_PENDING")

	second, err := b.svc.CreateAccessRequest(b.ctx, b.owner, in, key)
	require.NoError(t, err)
	_, err = b.svc.ApproveRequest(b.ctx, b.owner, second.ID, access.IssueInput{RoleID: uuid.New()})
	requireCode(t, err, domain.KindUnprocessable, "UNKNOWN_ROLE")
	rejected, err := b.svc.RejectRequest(b.ctx, b.owner, second.ID)
	require.NoError(t, err)
	require.Equal(t, access.RequestRejected, rejected.Status)
	require.Len(t, b.recorded(domain.EventAccessRequestStatusChanged), 2)
	_, err = b.svc.RejectRequest(b.ctx, uuid.New(), second.ID)
	require.ErrorIs(t, err, domain.ErrNotFound)

	list, _, err := b.svc.ListAccessRequests(b.ctx, b.owner, access.RequestRejected, op.PageInput{})
	require.NoError(t, err)
	require.Len(t, list, 1)
	_, _, err = b.svc.ListAccessRequests(b.ctx, b.owner, "lost", op.PageInput{})
	requireCode(t, err, domain.KindValidation, "INVALID_STATUS")
}

func TestAccessRequestsAreRateLimited(t *testing.T) {
	t.Parallel()
	mem := accesstest.NewMemory()
	c := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	svc := access.New(access.Deps{UoW: mem, Clock: c, Limits: access.RequestLimits{PerClient: 2, PerOwner: 3, Window: time.Hour}})
	ctx, owner := context.Background(), uuid.New()
	in := access.RequestInput{Name: "n", Email: "n@example.com"}
	send := func(addr string) error {
		_, err := svc.CreateAccessRequest(ctx, owner, in, access.ClientKey(owner, addr))
		return err
	}
	require.NoError(t, send("192.0.2.1"))
	require.NoError(t, send("192.0.2.1"))
	requireCode(t, send("192.0.2.1"), domain.KindRateLimited, "RATE_LIMITED")
	require.NoError(t, send("192.0.2.2"))
	requireCode(t, send("192.0.2.3"), domain.KindRateLimited, "RATE_LIMITED")
	c.advance(time.Hour + time.Second)
	require.NoError(t, send("192.0.2.1"), "the window moved on")
	require.Len(t, mem.Events(), 4, "refused requests record nothing")
}

func TestARecordFailureRollsBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.role(t, []string{"*"}, true)
	boom := errors.New("recorder down")
	b.mem.Recorder().Fail(func(string) error { return boom })
	_, err := b.svc.IssueCode(b.ctx, b.owner, access.IssueInput{RoleID: r.ID})
	require.ErrorIs(t, err, boom)
	_, err = b.svc.CreateAccessRequest(b.ctx, b.owner, access.RequestInput{Name: "n", Email: "n@example.com"}, "k")
	require.ErrorIs(t, err, boom)
	b.mem.Recorder().Fail(nil)
	codes, _, err := b.svc.ListCodes(b.ctx, b.owner, op.PageInput{})
	require.NoError(t, err)
	require.Empty(t, codes, "the code rolled back with its event")
	reqs, _, err := b.svc.ListAccessRequests(b.ctx, b.owner, "", op.PageInput{})
	require.NoError(t, err)
	require.Empty(t, reqs)
}

func TestCodesComeFromTheRandomSource(t *testing.T) {
	t.Parallel()
	mem := accesstest.NewMemory()
	svc := access.New(access.Deps{UoW: mem, Random: bytes.NewReader(make([]byte, 20))})
	ctx, owner := context.Background(), uuid.New()
	r, err := svc.CreateRole(ctx, owner, access.RoleInput{Name: "r", URIGlobs: []string{"*"}})
	require.NoError(t, err)
	ic, err := svc.IssueCode(ctx, owner, access.IssueInput{RoleID: r.ID})
	require.NoError(t, err)
	require.Equal(t, "smac_"+strings.Repeat("a", 32), ic.Value)
	_, err = svc.IssueCode(ctx, owner, access.IssueInput{RoleID: r.ID})
	require.Error(t, err, "an exhausted random source is an error, not a weak code")
}
