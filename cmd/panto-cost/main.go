// Command panto-cost computes exact costs of token usage.
package main

import (
	"os"

	"github.com/panto-dev/panto/internal/costcmd"
)

func main() { os.Exit(costcmd.Main()) }
