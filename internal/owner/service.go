package owner

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/standmeet/standmeet/internal/domain"
)

// Limits tune sessions, tokens and brute-force protection. The zero value of
// a field means its default (DefaultLimits).
type Limits struct {
	// SessionTTL is how long a login session lasts (14 days).
	SessionTTL time.Duration
	// FailureWindow is the window failed logins are counted in (15 min).
	FailureWindow time.Duration
	// MaxFailuresPerIP refuses logins from an IP with this many failures in
	// the window (10).
	MaxFailuresPerIP int
	// MaxFailuresPerAccountIP refuses logins to an account from one IP with
	// this many failures of that IP for that account in the window (5).
	// Failures from other addresses do not count, so a stranger cannot lock
	// the owner out of their account from elsewhere.
	MaxFailuresPerAccountIP int
	// BanAfter bans an IP once it has this many refused logins in BanWindow
	// (30: it kept trying well past the per-IP limit).
	BanAfter  int
	BanWindow time.Duration // 1 hour
	// BanDuration is how long a ban lasts unless lifted (24 hours).
	BanDuration time.Duration
	// BanCacheTTL bounds how stale the banned-IP set may be on a replica
	// that did not add or lift the ban itself (2 s).
	BanCacheTTL time.Duration
	// RecoveryTTL is how long a recovery token stays valid (1 hour).
	RecoveryTTL time.Duration
	// MaxRecoveriesPerIP limits recovery requests from an IP per
	// RecoveryWindow (5); more get RATE_LIMITED.
	MaxRecoveriesPerIP int
	// MaxRecoveriesPerAccount limits recovery messages to one account per
	// RecoveryWindow (3); more are silently not sent, so the answer never
	// tells whether the account exists.
	MaxRecoveriesPerAccount int
	RecoveryWindow          time.Duration // 1 hour
	// APIKeyTouchInterval: last_used_at is written at most this often (1 min).
	APIKeyTouchInterval time.Duration
}

// DefaultLimits returns the production limits.
func DefaultLimits() Limits {
	return Limits{
		SessionTTL:              14 * 24 * time.Hour,
		FailureWindow:           15 * time.Minute,
		MaxFailuresPerIP:        10,
		MaxFailuresPerAccountIP: 5,
		BanAfter:                30,
		BanWindow:               time.Hour,
		BanDuration:             24 * time.Hour,
		BanCacheTTL:             2 * time.Second,
		RecoveryTTL:             time.Hour,
		MaxRecoveriesPerIP:      5,
		MaxRecoveriesPerAccount: 3,
		RecoveryWindow:          time.Hour,
		APIKeyTouchInterval:     time.Minute,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	durs := []struct{ v, def *time.Duration }{
		{&l.SessionTTL, &d.SessionTTL}, {&l.FailureWindow, &d.FailureWindow}, {&l.BanWindow, &d.BanWindow},
		{&l.BanDuration, &d.BanDuration}, {&l.BanCacheTTL, &d.BanCacheTTL}, {&l.RecoveryTTL, &d.RecoveryTTL},
		{&l.RecoveryWindow, &d.RecoveryWindow}, {&l.APIKeyTouchInterval, &d.APIKeyTouchInterval},
	}
	for _, x := range durs {
		if *x.v <= 0 {
			*x.v = *x.def
		}
	}
	ints := []struct{ v, def *int }{
		{&l.MaxFailuresPerIP, &d.MaxFailuresPerIP}, {&l.MaxFailuresPerAccountIP, &d.MaxFailuresPerAccountIP},
		{&l.BanAfter, &d.BanAfter}, {&l.MaxRecoveriesPerIP, &d.MaxRecoveriesPerIP},
		{&l.MaxRecoveriesPerAccount, &d.MaxRecoveriesPerAccount},
	}
	for _, x := range ints {
		if *x.v <= 0 {
			*x.v = *x.def
		}
	}
	return l
}

// Deps is what a Service is built from.
type Deps struct {
	UoW    UnitOfWork
	Clock  domain.Clock
	Hasher PasswordHasher
	Tokens TokenGenerator
	Limits Limits
}

// Service runs the owner domain's use cases. It is safe for concurrent use.
type Service struct {
	uow    UnitOfWork
	clock  domain.Clock
	hasher PasswordHasher
	tokens TokenGenerator
	limits Limits

	bans banCache

	// dummyHash is verified against when a login names no account, so the
	// answer takes as long as for a wrong password.
	dummyOnce sync.Once
	dummyHash string
	dummyErr  error
}

// New returns a Service.
func New(d Deps) (*Service, error) {
	if d.UoW == nil || d.Hasher == nil || d.Tokens == nil {
		return nil, errors.New("owner service: unit of work, hasher and token generator are required")
	}
	if d.Clock == nil {
		d.Clock = domain.SystemClock{}
	}
	return &Service{uow: d.UoW, clock: d.Clock, hasher: d.Hasher, tokens: d.Tokens, limits: d.Limits.withDefaults()}, nil
}

// Limits returns the limits in force (defaults filled in).
func (s *Service) Limits() Limits { return s.limits }

// now is the clock's time at PostgreSQL's precision, so a value read back
// from any store equals the one written.
func (s *Service) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }

// Error codes of the owner domain that clients rely on.
const (
	CodeInvalidEmail         = "INVALID_EMAIL"
	CodeWeakPassword         = "WEAK_PASSWORD"
	CodeEmailTaken           = "EMAIL_TAKEN"
	CodeInvalidCredentials   = "INVALID_CREDENTIALS"
	CodeInvalidAPIKey        = "INVALID_API_KEY"
	CodeInvalidSession       = "INVALID_SESSION"
	CodeRateLimited          = "RATE_LIMITED"
	CodeIPBanned             = "IP_BANNED"
	CodeInvalidName          = "INVALID_NAME"
	CodeWrongPassword        = "WRONG_PASSWORD"
	CodeInvalidRecoveryToken = "INVALID_RECOVERY_TOKEN"
	CodeInvalidCursor        = "INVALID_CURSOR"
	CodeInvalidNote          = "INVALID_NOTE"
	CodeOwnerNotFound        = "OWNER_NOT_FOUND"
)

// ErrEmailTaken is what stores return when another owner has the email (in
// any case).
var ErrEmailTaken = domain.Conflict(CodeEmailTaken, "another owner has that email")

// Password length bounds. The upper bound keeps a hostile request from
// making the slow hash slower.
const (
	MinPasswordLen = 12
	MaxPasswordLen = 1024
)

// NormalizeEmail trims and lower-cases an email: the form limits and
// uniqueness compare.
func NormalizeEmail(email string) string {
	return strings.ToLower(strings.TrimSpace(email))
}

// validateEmail returns the trimmed email, or a validation error.
func validateEmail(email string) (string, error) {
	e := strings.TrimSpace(email)
	if e == "" || len(e) > 254 {
		return "", domain.Validation(CodeInvalidEmail, "email must be an address of at most 254 characters").WithField("email")
	}
	a, err := mail.ParseAddress(e)
	if err != nil || a.Address != e || a.Name != "" {
		return "", domain.Validation(CodeInvalidEmail, "email must be a bare address such as owner@example.com").WithField("email")
	}
	return e, nil
}

func validatePassword(field, pw string) error {
	switch {
	case len(pw) < MinPasswordLen:
		return domain.Validation(CodeWeakPassword, fmt.Sprintf("password must have at least %d characters", MinPasswordLen)).WithField(field)
	case len(pw) > MaxPasswordLen:
		return domain.Validation(CodeWeakPassword, fmt.Sprintf("password must have at most %d characters", MaxPasswordLen)).WithField(field)
	}
	return nil
}

func newID() (uuid.UUID, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, fmt.Errorf("new id: %w", err)
	}
	return id, nil
}

func isNotFound(err error) bool { return errors.Is(err, domain.ErrNotFound) }
