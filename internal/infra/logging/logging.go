// Package logging builds the server's zap logger: JSON for production,
// console for development (make run).
package logging

import (
	"errors"
	"fmt"
	"os"
	"syscall"

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
	return l, func() {
		// Syncing a terminal or a pipe fails with EINVAL or ENOTTY and loses
		// nothing; any other failure is reported where logs can no longer go.
		if err := l.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTTY) {
			fmt.Fprintln(os.Stderr, "flush logs:", err)
		}
	}, nil
}
