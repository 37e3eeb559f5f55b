// Command panto-fsck checks and repairs panto session files.
package main

import (
	"os"

	"github.com/panto-dev/panto/internal/fsckcmd"
)

func main() { os.Exit(fsckcmd.Main()) }
