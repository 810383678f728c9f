// Package logging builds the server's zap logger: JSON for production,
// console for development (make run).
package logging

import (
	"fmt"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// New returns a logger in the given format ("json" or "console") and a
// function that flushes it.
func New(format string) (*zap.Logger, func(), error) {
	var cfg zap.Config
	switch format {
	case "console":
		cfg = zap.NewDevelopmentConfig()
		cfg.EncoderConfig.EncodeLevel = zapcore.CapitalColorLevelEncoder
		cfg.DisableStacktrace = true
	case "json", "":
		cfg = zap.NewProductionConfig()
		cfg.EncoderConfig.TimeKey = "ts"
		cfg.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	default:
		return nil, nil, fmt.Errorf("unknown log format %q", format)
	}
	l, err := cfg.Build()
	if err != nil {
		return nil, nil, fmt.Errorf("build logger: %w", err)
	}
	return l, func() { _ = l.Sync() }, nil
}
