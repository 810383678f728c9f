package main

import (
	"context"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"
)

// metricsServer serves /metrics on STANDMEET_METRICS_ADDR, a listener of
// its own for Prometheus on a private network; the public listener then
// serves no /metrics.
type metricsServer struct {
	addr    string
	handler http.Handler
	logger  *zap.Logger
}

// Run serves until ctx ends.
func (m metricsServer) Run(ctx context.Context) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.handler)
	srv := &http.Server{Addr: m.addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			m.logger.Warn("metrics listener shutdown", zap.Error(err))
		}
	}()
	m.logger.Info("metrics listening", zap.String("addr", m.addr))
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
