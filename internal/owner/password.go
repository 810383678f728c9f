package owner

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// ChangePassword replaces the owner's password after checking the current
// one (a stolen session or API key must not be enough to take the account
// over) and ends every session of the account in the same transaction, as
// account recovery does. API keys stay valid: they are revoked one by one.
// No event is recorded: the catalog has no type for it, and a password
// change must not leave the instance.
func (s *Service) ChangePassword(ctx context.Context, ownerID uuid.UUID, currentPassword, newPassword string) error {
	if err := validatePassword("new_password", newPassword); err != nil {
		return err
	}
	o, err := s.Me(ctx, ownerID)
	if err != nil {
		return err
	}
	ok, err := s.hasher.Verify(currentPassword, o.PasswordHash)
	if err != nil {
		return fmt.Errorf("verify password: %w", err)
	}
	if !ok {
		return domain.Forbidden(CodeWrongPassword, "the current password is wrong").WithField("current_password")
	}
	hash, err := s.hasher.Hash(newPassword)
	if err != nil {
		return fmt.Errorf("hash password: %w", err)
	}
	now := s.now()
	err = s.uow.Do(ctx, func(tx Tx) error {
		if err := tx.Owners().UpdatePassword(ctx, ownerID, hash, now); err != nil {
			return err
		}
		return tx.Sessions().DeleteForOwner(ctx, ownerID)
	})
	if err != nil {
		return fmt.Errorf("change password: %w", err)
	}
	return nil
}

// EndSessions ends every session of the owner (signs out every browser,
// the caller's included). API keys are not sessions and stay valid.
func (s *Service) EndSessions(ctx context.Context, ownerID uuid.UUID) error {
	err := s.uow.Do(ctx, func(tx Tx) error {
		return tx.Sessions().DeleteForOwner(ctx, ownerID)
	})
	if err != nil {
		return fmt.Errorf("end sessions: %w", err)
	}
	return nil
}

// ResetPassword sets the password of the owner with email without the
// current one, for the operator's CLI when an owner is locked out: the
// password changes and every session of the owner ends, in one
// transaction. An unknown email is domain.ErrNotFound; a bad password the
// same refusal as at creation.
func (s *Service) ResetPassword(ctx context.Context, email, newPassword string) (Owner, error) {
	if err := validatePassword("password", newPassword); err != nil {
		return Owner{}, err
	}
	hash, err := s.hasher.Hash(newPassword)
	if err != nil {
		return Owner{}, fmt.Errorf("hash password: %w", err)
	}
	var o Owner
	err = s.uow.Do(ctx, func(tx Tx) error {
		var err error
		if o, err = tx.Owners().ByEmail(ctx, NormalizeEmail(email)); err != nil {
			return err
		}
		now := s.now()
		if err := tx.Owners().UpdatePassword(ctx, o.ID, hash, now); err != nil {
			return err
		}
		o.PasswordHash, o.UpdatedAt = hash, now
		return tx.Sessions().DeleteForOwner(ctx, o.ID)
	})
	if err != nil {
		return Owner{}, fmt.Errorf("reset password: %w", err)
	}
	return o, nil
}

// ChangePasswordInput is the input of owner.change_password.
type ChangePasswordInput struct {
	CurrentPassword string `json:"current_password" doc:"the owner's current password"`
	NewPassword     string `json:"new_password" doc:"the new password"`
}

// ListSessions returns the owner's live sessions, newest first.
func (s *Service) ListSessions(ctx context.Context, ownerID uuid.UUID) ([]Session, error) {
	var out []Session
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		out, err = tx.Sessions().ListForOwner(ctx, ownerID, s.now())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// EndSession ends one session of the owner; another owner's session, or
// one that has ended, is SESSION_NOT_FOUND.
func (s *Service) EndSession(ctx context.Context, ownerID, id uuid.UUID) error {
	err := s.uow.Do(ctx, func(tx Tx) error {
		return tx.Sessions().DeleteOne(ctx, ownerID, id)
	})
	if isNotFound(err) {
		return domain.NotFound(CodeSessionNotFound, "no such session").WithField("id")
	}
	if err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// CodeSessionNotFound is the code of EndSession's not-found answer.
const CodeSessionNotFound = "SESSION_NOT_FOUND"

// SessionView is a session as the API lists it (never its token).
type SessionView struct {
	ID        uuid.UUID `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	IP        string    `json:"ip"`
	UserAgent string    `json:"user_agent"`
}

// ViewSession returns the API view of x.
func ViewSession(x Session) SessionView {
	return SessionView{ID: x.ID, CreatedAt: x.CreatedAt, ExpiresAt: x.ExpiresAt, IP: x.IP, UserAgent: x.UserAgent}
}
