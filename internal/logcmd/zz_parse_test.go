package logcmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/cli"
)

func BenchmarkZZVersion(b *testing.B) {
	for b.Loop() {
		var out bytes.Buffer
		Run([]string{"--version"}, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, Cwd: "/"})
	}
}
