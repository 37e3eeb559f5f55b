// Command panto-turn runs one streamed provider turn.
package main

import (
	"os"

	"github.com/panto-dev/panto/internal/turncmd"
)

func main() { os.Exit(turncmd.Main()) }
