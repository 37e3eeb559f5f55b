// Command panto-replay rebuilds a conversation from a panto session file.
package main

import (
	"os"

	"github.com/panto-dev/panto/internal/replaycmd"
)

func main() { os.Exit(replaycmd.Main()) }
