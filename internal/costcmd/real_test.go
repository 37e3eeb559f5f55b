package costcmd

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/cli"
)

// realClaude is the folder of real Claude Code logs beside the project
// (../shared/real from the repository's root), when it is there.
const realClaude = "../../../shared/real/claude-code"

// TestRealClaudeTotals: panto-cost of the real Claude Code logs of
// ../shared/real, with the built-in prices, gives ccusage's totals: the
// tokens and $31.3293816, which ccusage 20.0.24 (daily --offline --json)
// reported on the same 30 files (BENCHMARKS.md).
func TestRealClaudeTotals(t *testing.T) {
	if _, err := os.Stat(realClaude); err != nil {
		t.Skipf("no real logs at %s (%v): the check of panto-cost against ccusage's totals did not run", realClaude, err)
	}
	var out, errw bytes.Buffer
	io := cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errw, Getenv: func(string) string { return "" }, Cwd: "/"}
	if code := Run([]string{"--format", "json", "--by", "day", realClaude}, io); code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	var r struct {
		Total struct {
			Tokens struct{ Input, Output, CacheRead, CacheWrite int64 }
			Cost   *struct{ USD string }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	tk := r.Total.Tokens
	if tk.Input != 12479 || tk.Output != 35434 || tk.CacheRead != 28689265 || tk.CacheWrite != 3015086 {
		t.Errorf("tokens %+v, ccusage's: input 12479, output 35434, cache read 28689265, cache write 3015086", tk)
	}
	if r.Total.Cost == nil || r.Total.Cost.USD != "31.3293816" {
		t.Errorf("cost %+v, ccusage's $31.3293816", r.Total.Cost)
	}
}
