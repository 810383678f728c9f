package owner_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner"
)

func TestIssueAPIKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")

	k, err := b.svc.IssueAPIKey(ctx, a.ID, "  ci deploys ")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(k.Key, "smk_"))
	require.Equal(t, "ci deploys", k.Name)
	require.Equal(t, k.Key[:12], k.Prefix)
	require.Equal(t, owner.DigestOf(k.Key), k.KeyHash)

	evs := b.eventsOf(domain.EventAPIKeyIssued)
	require.Len(t, evs, 1)
	require.Equal(t, a.ID, evs[0].OwnerID)
	require.Equal(t, "api_key/"+k.ID.String(), evs[0].Subject)
	require.NotContains(t, string(evs[0].Data), k.Key, "the key never reaches an event")

	keys, err := b.svc.ListAPIKeys(ctx, a.ID)
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.Equal(t, k.APIKey, keys[0])

	for _, name := range []string{"", "   ", strings.Repeat("n", owner.MaxAPIKeyNameLen+1)} {
		_, err := b.svc.IssueAPIKey(ctx, a.ID, name)
		requireCode(t, err, domain.KindValidation, owner.CodeInvalidName)
	}
}

func TestIssueAPIKeyForEmail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	k, err := b.svc.IssueAPIKeyForEmail(ctx, "A@example.com", "cli", nil)
	require.NoError(t, err)
	require.Equal(t, a.ID, k.OwnerID)
	_, err = b.svc.IssueAPIKeyForEmail(ctx, "nobody@example.com", "cli", nil)
	requireCode(t, err, domain.KindNotFound, owner.CodeOwnerNotFound)
	scoped, err := b.svc.IssueAPIKeyForEmail(ctx, "a@example.com", "cli read", []op.Scope{op.ScopeRead})
	require.NoError(t, err)
	require.Equal(t, op.Scopes{op.ScopeRead}, scoped.Scopes)
	_, err = b.svc.IssueAPIKeyForEmail(ctx, "a@example.com", "cli bad", []op.Scope{"everything"})
	requireCode(t, err, domain.KindValidation, owner.CodeInvalidScopes)
}

func TestIssueAPIKeyRollsBackWhenRecordFails(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	b.mem.Recorder().Fail(func(string) error { return errors.New("recorder down") })
	_, err := b.svc.IssueAPIKey(ctx, a.ID, "ci")
	require.Error(t, err)
	keys, err := b.svc.ListAPIKeys(ctx, a.ID)
	require.NoError(t, err)
	require.Empty(t, keys)
	_, err = b.svc.AuthenticateAPIKey(ctx, "smk_"+b.tokens.lastToken())
	requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidAPIKey)
}

func TestAuthenticateAPIKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	k, err := b.svc.IssueAPIKey(ctx, a.ID, "ci")
	require.NoError(t, err)

	got, err := b.svc.AuthenticateAPIKey(ctx, k.Key)
	require.NoError(t, err)
	require.Equal(t, a.ID, got.OwnerID)
	first := b.clock.Now()
	keys, err := b.svc.ListAPIKeys(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, &first, keys[0].LastUsedAt)

	// Within the interval the use is not written again; after it, it is.
	b.clock.Advance(30 * time.Second)
	_, err = b.svc.AuthenticateAPIKey(ctx, k.Key)
	require.NoError(t, err)
	keys, err = b.svc.ListAPIKeys(ctx, a.ID)
	require.NoError(t, err)
	require.Equal(t, &first, keys[0].LastUsedAt)
	b.clock.Advance(31 * time.Second)
	_, err = b.svc.AuthenticateAPIKey(ctx, k.Key)
	require.NoError(t, err)
	keys, err = b.svc.ListAPIKeys(ctx, a.ID)
	require.NoError(t, err)
	later := b.clock.Now()
	require.Equal(t, &later, keys[0].LastUsedAt)

	for _, bad := range []string{"", "smk_", "smk_nope", k.Key + "x", strings.TrimPrefix(k.Key, "smk_"), "Bearer " + k.Key} {
		_, err := b.svc.AuthenticateAPIKey(ctx, bad)
		requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidAPIKey)
	}
}

func TestRevokeAPIKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	other := b.newOwner(t, "b@example.com")
	k, err := b.svc.IssueAPIKey(ctx, a.ID, "ci")
	require.NoError(t, err)

	requireCode(t, b.svc.RevokeAPIKey(ctx, other.ID, k.ID), domain.KindNotFound, "NOT_FOUND")
	_, err = b.svc.AuthenticateAPIKey(ctx, k.Key)
	require.NoError(t, err, "another owner cannot revoke it")
	otherKeys, err := b.svc.ListAPIKeys(ctx, other.ID)
	require.NoError(t, err)
	require.Empty(t, otherKeys)

	require.NoError(t, b.svc.RevokeAPIKey(ctx, a.ID, k.ID))
	require.NoError(t, b.svc.RevokeAPIKey(ctx, a.ID, k.ID), "revoking twice is fine")
	evs := b.eventsOf(domain.EventAPIKeyRevoked)
	require.Len(t, evs, 1, "and records once")
	require.Equal(t, a.ID, evs[0].OwnerID)

	_, err = b.svc.AuthenticateAPIKey(ctx, k.Key)
	requireCode(t, err, domain.KindUnauthorized, owner.CodeInvalidAPIKey)
	keys, err := b.svc.ListAPIKeys(ctx, a.ID)
	require.NoError(t, err)
	require.NotNil(t, keys[0].RevokedAt)
}

func TestIssueScopedAPIKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")

	k, err := b.svc.IssueScopedAPIKey(ctx, a.ID, "inbox reader", []op.Scope{op.ScopeInbound, op.ScopeRead})
	require.NoError(t, err)
	require.Equal(t, op.Scopes{op.ScopeRead, op.ScopeInbound}, k.Scopes, "kept in the order of op.AllScopes")

	got, err := b.svc.AuthenticateAPIKey(ctx, k.Key)
	require.NoError(t, err)
	require.Equal(t, op.Scopes{op.ScopeRead, op.ScopeInbound}, got.Scopes, "authentication hands the scopes on")

	full, err := b.svc.IssueAPIKey(ctx, a.ID, "deploys")
	require.NoError(t, err)
	require.Nil(t, full.Scopes, "a key issued without scopes is a full key")
	got, err = b.svc.AuthenticateAPIKey(ctx, full.Key)
	require.NoError(t, err)
	require.Nil(t, got.Scopes)

	keys, err := b.svc.ListAPIKeys(ctx, a.ID)
	require.NoError(t, err)
	require.Len(t, keys, 2)
	views := map[string][]op.Scope{}
	for _, x := range keys {
		views[x.Name] = owner.ViewAPIKey(x).Scopes
	}
	require.Equal(t, map[string][]op.Scope{"inbox reader": {op.ScopeRead, op.ScopeInbound}, "deploys": nil}, views,
		"the list shows each key's scopes, none for a full key")
	require.Len(t, b.eventsOf(domain.EventAPIKeyIssued), 2)
}

func TestIssueScopedAPIKeyRefusesBadScopesAndChangesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	cases := []struct {
		scopes []op.Scope
		field  string
		msg    string
	}{
		{[]op.Scope{}, "scopes", "at least one scope"},
		{[]op.Scope{"admin"}, "scopes[0]", `unknown scope "admin"`},
		{[]op.Scope{op.ScopeRead, "READ"}, "scopes[1]", `unknown scope "READ"`},
		{[]op.Scope{op.ScopeWebhooks, op.ScopeRead, op.ScopeWebhooks}, "scopes[2]", `"webhooks" is named twice`},
		{[]op.Scope{""}, "scopes[0]", "unknown scope"},
	}
	for _, tc := range cases {
		_, err := b.svc.IssueScopedAPIKey(ctx, a.ID, "ci", tc.scopes)
		requireCode(t, err, domain.KindValidation, owner.CodeInvalidScopes)
		e := domain.AsError(err)
		require.Equal(t, tc.field, e.Field, "%v", tc.scopes)
		require.Contains(t, e.Message, tc.msg, "%v", tc.scopes)
	}
	keys, err := b.svc.ListAPIKeys(ctx, a.ID)
	require.NoError(t, err)
	require.Empty(t, keys, "a refused issue stores no key")
	require.Empty(t, b.eventsOf(domain.EventAPIKeyIssued), "and records no event")
}

func TestIssueAPIKeyOpTakesScopes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.newOwner(t, "a@example.com")
	issue, err := op.HandleOf[owner.IssueAPIKeyInput, owner.IssuedAPIKeyView](b.svc.Ops(), "api_keys.issue")
	require.NoError(t, err)

	out, err := issue.Call(ctx, op.Caller{OwnerID: a.ID}, owner.IssueAPIKeyInput{Name: "pub", Scopes: []op.Scope{op.ScopePublish}})
	require.NoError(t, err)
	require.Equal(t, []op.Scope{op.ScopePublish}, out.Scopes)

	_, err = issue.Call(ctx, op.Caller{OwnerID: a.ID}, owner.IssueAPIKeyInput{Name: "bad", Scopes: []op.Scope{"everything"}})
	requireCode(t, err, domain.KindValidation, owner.CodeInvalidScopes)

	// A scoped key cannot issue keys, not even one with its own scopes: no
	// key climbs to more than it was given.
	_, err = issue.Call(ctx, op.Caller{OwnerID: a.ID, APIKeyID: out.ID, Scopes: op.AllScopes}, owner.IssueAPIKeyInput{Name: "escalate"})
	requireCode(t, err, domain.KindForbidden, op.CodeForbiddenScope)
	keys, err := b.svc.ListAPIKeys(ctx, a.ID)
	require.NoError(t, err)
	require.Len(t, keys, 1, "only the first issue stored a key")
}
