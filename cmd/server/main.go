// Command standmeet is the StandMeet server: the event bus and webhooks of an
// owner's instance, on PostgreSQL and River.
//
//	standmeet serve                                   serve HTTP, run River and the relay
//	standmeet migrate                                 apply pending migrations and exit
//	standmeet owner create --email E [--password-stdin] [--operator]
//	standmeet owner grant-operator --email E | revoke-operator --email E
//	standmeet api-key issue --email E --name N        print a new API key, once
//	standmeet rotate-master-key                       re-seal every secret under the current master key
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/infra/logging"
	"github.com/standmeet/standmeet/internal/infra/migrate"
)

const usage = `usage:
  standmeet serve
  standmeet migrate
  standmeet owner create --email E [--password-stdin] [--operator]
  standmeet owner grant-operator --email E   (River's UI at /admin/tasks)
  standmeet owner revoke-operator --email E
  standmeet api-key issue --email E --name N
  standmeet rotate-master-key
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cfg, err := config.FromEnv()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	logger, flush, err := logging.New(cfg.LogFormat)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer flush()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	app, cleanup, err := initApp(ctx, cfg, logger)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer cleanup()

	switch args[0] {
	case "serve":
		ln, err := net.Listen("tcp", cfg.Addr)
		if err != nil {
			fmt.Fprintln(stderr, &config.Error{Var: "STANDMEET_ADDR", Reason: err.Error()})
			return 1
		}
		if err := app.Serve(ctx, ln); err != nil {
			logger.Error("serve", zap.Error(err))
			return 1
		}
		return 0
	case "migrate":
		applied, err := migrate.Apply(ctx, app.Pool, app.Migrations)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintf(stdout, "applied %d migration(s)\n", len(applied))
		return 0
	default:
		code, err := app.Commands.Run(ctx, app, args, stdin, stdout, stderr)
		if errors.Is(err, errUnknownCommand) {
			fmt.Fprint(stderr, usage)
			return 2
		}
		if err != nil {
			fmt.Fprintln(stderr, err)
		}
		return code
	}
}

var errUnknownCommand = errors.New("unknown command")
