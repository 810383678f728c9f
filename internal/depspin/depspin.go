// Package depspin keeps the project's chosen modules in go.mod while the
// packages that use them are being written. It is imported by nothing and is
// removed once every module is imported by real code.
package depspin

import (
	_ "github.com/alexedwards/argon2id"
	_ "github.com/chromedp/chromedp"
	_ "github.com/getkin/kin-openapi/openapi3"
	_ "github.com/google/uuid"
	_ "github.com/google/wire"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/labstack/echo/v4"
	_ "github.com/labstack/echo/v4/middleware"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/riverqueue/river"
	_ "github.com/riverqueue/river/riverdriver/riverpgxv5"
	_ "github.com/riverqueue/river/rivermigrate"
	_ "github.com/riverqueue/river/rivertest"
	_ "github.com/riverqueue/river/rivertype"
	_ "github.com/stretchr/testify/require"
	_ "go.uber.org/zap"
	_ "go.uber.org/zap/exp/zapslog"
	_ "go.uber.org/zap/zaptest/observer"
	_ "golang.org/x/crypto/chacha20poly1305"
	_ "riverqueue.com/riverui"
)
