// Command panto-log is the only writer of panto session files.
package main

import (
	"os"

	"github.com/panto-dev/panto/internal/logcmd"
)

func main() { os.Exit(logcmd.Main()) }
