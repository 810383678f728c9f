package owner

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// recoveryTokenBytes is the recovery token's entropy: 256 bits.
const recoveryTokenBytes = 32

// RequestRecovery starts account recovery for email from ip. When an
// account has that email, a single-use token valid for RecoveryTTL is
// stored (its digest), owner.recovery_requested is recorded, and the token
// is queued on the outbox — all in one transaction, so the message goes out
// only if the request committed. The answer is the same whether or not the
// account exists; only an IP over MaxRecoveriesPerIP gets RATE_LIMITED.
func (s *Service) RequestRecovery(ctx context.Context, email, ip string) error {
	norm := NormalizeEmail(email)
	now := s.now()
	limited := false
	err := s.uow.Do(ctx, func(tx Tx) error {
		since := now.Add(-s.limits.RecoveryWindow)
		n, err := tx.Attempts().CountByIP(ctx, AttemptRecovery, ip, since)
		if err != nil {
			return err
		}
		if n >= s.limits.MaxRecoveriesPerIP {
			limited = true
			return nil
		}
		o, err := tx.Owners().ByEmail(ctx, norm)
		if isNotFound(err) {
			return tx.Attempts().Add(ctx, Attempt{Kind: AttemptRecovery, IP: ip, Email: norm, At: now})
		}
		if err != nil {
			return err
		}
		sent, err := tx.Attempts().CountByEmail(ctx, AttemptRecovery, norm, since)
		if err != nil {
			return err
		}
		id := o.ID
		if err := tx.Attempts().Add(ctx, Attempt{Kind: AttemptRecovery, IP: ip, Email: norm, OwnerID: &id, At: now}); err != nil {
			return err
		}
		if sent >= s.limits.MaxRecoveriesPerAccount {
			// The mailbox has had enough; say nothing that differs.
			return nil
		}
		return s.issueRecoveryToken(ctx, tx, o, ip, now)
	})
	if err != nil {
		return fmt.Errorf("request recovery: %w", err)
	}
	if limited {
		return domain.RateLimited(CodeRateLimited, "too many recovery requests; try again later")
	}
	return nil
}

func (s *Service) issueRecoveryToken(ctx context.Context, tx Tx, o Owner, ip string, now time.Time) error {
	token, err := s.tokens.Token(recoveryTokenBytes)
	if err != nil {
		return fmt.Errorf("recovery token: %w", err)
	}
	id, err := newID()
	if err != nil {
		return err
	}
	rt := RecoveryToken{ID: id, OwnerID: o.ID, TokenHash: DigestOf(token), CreatedAt: now, ExpiresAt: now.Add(s.limits.RecoveryTTL)}
	if err := tx.Recovery().Create(ctx, rt); err != nil {
		return err
	}
	if _, err := tx.Recorder().Record(ctx, o.ID, domain.EventOwnerRecoveryRequested, subjectOwner(o.ID), map[string]any{
		"owner_id":   o.ID,
		"expires_at": rt.ExpiresAt,
	}); err != nil {
		return err
	}
	return tx.Outbox().Enqueue(ctx, RecoveryMessage{OwnerID: o.ID, Email: o.Email, Token: token, ExpiresAt: rt.ExpiresAt})
}

// CompleteRecovery spends a recovery token: the account's password becomes
// newPassword and every session of the account ends. A token that is
// unknown, expired or already used is INVALID_RECOVERY_TOKEN.
func (s *Service) CompleteRecovery(ctx context.Context, token, newPassword string) (uuid.UUID, error) {
	if err := validatePassword("password", newPassword); err != nil {
		return uuid.Nil, err
	}
	hash, err := s.hasher.Hash(newPassword)
	if err != nil {
		return uuid.Nil, fmt.Errorf("hash password: %w", err)
	}
	now := s.now()
	var ownerID uuid.UUID
	err = s.uow.Do(ctx, func(tx Tx) error {
		rt, err := tx.Recovery().Consume(ctx, DigestOf(token), now)
		if err != nil {
			return err
		}
		ownerID = rt.OwnerID
		if err := tx.Owners().UpdatePassword(ctx, rt.OwnerID, hash, now); err != nil {
			return err
		}
		return tx.Sessions().DeleteForOwner(ctx, rt.OwnerID)
	})
	if isNotFound(err) {
		return uuid.Nil, domain.Validation(CodeInvalidRecoveryToken, "the recovery link is unknown, expired or already used").WithField("token")
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("complete recovery: %w", err)
	}
	return ownerID, nil
}
