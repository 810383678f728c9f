package access_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/entity"
)

// TestCheckCodeAnswersAsTheDeliveryPath asks the scope check about a table
// of notes for codes in every state and requires the answer the webhooks'
// delivery path gets from EmbedAdmits for an embed of the same code, with
// the reason that explains it.
func TestCheckCodeAnswersAsTheDeliveryPath(t *testing.T) {
	t.Parallel()
	notes := []struct {
		name  string
		entry entity.CorpusEntry
		// full and pubOnly are the answers for an active code of a role
		// reading every note, or the published slice only; reason the
		// published-only role's reason.
		full, pubOnly bool
		reason        access.VerdictReason
	}{
		{"published, in the globs", entity.CorpusEntry{URI: "wiki://software/go", Published: true}, true, true, access.VerdictAdmitted},
		{"unpublished, in the globs", entity.CorpusEntry{URI: "wiki://software/draft"}, true, false, access.VerdictUnpublished},
		{"raw", entity.CorpusEntry{URI: "raw://inbox/1", Published: true}, false, false, access.VerdictRaw},
		{"denied glob", entity.CorpusEntry{URI: "wiki://software/secret/key", Published: true}, false, false, access.VerdictDenied},
		{"outside the globs", entity.CorpusEntry{URI: "wiki://life/x", Published: true}, false, false, access.VerdictNoGlob},
	}
	states := []struct {
		name   string
		change func(t *testing.T, b testBundle, code uuid.UUID)
		reason access.VerdictReason
		status string
	}{
		{name: "active", status: "active"},
		{name: "revoked", reason: access.VerdictRevoked, status: "revoked", change: func(t *testing.T, b testBundle, code uuid.UUID) {
			_, err := b.svc.RevokeCode(b.ctx, b.owner, code)
			require.NoError(t, err)
		}},
		{name: "expired", reason: access.VerdictExpired, status: "expired", change: func(t *testing.T, b testBundle, _ uuid.UUID) {
			b.clock.advance(2 * time.Hour)
		}},
	}
	for _, st := range states {
		for _, publishedOnly := range []bool{false, true} {
			for _, n := range notes {
				t.Run(st.name+"/"+n.name, func(t *testing.T) {
					t.Parallel()
					b := setup(t)
					r := b.role(t, []string{"wiki://software/*"}, publishedOnly)
					expires := b.clock.Now().Add(time.Hour)
					code := b.code(t, r.ID, []string{"wiki://software/secret/*"}, &expires)
					e := b.embed(t, code.Code.ID)
					if st.change != nil {
						st.change(t, b, code.Code.ID)
					}
					delivered, err := b.svc.EmbedAdmits(b.ctx, e.ID, n.entry)
					require.NoError(t, err)
					v, err := b.svc.CheckCode(b.ctx, b.owner, code.Code.ID, n.entry)
					require.NoError(t, err)
					require.Equal(t, delivered, v.Admitted, "the check answers as the delivery path")

					want, reason := n.full, n.reason
					if publishedOnly {
						want = n.pubOnly
					} else if reason == access.VerdictUnpublished {
						reason = access.VerdictAdmitted
					}
					if st.change != nil {
						want, reason = false, st.reason
					}
					require.Equal(t, want, v.Admitted)
					require.Equal(t, reason, v.Reason)
					require.Equal(t, st.status, v.CodeStatus)
					require.NotEmpty(t, v.Explain())
				})
			}
		}
	}
}

func TestCheckCodeRefusesWhatIsNotTheOwners(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.role(t, []string{"*"}, false)
	code := b.code(t, r.ID, nil, nil)
	_, err := b.svc.CheckCode(b.ctx, uuid.New(), code.Code.ID, entity.CorpusEntry{URI: "wiki://a"})
	requireCode(t, err, domain.KindNotFound, "NOT_FOUND")
	_, err = b.svc.CheckCode(b.ctx, b.owner, code.Code.ID, entity.CorpusEntry{URI: ""})
	require.Error(t, err, "a check names a note")
	require.Equal(t, domain.KindValidation, domain.AsError(err).Kind)
}
