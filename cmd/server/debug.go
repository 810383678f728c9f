package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/pprof"
	"time"

	"go.uber.org/zap"
)

// debugServer serves Go's profiler on the loopback address of
// STANDMEET_DEBUG_ADDR, so the server can be profiled under load (make
// bench) without exposing it through the public listener.
type debugServer struct {
	addr   string
	logger *zap.Logger
}

// Run serves until ctx ends.
func (d debugServer) Run(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return serveUntilDone(ctx, d.addr, mux, "profiler", d.logger)
}

// serveUntilDone serves h on addr until ctx ends, then shuts the listener
// down within 2 s; what names it in the log.
func serveUntilDone(ctx context.Context, addr string, h http.Handler, what string, logger *zap.Logger) error {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			logger.Warn(what+" shutdown", zap.Error(err))
		}
	}()
	logger.Info(what+" listening", zap.String("addr", addr))
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
