package owner

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// APIKeyPrefix starts every API key, so a leaked key is recognisable (secret
// scanners, logs) and a bearer token can be routed without a lookup.
const APIKeyPrefix = "smk_"

// apiKeyRandomBytes is the key's entropy: 256 bits.
const apiKeyRandomBytes = 32

// listedPrefixLen is how much of a key is kept for listings: "smk_" and
// eight random characters.
const listedPrefixLen = len(APIKeyPrefix) + 8

// MaxAPIKeyNameLen bounds a key's name.
const MaxAPIKeyNameLen = 100

// IssuedAPIKey is a newly issued key: Key is the secret, returned this once.
type IssuedAPIKey struct {
	APIKey
	Key string
}

// IssueAPIKey issues a full key named name to the owner: one that calls
// every op the owner can (IssueScopedAPIKey with no scopes).
func (s *Service) IssueAPIKey(ctx context.Context, ownerID uuid.UUID, name string) (IssuedAPIKey, error) {
	return s.IssueScopedAPIKey(ctx, ownerID, name, nil)
}

// CodeInvalidScopes is the code of an API key's scopes refused at issue.
const CodeInvalidScopes = "INVALID_SCOPES"

// NormalizeScopes checks the scopes a key is issued with and returns them in
// op.AllScopes' order. nil (the field left out) is a full key and stays nil;
// an empty list, an unknown scope or one named twice is INVALID_SCOPES
// naming the field, since a key limited to nothing or to a typo is never
// what the caller meant.
func NormalizeScopes(scopes []op.Scope) (op.Scopes, error) {
	if scopes == nil {
		return nil, nil
	}
	if len(scopes) == 0 {
		return nil, domain.Validation(CodeInvalidScopes, "scopes must name at least one scope; leave the field out for a full key").WithField("scopes")
	}
	for i, sc := range scopes {
		field := fmt.Sprintf("scopes[%d]", i)
		if !sc.Valid() {
			return nil, domain.Validation(CodeInvalidScopes, fmt.Sprintf("unknown scope %q: use %s", sc, op.Scopes(op.AllScopes))).WithField(field)
		}
		if slices.Contains(scopes[:i], sc) {
			return nil, domain.Validation(CodeInvalidScopes, fmt.Sprintf("scope %q is named twice", sc)).WithField(field)
		}
	}
	out := make(op.Scopes, 0, len(scopes))
	for _, sc := range op.AllScopes {
		if slices.Contains(scopes, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

// IssueScopedAPIKey issues a key named name to the owner and records
// api_key.issued in the same transaction. A key with scopes calls only the
// ops they grant (op.Authorize); nil scopes make a full key. Only the key's
// digest and prefix are stored; the key itself is in the result, once.
func (s *Service) IssueScopedAPIKey(ctx context.Context, ownerID uuid.UUID, name string, scopes []op.Scope) (IssuedAPIKey, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > MaxAPIKeyNameLen || !utf8.ValidString(name) {
		return IssuedAPIKey{}, domain.Validation(CodeInvalidName, fmt.Sprintf("name must have 1 to %d characters", MaxAPIKeyNameLen)).WithField("name")
	}
	granted, err := NormalizeScopes(scopes)
	if err != nil {
		return IssuedAPIKey{}, err
	}
	random, err := s.tokens.Token(apiKeyRandomBytes)
	if err != nil {
		return IssuedAPIKey{}, fmt.Errorf("issue api key: %w", err)
	}
	key := APIKeyPrefix + random
	id, err := newID()
	if err != nil {
		return IssuedAPIKey{}, err
	}
	k := APIKey{ID: id, OwnerID: ownerID, Name: name, Prefix: key[:listedPrefixLen], KeyHash: DigestOf(key), CreatedAt: s.now(), Scopes: granted}
	err = s.uow.Do(ctx, func(tx Tx) error {
		if err := tx.APIKeys().Create(ctx, k); err != nil {
			return err
		}
		_, err := tx.Recorder().Record(ctx, ownerID, domain.EventAPIKeyIssued, subjectAPIKey(k.ID), map[string]any{
			"api_key_id": k.ID,
		})
		return err
	})
	if err != nil {
		return IssuedAPIKey{}, fmt.Errorf("issue api key: %w", err)
	}
	return IssuedAPIKey{APIKey: k, Key: key}, nil
}

// IssueAPIKeyForEmail issues a key to the owner with that email (the CLI's
// `api-key issue`), limited to scopes (nil: a full key); OWNER_NOT_FOUND
// when there is none.
func (s *Service) IssueAPIKeyForEmail(ctx context.Context, email, name string, scopes []op.Scope) (IssuedAPIKey, error) {
	o, err := s.ownerByEmail(ctx, email)
	if err != nil {
		return IssuedAPIKey{}, err
	}
	return s.IssueScopedAPIKey(ctx, o.ID, name, scopes)
}

// ListAPIKeys returns the owner's keys, revoked ones included, newest
// first.
func (s *Service) ListAPIKeys(ctx context.Context, ownerID uuid.UUID) ([]APIKey, error) {
	var keys []APIKey
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		keys, err = tx.APIKeys().List(ctx, ownerID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return keys, nil
}

// RevokeAPIKey revokes the owner's key and records api_key.revoked in the
// same transaction. Revoking a revoked key changes and records nothing;
// another owner's key is NOT_FOUND.
func (s *Service) RevokeAPIKey(ctx context.Context, ownerID, id uuid.UUID) error {
	now := s.now()
	err := s.uow.Do(ctx, func(tx Tx) error {
		k, err := tx.APIKeys().Get(ctx, ownerID, id)
		if err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return nil
		}
		if err := tx.APIKeys().Revoke(ctx, ownerID, id, now); err != nil {
			return err
		}
		_, err = tx.Recorder().Record(ctx, ownerID, domain.EventAPIKeyRevoked, subjectAPIKey(id), map[string]any{
			"api_key_id": id,
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("revoke api key: %w", err)
	}
	return nil
}

// AuthenticateAPIKey returns the unrevoked key key is, or an Unauthorized
// error, and notes its use (at most once per APIKeyTouchInterval).
func (s *Service) AuthenticateAPIKey(ctx context.Context, key string) (APIKey, error) {
	if !strings.HasPrefix(key, APIKeyPrefix) || len(key) > 256 {
		return APIKey{}, domain.Unauthorized(CodeInvalidAPIKey, "the API key is not valid")
	}
	now := s.now()
	var k APIKey
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		k, err = tx.APIKeys().ByHash(ctx, DigestOf(key))
		if err != nil || k.RevokedAt != nil {
			return err
		}
		if k.LastUsedAt == nil || !k.LastUsedAt.After(now.Add(-s.limits.APIKeyTouchInterval)) {
			return tx.APIKeys().Touch(ctx, k.ID, now, now.Add(-s.limits.APIKeyTouchInterval))
		}
		return nil
	})
	switch {
	case isNotFound(err):
		return APIKey{}, domain.Unauthorized(CodeInvalidAPIKey, "the API key is not valid")
	case err != nil:
		return APIKey{}, fmt.Errorf("authenticate api key: %w", err)
	case k.RevokedAt != nil:
		return APIKey{}, domain.Unauthorized(CodeInvalidAPIKey, "the API key is not valid")
	}
	return k, nil
}
