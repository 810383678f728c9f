package main

// The owner domain: owners, sessions, API keys, IP bans, account
// recovery, and the auth gate that serves them over HTTP.

import (
	"context"

	"github.com/google/wire"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/httpapi/auth"
	"github.com/standmeet/standmeet/internal/adapters/postgres/ownerdb"
	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/owner"
)

// OwnerSet provides the owner domain and its auth gate. Owners act through
// an API key (Bearer) or the admin session cookie with its CSRF token: the
// gate is the server's httpapi.Authenticator.
var OwnerSet = wire.NewSet(
	provideRecoveryMailer,
	provideOwnerUnitOfWork,
	provideOwnerService,
	provideAuthGate,
	wire.Bind(new(httpapi.Authenticator), new(*auth.Gate)),
	wire.Struct(new(ownerHint), "*"),
)

// provideRecoveryMailer: no mail server yet, so recovery messages go to the
// log — with the token only under `STANDMEET_LOG=console` (make run, a
// developer's terminal), never in production's JSON logs.
func provideRecoveryMailer(cfg config.Config, logger *zap.Logger) owner.RecoveryMailer {
	return auth.LogMailer{Logger: logger.Named("recovery"), Dev: cfg.LogFormat == "console"}
}

func provideOwnerUnitOfWork(pool *pgxpool.Pool, rec uow.Recorder, mailer owner.RecoveryMailer) *ownerdb.UnitOfWork {
	return ownerdb.New(pool, rec, mailer)
}

func provideOwnerService(uow *ownerdb.UnitOfWork) (*owner.Service, error) {
	return owner.New(owner.Deps{
		UoW:    uow,
		Clock:  domain.SystemClock{},
		Hasher: auth.NewArgon2id(auth.DefaultArgon2idParams()),
		Tokens: auth.RandomTokens{},
	})
}

// provideAuthGate builds the owner authenticator, auth routes and IP-ban
// middleware. No reverse proxy is trusted: the client address is the TCP
// peer until a configuration variable names trusted proxies.
func provideAuthGate(svc *owner.Service, logger *zap.Logger, cfg config.Config) *auth.Gate {
	return auth.New(svc, auth.Options{TrustedProxies: cfg.TrustedProxies}, logger.Named("auth"))
}

// ownerHint tells the operator of an instance without an owner how to
// create one, once, when serve starts.
type ownerHint struct {
	svc    *owner.Service
	logger *zap.Logger
}

// Run checks for an owner (migrations have run by then), logs the hint if
// there is none, and waits for shutdown.
func (h *ownerHint) Run(ctx context.Context) error {
	has, err := h.svc.HasOwners(ctx)
	if err != nil {
		return err
	}
	if !has {
		h.logger.Warn("this instance has no owner yet: create one with `standmeet owner create --email you@example.com` " +
			"(the password is generated and printed once; pipe your own with --password-stdin), " +
			"then issue an API key with `standmeet api-key issue --email you@example.com --name cli`")
	}
	<-ctx.Done()
	return nil
}
