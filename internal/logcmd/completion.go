package logcmd

import (
	"github.com/alecthomas/kong"
	"github.com/panto-dev/panto/internal/cli"
)

type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"bash, zsh or fish."`
}

// Run prints the completion script; it opens no store.
func (c *completionCmd) Run(ctx *kong.Context, e *env) error {
	return cli.Completion(e.out, ctx.Model, c.Shell)
}
