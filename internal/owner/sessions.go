package owner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// LoginInput is a login attempt.
type LoginInput struct {
	Email    string
	Password string
	// IP is the client address the attempt came from (never a forwarded
	// header unless the proxy is trusted); limits and bans count by it.
	IP        string
	UserAgent string
}

// LoginResult is a granted login: the session token is returned here once
// and never stored.
type LoginResult struct {
	Owner     Owner
	Session   Session
	Token     string
	ExpiresAt time.Time
}

// Login checks email and password and opens a session.
//
// Brute-force protection: an IP with MaxFailuresPerIP failures in
// FailureWindow, or an (account, IP) pair with MaxFailuresPerAccountIP, is
// refused with
// RATE_LIMITED without the password being checked, and that refusal counts
// as a failure too; an IP with BanAfter failures in BanWindow is banned
// (ip_ban.added), and a banned IP is refused with IP_BANNED. A wrong
// password and an unknown email get the same INVALID_CREDENTIALS answer in
// about the same time. Failures are committed even though the login fails.
// On success owner.login is recorded in the session's transaction.
func (s *Service) Login(ctx context.Context, in LoginInput) (LoginResult, error) {
	email := NormalizeEmail(in.Email)
	now := s.now()
	banned, err := s.IsBanned(ctx, in.IP)
	if err != nil {
		return LoginResult{}, err
	}
	if banned {
		return LoginResult{}, domain.Forbidden(CodeIPBanned, "this address is banned after repeated failed logins")
	}

	var (
		o       Owner
		found   bool
		limited bool
		newBan  bool
	)
	err = s.uow.Do(ctx, func(tx Tx) error {
		var err error
		limited, err = s.overLoginLimit(ctx, tx, in.IP, email, now)
		if err != nil {
			return err
		}
		o, err = tx.Owners().ByEmail(ctx, email)
		switch {
		case isNotFound(err):
			found, err = false, nil
		case err != nil:
			return err
		default:
			found = true
		}
		if limited {
			newBan, err = s.recordLoginFailure(ctx, tx, in.IP, email, ownerRef(o, found), now)
		}
		return err
	})
	if err != nil {
		return LoginResult{}, fmt.Errorf("login: %w", err)
	}
	if newBan {
		s.bans.invalidate()
	}
	if limited {
		return LoginResult{}, domain.RateLimited(CodeRateLimited, "too many failed logins; try again later")
	}

	ok, err := s.checkPassword(in.Password, o, found)
	if err != nil {
		return LoginResult{}, err
	}
	if !ok {
		err := s.uow.Do(ctx, func(tx Tx) error {
			var err error
			newBan, err = s.recordLoginFailure(ctx, tx, in.IP, email, ownerRef(o, found), now)
			return err
		})
		if err != nil {
			return LoginResult{}, fmt.Errorf("login: record failure: %w", err)
		}
		if newBan {
			s.bans.invalidate()
		}
		return LoginResult{}, domain.Unauthorized(CodeInvalidCredentials, "wrong email or password")
	}

	token, err := s.tokens.Token(32)
	if err != nil {
		return LoginResult{}, fmt.Errorf("login: session token: %w", err)
	}
	id, err := newID()
	if err != nil {
		return LoginResult{}, err
	}
	sess := Session{
		ID: id, OwnerID: o.ID, TokenHash: DigestOf(token), CreatedAt: now,
		ExpiresAt: now.Add(s.limits.SessionTTL), IP: in.IP, UserAgent: truncate(in.UserAgent, 512),
	}
	err = s.uow.Do(ctx, func(tx Tx) error {
		// Housekeeping rides on logins, which are rare: expired sessions
		// and attempts older than every window go.
		if err := tx.Sessions().DeleteExpired(ctx, now); err != nil {
			return err
		}
		if err := tx.Attempts().DeleteBefore(ctx, now.Add(-s.longestWindow())); err != nil {
			return err
		}
		if err := tx.Sessions().Create(ctx, sess); err != nil {
			return err
		}
		_, err := tx.Recorder().Record(ctx, o.ID, domain.EventOwnerLogin, subjectOwner(o.ID), map[string]any{
			"owner_id":   o.ID,
			"session_id": sess.ID,
		})
		return err
	})
	if err != nil {
		return LoginResult{}, fmt.Errorf("login: open session: %w", err)
	}
	return LoginResult{Owner: o, Session: sess, Token: token, ExpiresAt: sess.ExpiresAt}, nil
}

// checkPassword verifies the password, against a dummy hash when the
// account does not exist so both answers cost the same.
func (s *Service) checkPassword(password string, o Owner, found bool) (bool, error) {
	if len(password) > MaxPasswordLen {
		return false, nil
	}
	hash := o.PasswordHash
	if !found {
		s.dummyOnce.Do(func() { s.dummyHash, s.dummyErr = s.hasher.Hash("not a password: no such account") })
		if s.dummyErr != nil {
			return false, fmt.Errorf("login: dummy hash: %w", s.dummyErr)
		}
		hash = s.dummyHash
	}
	ok, err := s.hasher.Verify(password, hash)
	if err != nil {
		return false, fmt.Errorf("login: verify password: %w", err)
	}
	return ok && found, nil
}

func ownerRef(o Owner, found bool) *uuid.UUID {
	if !found {
		return nil
	}
	id := o.ID
	return &id
}

func (s *Service) longestWindow() time.Duration {
	w := s.limits.FailureWindow
	for _, d := range []time.Duration{s.limits.BanWindow, s.limits.RecoveryWindow} {
		if d > w {
			w = d
		}
	}
	return w
}

// overLoginLimit reports whether the IP, or the account from this IP, is
// over its failure limit. Failures for the account from other addresses do
// not count: a limit per account alone would let anyone lock the owner out.
func (s *Service) overLoginLimit(ctx context.Context, tx Tx, ip, email string, now time.Time) (bool, error) {
	since := now.Add(-s.limits.FailureWindow)
	n, err := tx.Attempts().CountByIP(ctx, AttemptLoginFailure, ip, since)
	if err != nil {
		return false, err
	}
	if n >= s.limits.MaxFailuresPerIP {
		return true, nil
	}
	n, err = tx.Attempts().CountByEmailAndIP(ctx, AttemptLoginFailure, email, ip, since)
	if err != nil {
		return false, err
	}
	return n >= s.limits.MaxFailuresPerAccountIP, nil
}

// Logout ends the session with that token. An unknown token is not an
// error: the outcome (no such session) is what the caller wants.
func (s *Service) Logout(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	if err := s.uow.Do(ctx, func(tx Tx) error {
		return tx.Sessions().DeleteByTokenHash(ctx, DigestOf(token))
	}); err != nil {
		return fmt.Errorf("logout: %w", err)
	}
	return nil
}

// AuthenticateSession returns the unexpired session with that token, or an
// Unauthorized error.
func (s *Service) AuthenticateSession(ctx context.Context, token string) (Session, error) {
	if token == "" {
		return Session{}, domain.Unauthorized(CodeInvalidSession, "no session")
	}
	var sess Session
	err := s.uow.Do(ctx, func(tx Tx) error {
		var err error
		sess, err = tx.Sessions().ByTokenHash(ctx, DigestOf(token))
		return err
	})
	switch {
	case isNotFound(err):
		return Session{}, domain.Unauthorized(CodeInvalidSession, "the session is unknown or has ended")
	case err != nil:
		return Session{}, fmt.Errorf("authenticate session: %w", err)
	case !s.now().Before(sess.ExpiresAt):
		return Session{}, domain.Unauthorized(CodeInvalidSession, "the session is unknown or has ended")
	}
	return sess, nil
}

// truncate cuts s to at most n bytes of valid UTF-8 (PostgreSQL refuses
// anything else, and a header may carry any bytes).
func truncate(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.ToValidUTF8(s, "")
}
