package webhook_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/domain/standardwebhooks"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

func TestValidateFilterChecksFieldsAgainstTheSubscribedTypes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		types  []string
		filter string
		field  string // "" when valid
	}{
		{"note op", []string{"corpus.note.changed"}, `{"data.op":{"$eq":"deleted"}}`, ""},
		{"type and subject always", []string{"code.issued"}, `{"type":"code.issued","subject":{"$glob":"code/*"}}`, ""},
		{"a glob's types", []string{"code.*"}, `{"data.code_id":{"$exists":true}}`, ""},
		{"one of several types has it", []string{"code.issued", "corpus.note.changed"}, `{"data.op":"created"}`, ""},
		{"unknown field", []string{"corpus.note.changed"}, `{"data.opp":"deleted"}`, "filter.data.opp"},
		{"field of an unsubscribed type", []string{"code.issued"}, `{"data.op":"deleted"}`, "filter.data.op"},
		{"below a scalar", []string{"corpus.note.changed"}, `{"data.op.x":"deleted"}`, "filter.data.op.x"},
		{"inside $or", []string{"corpus.note.changed"}, `{"$or":[{"data.op":"x"},{"data.nope":1}]}`, "filter.data.nope"},
		{"bad operator", []string{"corpus.note.changed"}, `{"data.op":{"$regex":"x"}}`, "filter.data.op"},
		{"not an object", []string{"corpus.note.changed"}, `[1]`, "filter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := webhook.ValidateFilter(json.RawMessage(c.filter), c.types)
			if c.field == "" {
				require.NoError(t, err)
				require.NotEmpty(t, got)
				return
			}
			requireCode(t, err, webhook.CodeInvalidFilter)
			require.Equal(t, c.field, domain.AsError(err).Field)
			if strings.HasPrefix(c.field, "filter.") {
				require.Contains(t, err.Error(), strings.TrimPrefix(c.field, "filter."))
			}
		})
	}
	for _, none := range []string{``, `null`, `{}`} {
		got, err := webhook.ValidateFilter(json.RawMessage(none), []string{"*"})
		require.NoError(t, err)
		require.Nil(t, got)
	}
}

func TestCreateAndUpdateKeepTheFilterValid(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	ctx := context.Background()
	_, err := b.svc.Create(ctx, b.owner, webhook.CreateInput{URL: "https://example.com/h", EventTypes: []string{"corpus.note.changed"},
		Filter: json.RawMessage(`{"data.nope":1}`)})
	requireCode(t, err, webhook.CodeInvalidFilter)
	require.Empty(t, b.store.Endpoints(), "a refused create stores nothing")

	ep, err := b.svc.Create(ctx, b.owner, webhook.CreateInput{URL: "https://example.com/h", EventTypes: []string{"corpus.note.changed"},
		Filter: json.RawMessage(`{ "data.op" : { "$eq" : "deleted" } }`)})
	require.NoError(t, err)
	require.JSONEq(t, `{"data.op":{"$eq":"deleted"}}`, string(ep.Filter))
	require.JSONEq(t, `{"data.op":{"$eq":"deleted"}}`, string(stored(t, b.store, ep.ID).Filter))

	// New types must keep the filter's fields.
	_, err = b.svc.Update(ctx, b.owner, webhook.UpdateInput{ID: ep.ID, EventTypes: []string{"code.issued"}})
	requireCode(t, err, webhook.CodeInvalidFilter)
	require.Equal(t, []string{"corpus.note.changed"}, stored(t, b.store, ep.ID).EventTypes, "a refused update changes nothing")

	var in webhook.UpdateInput
	require.NoError(t, json.Unmarshal([]byte(`{"filter":null,"event_types":["code.issued"]}`), &in))
	in.ID = ep.ID
	v, err := b.svc.Update(ctx, b.owner, in)
	require.NoError(t, err)
	require.Equal(t, "null", string(v.Filter))
	require.Nil(t, stored(t, b.store, ep.ID).Filter)
}

func TestEd25519EndpointShowsOnlyItsPublicKey(t *testing.T) {
	t.Parallel()
	b := setupService(t)
	ctx := context.Background()
	_, err := b.svc.Create(ctx, b.owner, webhook.CreateInput{URL: "https://example.com/h", EventTypes: []string{"*"}, Signing: "rsa"})
	requireCode(t, err, webhook.CodeInvalidSigning)

	ep, err := b.svc.Create(ctx, b.owner, webhook.CreateInput{URL: "https://example.com/h", EventTypes: []string{"*"}, Signing: webhook.SigningEd25519})
	require.NoError(t, err)
	require.Empty(t, ep.Secret, "the private key is never shown")
	require.Equal(t, webhook.SigningEd25519, ep.Signing)
	require.NotNil(t, ep.PublicKey)
	e := stored(t, b.store, ep.ID)
	sk := unsealFor(t, e.SecretSealed, ep.ID)
	require.True(t, strings.HasPrefix(sk, standardwebhooks.SigningKeyPrefix), "the private key is stored sealed")
	k, err := standardwebhooks.ParseKey(sk)
	require.NoError(t, err)
	require.Equal(t, *ep.PublicKey, k.PublicKey())

	out, err := b.svc.RotateSecret(ctx, b.owner, ep.ID, op.ActorOwner)
	require.NoError(t, err)
	require.Empty(t, out.Secret)
	require.True(t, strings.HasPrefix(out.PublicKey, standardwebhooks.PublicKeyPrefix))
	v, err := b.svc.Get(ctx, b.owner, ep.ID)
	require.NoError(t, err)
	require.Equal(t, out.PublicKey, *v.PublicKey)
	require.Equal(t, *ep.PublicKey, *v.PreviousPublicKey, "the previous key is shown during the grace")

	hm, err := b.svc.Create(ctx, b.owner, webhook.CreateInput{URL: "https://example.com/h", EventTypes: []string{"*"}})
	require.NoError(t, err)
	require.Equal(t, webhook.SigningHMAC, hm.Signing)
	require.Nil(t, hm.PublicKey)
	require.True(t, strings.HasPrefix(hm.Secret, standardwebhooks.SecretPrefix))
}
