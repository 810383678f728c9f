package owner

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// CreateOwner creates an owner with email and password. The email must be
// free in any case (EMAIL_TAKEN otherwise). Nothing is recorded: the catalog
// has no event for it, and the instance has no owner to record it for yet.
func (s *Service) CreateOwner(ctx context.Context, email, password string) (Owner, error) {
	e, err := validateEmail(email)
	if err != nil {
		return Owner{}, err
	}
	if err := validatePassword("password", password); err != nil {
		return Owner{}, err
	}
	hash, err := s.hasher.Hash(password)
	if err != nil {
		return Owner{}, fmt.Errorf("hash password: %w", err)
	}
	id, err := newID()
	if err != nil {
		return Owner{}, err
	}
	now := s.now()
	o := Owner{ID: id, Email: e, PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
	if err := s.uow.Do(ctx, func(tx Tx) error {
		return tx.Owners().Create(ctx, o)
	}); err != nil {
		return Owner{}, fmt.Errorf("create owner: %w", err)
	}
	return o, nil
}

// GeneratePassword returns a random password for an owner created without
// one (24 URL-safe characters, 144 bits).
func (s *Service) GeneratePassword() (string, error) {
	pw, err := s.tokens.Token(18)
	if err != nil {
		return "", fmt.Errorf("generate password: %w", err)
	}
	return pw, nil
}

// HasOwners reports whether the instance has at least one owner.
func (s *Service) HasOwners(ctx context.Context) (bool, error) {
	var n int
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		n, err = tx.Owners().Count(ctx)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("count owners: %w", err)
	}
	return n > 0, nil
}

// Me returns the owner.
func (s *Service) Me(ctx context.Context, ownerID uuid.UUID) (Owner, error) {
	var o Owner
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		o, err = tx.Owners().ByID(ctx, ownerID)
		return err
	})
	if err != nil {
		return Owner{}, fmt.Errorf("load owner: %w", err)
	}
	return o, nil
}

// ChangeEmail changes the owner's email after checking currentPassword (a
// stolen session or API key must not be enough to redirect account
// recovery), and records owner.email_changed in the same transaction.
func (s *Service) ChangeEmail(ctx context.Context, ownerID uuid.UUID, email, currentPassword string) (Owner, error) {
	e, err := validateEmail(email)
	if err != nil {
		return Owner{}, err
	}
	o, err := s.Me(ctx, ownerID)
	if err != nil {
		return Owner{}, err
	}
	ok, err := s.hasher.Verify(currentPassword, o.PasswordHash)
	if err != nil {
		return Owner{}, fmt.Errorf("verify password: %w", err)
	}
	if !ok {
		return Owner{}, domain.Forbidden(CodeWrongPassword, "the current password is wrong").WithField("current_password")
	}
	if e == o.Email {
		return o, nil
	}
	now := s.now()
	err = s.uow.Do(ctx, func(tx Tx) error {
		if err := tx.Owners().UpdateEmail(ctx, ownerID, e, now); err != nil {
			return err
		}
		_, err := tx.Recorder().Record(ctx, ownerID, domain.EventOwnerEmailChanged, subjectOwner(ownerID), map[string]any{
			"owner_id": ownerID,
		})
		return err
	})
	if err != nil {
		return Owner{}, fmt.Errorf("change email: %w", err)
	}
	o.Email, o.UpdatedAt = e, now
	return o, nil
}

// ownerByEmail loads the owner with that email, OWNER_NOT_FOUND otherwise.
func (s *Service) ownerByEmail(ctx context.Context, email string) (Owner, error) {
	var o Owner
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		o, err = tx.Owners().ByEmail(ctx, strings.TrimSpace(email))
		return err
	})
	if isNotFound(err) {
		return Owner{}, domain.NotFound(CodeOwnerNotFound, "no owner has that email")
	}
	if err != nil {
		return Owner{}, fmt.Errorf("load owner by email: %w", err)
	}
	return o, nil
}

func subjectOwner(id uuid.UUID) string  { return "owner/" + id.String() }
func subjectAPIKey(id uuid.UUID) string { return "api_key/" + id.String() }
func subjectIPBan(id uuid.UUID) string  { return "ip_ban/" + id.String() }

// SetOperator grants (operator true) or revokes the operator role of the
// owner with that email, and records owner.operator_changed in the same
// transaction. Setting the role an owner already has changes nothing and
// records nothing.
func (s *Service) SetOperator(ctx context.Context, email string, operator bool) (Owner, error) {
	e := NormalizeEmail(email)
	var o Owner
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		o, err = tx.Owners().ByEmail(ctx, e)
		if err != nil {
			return err
		}
		if o.Operator == operator {
			return nil
		}
		now := s.now()
		if err := tx.Owners().SetOperator(ctx, o.ID, operator, now); err != nil {
			return err
		}
		o.Operator, o.UpdatedAt = operator, now
		_, err = tx.Recorder().Record(ctx, o.ID, domain.EventOwnerOperatorChanged, subjectOwner(o.ID), map[string]any{
			"owner_id": o.ID,
			"operator": operator,
		})
		return err
	})
	if err != nil {
		return Owner{}, fmt.Errorf("set operator: %w", err)
	}
	return o, nil
}

// IsOperator reports whether the owner holds the operator role. An owner
// that does not exist is not the operator.
func (s *Service) IsOperator(ctx context.Context, ownerID uuid.UUID) (bool, error) {
	o, err := s.Me(ctx, ownerID)
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return o.Operator, nil
}
