package main

import (
	"context"
	"net/http"

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
	return serveUntilDone(ctx, m.addr, mux, "metrics", m.logger)
}
