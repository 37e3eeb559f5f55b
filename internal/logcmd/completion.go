package logcmd

import (
	"fmt"

	"github.com/alecthomas/kong"
	"github.com/panto-dev/panto/internal/cli"
)

type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"bash, zsh or fish: panto-log's script, then lines that load the other four commands' own (those on PATH), so that one line, source <(panto-log completion bash), completes all five."`
}

// others are the commands whose scripts panto-log completion loads too.
var others = []string{"panto-cost", "panto-replay", "panto-turn", "panto-fsck"}

// Run prints the completion script, and the lines that load the other
// commands' scripts from their own --completion (each from its grammar,
// so they never go stale); it opens no store. panto-log --completion
// SHELL prints panto-log's alone.
func (c *completionCmd) Run(ctx *kong.Context, e *env) error {
	if err := cli.Completion(e.out, ctx.Model, c.Shell); err != nil {
		return err
	}
	fmt.Fprintf(e.out, "# The other panto commands (those on PATH), from their own grammars.\n")
	for _, cmd := range others {
		switch c.Shell {
		case "fish":
			fmt.Fprintf(e.out, "command -q %s; and %s --completion fish | source\n", cmd, cmd)
		default:
			fmt.Fprintf(e.out, "command -v %s >/dev/null 2>&1 && source <(%s --completion %s)\n", cmd, cmd, c.Shell)
		}
	}
	return nil
}
