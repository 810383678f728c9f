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
	srv := &http.Server{Addr: d.addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			d.logger.Warn("profiler shutdown", zap.Error(err))
		}
	}()
	d.logger.Info("profiler listening", zap.String("addr", d.addr))
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
