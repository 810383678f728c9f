// Command standmeet is the StandMeet server: the event bus and webhooks of an
// owner's instance, on PostgreSQL and River.
//
//	standmeet serve                                   serve HTTP, run River and the relay
//	standmeet migrate                                 apply pending migrations and exit
//	standmeet owner create --email E [--password-stdin] [--operator]
//	standmeet owner reset-password --email E [--password-stdin]
//	standmeet owner grant-operator --email E | revoke-operator --email E
//	standmeet api-key issue --email E --name N [--scopes S,…]  print a new API key, once
//	standmeet rotate-master-key                       re-seal every secret under the current master key
//	standmeet help                                    print the usage (also -h, --help), touching no database
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
  standmeet serve                                    serve HTTP (admin UI at /admin), run River and the relay
  standmeet migrate                                  apply pending migrations and exit
  standmeet owner create --email E [--password-stdin] [--operator]
                                                     create an owner; prints a generated password once
  standmeet owner reset-password --email E [--password-stdin]
                                                     set a locked-out owner's password (generated and printed
                                                     once unless piped) and end their sessions
  standmeet owner grant-operator --email E           let the owner use River's UI at /admin/tasks
  standmeet owner revoke-operator --email E
  standmeet api-key issue --email E --name N [--scopes read,inbound]
                                                     print a new API key, once; scopes limit it
  standmeet rotate-master-key                        re-seal every secret under the current master key
  standmeet help                                     print this help

Configuration comes from the environment: DATABASE_URL and STANDMEET_MASTER_KEY
(or STANDMEET_MASTER_KEY_FILE) are required; STANDMEET_ADDR (default
127.0.0.1:8080) is where serve listens. Once serving, open
http://127.0.0.1:8080/admin in a browser and sign in with the owner's email
and password.
`

// knownCommands are the first words of the subcommands run knows; anything else
// gets the usage before configuration or the database are touched.
var knownCommands = map[string]bool{"serve": true, "migrate": true, "owner": true, "api-key": true, "rotate-master-key": true}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	if !knownCommands[args[0]] {
		fmt.Fprintf(stderr, "standmeet: unknown command %q\n%s", args[0], usage)
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
