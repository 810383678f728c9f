package access

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/entity"
)

// VerdictReason says why a code admits a corpus entry or not.
type VerdictReason string

// The reasons of a Verdict, in the order they are decided.
const (
	// VerdictRevoked: the code is revoked and admits nothing.
	VerdictRevoked VerdictReason = "code_revoked"
	// VerdictExpired: the code has expired and admits nothing.
	VerdictExpired VerdictReason = "code_expired"
	// VerdictRaw: a raw:// note never leaves the instance.
	VerdictRaw VerdictReason = "raw"
	// VerdictUnpublished: the role reads the published slice only.
	VerdictUnpublished VerdictReason = "unpublished"
	// VerdictNoGlob: none of the role's URI globs matches.
	VerdictNoGlob VerdictReason = "no_role_glob"
	// VerdictDenied: one of the code's deny globs matches.
	VerdictDenied VerdictReason = "denied"
	// VerdictAdmitted: a role glob matches and nothing refuses.
	VerdictAdmitted VerdictReason = "admitted"
)

// Verdict is whether a code admits a corpus entry now, and why. Admitted is
// the answer of the one predicate every admission uses (the code active,
// then entity.AllowsCorpusEntry); Reason and Glob explain it.
type Verdict struct {
	Admitted bool
	Reason   VerdictReason
	// Glob is the role glob that admits the entry (VerdictAdmitted) or the
	// code's deny glob that refuses it (VerdictDenied); empty otherwise.
	Glob string
	// CodeStatus is the code's state at the time of the decision.
	CodeStatus string
}

// Explain says the verdict in a sentence an owner reads.
func (v Verdict) Explain() string {
	switch v.Reason {
	case VerdictRevoked:
		return "Not admitted: the code is revoked, so it and every embed of it admit nothing."
	case VerdictExpired:
		return "Not admitted: the code has expired, so it and every embed of it admit nothing."
	case VerdictRaw:
		return "Not admitted: raw:// notes never leave the instance, whatever the role's globs say."
	case VerdictUnpublished:
		return "Not admitted: the role reads only the published slice, and this note is not published."
	case VerdictNoGlob:
		return "Not admitted: none of the role's URI globs matches this subject."
	case VerdictDenied:
		return fmt.Sprintf("Not admitted: the code's deny glob %s matches this subject.", v.Glob)
	case VerdictAdmitted:
		return fmt.Sprintf("Admitted: the role's glob %s matches and no deny glob of the code does.", v.Glob)
	}
	return "Not admitted."
}

// decide is the admission decision of a code of role r for entry at now:
// the one function EmbedAdmits and CheckCode answer from, so the check an
// owner runs and the webhooks' delivery path cannot disagree.
func decide(c Code, r Role, entry entity.CorpusEntry, now time.Time) Verdict {
	v := Verdict{
		Admitted:   c.Active(now) && entity.AllowsCorpusEntry(r.URIGlobs, c.DenyGlobs, r.PublishedOnly, entry),
		CodeStatus: c.Status(now),
	}
	switch {
	case c.RevokedAt != nil:
		v.Reason = VerdictRevoked
	case !c.Active(now):
		v.Reason = VerdictExpired
	case entry.URI == "" || entity.IsRaw(entry.URI):
		v.Reason = VerdictRaw
	case r.PublishedOnly && !entry.Published:
		v.Reason = VerdictUnpublished
	case firstMatch(r.URIGlobs, entry.URI) == "":
		v.Reason = VerdictNoGlob
	case firstMatch(c.DenyGlobs, entry.URI) != "":
		v.Reason, v.Glob = VerdictDenied, firstMatch(c.DenyGlobs, entry.URI)
	default:
		v.Reason, v.Glob = VerdictAdmitted, firstMatch(r.URIGlobs, entry.URI)
	}
	return v
}

func firstMatch(globs []string, uri string) string {
	for _, g := range globs {
		if domain.MatchGlob(g, uri) {
			return g
		}
	}
	return ""
}

// MaxSubjectLen bounds the subject a check is asked about.
const MaxSubjectLen = 2000

// CheckCode answers whether the owner's code admits a corpus entry now, and
// why: the same decision EmbedAdmits gives the webhooks' delivery path for
// every embed of the code, so an owner can test a scope before trusting
// it. It changes nothing and records nothing.
func (s *Service) CheckCode(ctx context.Context, ownerID, codeID uuid.UUID, entry entity.CorpusEntry) (Verdict, error) {
	uri, err := textField("uri", entry.URI, MaxSubjectLen, true)
	if err != nil {
		return Verdict{}, err
	}
	entry.URI = uri
	var (
		c Code
		r Role
	)
	err = s.uow.Do(ctx, func(tx Tx) error {
		var err error
		if c, err = tx.Codes().Get(ctx, ownerID, codeID); err != nil {
			return err
		}
		if r, err = tx.Roles().Get(ctx, ownerID, c.RoleID); err != nil {
			return fmt.Errorf("role of code %s: %w", codeID, err)
		}
		return nil
	})
	if err != nil {
		return Verdict{}, err
	}
	return decide(c, r, entry, s.now()), nil
}
