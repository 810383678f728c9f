package main

import (
	"context"
	"io"
)

// Commands holds what the CLI's subcommands other than serve and migrate
// need (owner create, api-key issue, rotate-master-key).
type Commands struct{}

func provideCommands() Commands { return Commands{} }

// Run runs a subcommand other than serve and migrate and returns the exit code.
func (c Commands) Run(ctx context.Context, app *App, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	switch {
	default:
		return 2, errUnknownCommand
	}
}
