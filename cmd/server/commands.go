package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/migrate"
	"github.com/standmeet/standmeet/internal/owner"
)

// Commands holds what the CLI's subcommands other than serve and migrate
// need (owner create, api-key issue, rotate-master-key).
type Commands struct {
	// Owners runs `owner create` and `api-key issue`.
	Owners *owner.Service
	// RotateMasterKey runs `rotate-master-key` (unseal.go).
	RotateMasterKey masterKeyRotator
}

// Run runs a subcommand other than serve and migrate and returns the exit code.
func (c Commands) Run(ctx context.Context, app *App, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	switch {
	case len(args) >= 2 && args[0] == "owner" && args[1] == "create":
		return c.ownerCreate(ctx, app, args[2:], stdin, stdout, stderr)
	case len(args) >= 2 && args[0] == "owner" && args[1] == "reset-password":
		return c.ownerResetPassword(ctx, app, args[2:], stdin, stdout, stderr)
	case len(args) >= 2 && args[0] == "owner" && (args[1] == "grant-operator" || args[1] == "revoke-operator"):
		return c.ownerOperator(ctx, app, args[1] == "grant-operator", args[2:], stdout, stderr)
	case len(args) >= 2 && args[0] == "api-key" && args[1] == "issue":
		return c.apiKeyIssue(ctx, app, args[2:], stdout, stderr)
	case len(args) == 1 && args[0] == "rotate-master-key":
		if _, err := migrate.Apply(ctx, app.Pool, app.Migrations); err != nil {
			return 1, fmt.Errorf("migrate: %w", err)
		}
		n, err := c.RotateMasterKey(ctx)
		if err != nil {
			return 1, err
		}
		fmt.Fprintf(stdout, "re-sealed %d secret(s) under the current master key\n", n)
		return 0, nil
	default:
		return 2, errUnknownCommand
	}
}

// ownerCreate: `standmeet owner create --email E [--password-stdin]`. The
// password is read from the first line of stdin, or generated and printed
// once. Pending migrations are applied first, as serve does, so the command
// works on a fresh database.
func (c Commands) ownerCreate(ctx context.Context, app *App, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("owner create", flag.ContinueOnError)
	operator := fs.Bool("operator", false, "make the owner the instance's operator (River's UI at /admin/tasks)")
	in, code, err := c.ownerPasswordArgs(ctx, app, fs, "owner create --email E [--password-stdin] [--operator]", args, stdin, stderr)
	if code != 0 || err != nil {
		return code, err
	}
	email, password, generated := in.email, in.password, in.generated
	o, err := c.Owners.CreateOwner(ctx, email, password)
	if err != nil {
		return 1, err
	}
	if *operator {
		if o, err = c.Owners.SetOperator(ctx, o.Email, true); err != nil {
			return 1, err
		}
	}
	role := ""
	if o.Operator {
		role = ", operator"
	}
	fmt.Fprintf(stdout, "created owner %s (%s%s)\n", o.Email, o.ID, role)
	if generated {
		fmt.Fprintf(stdout, "password: %s\n", password)
		fmt.Fprintln(stderr, "the password is shown this once; store it now")
	}
	return 0, nil
}

// ownerPassword is what the owner commands that set a password read.
type ownerPassword struct {
	email, password string
	generated       bool
}

// ownerPasswordArgs parses fs (adding --email and --password-stdin to the
// flags the command declared) from args, reads or generates the password,
// and migrates the database. A usage error prints usage and returns 2.
func (c Commands) ownerPasswordArgs(ctx context.Context, app *App, fs *flag.FlagSet, usage string, args []string, stdin io.Reader, stderr io.Writer) (ownerPassword, int, error) {
	fs.SetOutput(stderr)
	email := fs.String("email", "", "the owner's email (required)")
	fromStdin := fs.Bool("password-stdin", false, "read the password from the first line of stdin instead of generating one")
	if err := fs.Parse(args); err != nil {
		return ownerPassword{}, 2, nil
	}
	if *email == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: standmeet "+usage)
		return ownerPassword{}, 2, nil
	}
	password, generated, err := c.password(*fromStdin, stdin)
	if err != nil {
		return ownerPassword{}, 1, err
	}
	if _, err := migrate.Apply(ctx, app.Pool, app.Migrations); err != nil {
		return ownerPassword{}, 1, fmt.Errorf("migrate: %w", err)
	}
	return ownerPassword{email: *email, password: password, generated: generated}, 0, nil
}

// password reads the password from the first line of stdin, or generates
// one (generated true), which the caller prints once.
func (c Commands) password(fromStdin bool, stdin io.Reader) (password string, generated bool, err error) {
	if fromStdin {
		line, err := bufio.NewReaderSize(stdin, owner.MaxPasswordLen+2).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", false, fmt.Errorf("read password from stdin: %w", err)
		}
		return strings.TrimRight(line, "\r\n"), false, nil
	}
	pw, err := c.Owners.GeneratePassword()
	if err != nil {
		return "", false, err
	}
	return pw, true, nil
}

// ownerResetPassword: `standmeet owner reset-password --email E
// [--password-stdin]` is the way back in for a locked-out owner: the
// password is read from stdin or generated and printed once, and every
// session of the owner ends.
func (c Commands) ownerResetPassword(ctx context.Context, app *App, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("owner reset-password", flag.ContinueOnError)
	in, code, err := c.ownerPasswordArgs(ctx, app, fs, "owner reset-password --email E [--password-stdin]", args, stdin, stderr)
	if code != 0 || err != nil {
		return code, err
	}
	email, password, generated := in.email, in.password, in.generated
	o, err := c.Owners.ResetPassword(ctx, email, password)
	if err != nil {
		return 1, err
	}
	fmt.Fprintf(stdout, "reset the password of %s (%s); every session of theirs has ended\n", o.Email, o.ID)
	if generated {
		fmt.Fprintf(stdout, "password: %s\n", password)
		fmt.Fprintln(stderr, "the password is shown this once; give it to the owner, who can change it under Account")
	}
	return 0, nil
}

// ownerOperator: `standmeet owner grant-operator --email E` and
// `standmeet owner revoke-operator --email E` give or take the operator role
// (River's UI at /admin/tasks, every owner's jobs and queues).
func (c Commands) ownerOperator(ctx context.Context, app *App, grant bool, args []string, stdout, stderr io.Writer) (int, error) {
	name := "revoke-operator"
	if grant {
		name = "grant-operator"
	}
	fs := flag.NewFlagSet("owner "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	email := fs.String("email", "", "the owner's email (required)")
	if err := fs.Parse(args); err != nil {
		return 2, nil
	}
	if *email == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "usage: standmeet owner %s --email E\n", name)
		return 2, nil
	}
	if _, err := migrate.Apply(ctx, app.Pool, app.Migrations); err != nil {
		return 1, fmt.Errorf("migrate: %w", err)
	}
	o, err := c.Owners.SetOperator(ctx, *email, grant)
	if err != nil {
		return 1, err
	}
	if o.Operator {
		fmt.Fprintf(stdout, "%s is the operator: River's UI at /admin/tasks is open to them\n", o.Email)
	} else {
		fmt.Fprintf(stdout, "%s is not the operator: /admin/tasks answers 404 to them\n", o.Email)
	}
	return 0, nil
}

// apiKeyIssue: `standmeet api-key issue --email E --name N` prints the new
// key, once, and nothing else on stdout (so `KEY=$(standmeet api-key issue …)`
// works).
func (c Commands) apiKeyIssue(ctx context.Context, app *App, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("api-key issue", flag.ContinueOnError)
	fs.SetOutput(stderr)
	email := fs.String("email", "", "the owner's email (required)")
	name := fs.String("name", "", "what the key is for (required)")
	scopeList := fs.String("scopes", "", "limit the key to these comma-separated scopes (read, publish, webhooks, inbound, notes); empty: a full key")
	if err := fs.Parse(args); err != nil {
		return 2, nil
	}
	if *email == "" || *name == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: standmeet api-key issue --email E --name N [--scopes read,inbound]")
		return 2, nil
	}
	var scopes []op.Scope
	for _, sc := range strings.Split(*scopeList, ",") {
		if sc = strings.TrimSpace(sc); sc != "" {
			scopes = append(scopes, op.Scope(sc))
		}
	}
	if _, err := migrate.Apply(ctx, app.Pool, app.Migrations); err != nil {
		return 1, fmt.Errorf("migrate: %w", err)
	}
	k, err := c.Owners.IssueAPIKeyForEmail(ctx, *email, *name, scopes)
	if err != nil {
		return 1, err
	}
	fmt.Fprintln(stdout, k.Key)
	return 0, nil
}
