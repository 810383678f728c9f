package main

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/infra/migrate"
)

// Background is a long-running loop of the server other than HTTP and River
// (the relay, for one). Run blocks until ctx is cancelled.
type Background interface {
	Run(ctx context.Context) error
}

// Starter is a Background loop with a first step that must be done
// before River starts and HTTP is served; Serve runs it once the schema
// is migrated.
type Starter interface {
	Start(ctx context.Context) error
}

// BackgroundFunc adapts a function to Background.
type BackgroundFunc func(ctx context.Context) error

// Run calls f.
func (f BackgroundFunc) Run(ctx context.Context) error { return f(ctx) }

// App is everything `standmeet serve` runs, as the composition root builds it.
type App struct {
	Config     config.Config
	Logger     *zap.Logger
	Pool       *pgxpool.Pool
	Migrations []migrate.Migration
	Server     *httpapi.Server
	// Ops are every declared op, as REST, MCP, OpenAPI and the UI project
	// them (the surfaces' tests enumerate them).
	Ops op.Set
	// Endpoints are the ops with their REST routes (httpapi.Routes).
	Endpoints  httpapi.Endpoints
	Worker     *riverjob.Worker
	Background []Background
	Commands   Commands
}

// Serve migrates, runs the background loops' first steps (Starter),
// starts River and the background loops, and serves HTTP
// until ctx is cancelled; then it stops accepting, drains requests, stops
// River within a timeout and returns. The caller closes the pool (cleanup).
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	applied, err := migrate.Apply(ctx, a.Pool, a.Migrations)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if len(applied) > 0 {
		a.Logger.Info("migrations applied", zap.Strings("versions", applied))
	}
	for _, b := range a.Background {
		if s, ok := b.(Starter); ok {
			if err := s.Start(ctx); err != nil {
				return fmt.Errorf("start: %w", err)
			}
		}
	}
	if err := a.Worker.Start(ctx); err != nil {
		return fmt.Errorf("start river: %w", err)
	}
	bgCtx, stopBackground := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, b := range a.Background {
		wg.Add(1)
		go func(b Background) {
			defer wg.Done()
			if err := b.Run(bgCtx); err != nil && bgCtx.Err() == nil {
				a.Logger.Error("background loop stopped", zap.Error(err))
			}
		}(b)
	}
	a.Logger.Info("serving", zap.String("addr", ln.Addr().String()))
	serveErr := a.Server.Serve(ctx, ln, 15*time.Second)
	a.Logger.Info("shutting down")
	stopBackground()
	wg.Wait()
	if err := a.Worker.Shutdown(20 * time.Second); err != nil {
		a.Logger.Warn("river stop", zap.Error(err))
	}
	return serveErr
}
