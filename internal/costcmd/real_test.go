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
	proc := cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errw, Getenv: func(string) string { return "" }, Cwd: "/"}
	if code := Run([]string{"--format", "json", "--by", "day", realClaude}, proc); code != 0 {
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

// TestRealBuiltinPrices: every model of the real logs of ../shared/real
// that panto reads has a built-in price (no row lacks one, but for models
// LiteLLM's file has no price for either: OpenCode's custom providers, a
// run stream that names no model, whose cost stays unknown), and the
// built-in table prices them as LiteLLM's file of 2026-07-24, the source
// of their prices, does: the same known cost, model by model (Codex's
// priority tier at its own rates).
func TestRealBuiltinPrices(t *testing.T) {
	const real = "../../../shared/real"
	if _, err := os.Stat(real); err != nil {
		t.Skipf("no real logs at %s (%v): the built-in prices were not checked against them", real, err)
	}
	type report struct {
		Rows []struct {
			Key           string
			KnownCost     struct{ USD string }
			MissingPrices []string
		}
	}
	run := func(args ...string) report {
		var out, errw bytes.Buffer
		proc := cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errw, Getenv: func(string) string { return "" }, Cwd: "/"}
		if code := Run(append([]string{"--format", "json", "--by", "model"}, args...), proc); code != 0 && code != 1 { // 1: a file of an agent panto does not read yet
			t.Fatalf("exit %d: %s", code, errw.String())
		}
		var r report
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Every agent's folder: a reader added to the registry is held to
	// the built-in prices as soon as it reads its logs.
	var dirs []string
	ents, err := os.ReadDir(real)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() && e.Name() != "prices" {
			dirs = append(dirs, real+"/"+e.Name())
		}
	}
	builtin := run(dirs...)
	litellm := run(append([]string{"--pricing-only", real + "/prices/litellm-2026-07-24.json"}, dirs...)...)
	want := map[string]string{}
	unpriced := map[string]bool{} // models LiteLLM's file has no price for either (a custom provider's; a run stream names none)
	for _, r := range litellm.Rows {
		want[r.Key] = r.KnownCost.USD
		unpriced[r.Key] = len(r.MissingPrices) > 0
	}
	if len(builtin.Rows) < 8 {
		t.Fatalf("%d models in the real logs, want at least 8", len(builtin.Rows))
	}
	for _, r := range builtin.Rows {
		if len(r.MissingPrices) > 0 && !unpriced[r.Key] {
			t.Errorf("%s: no built-in price for %v", r.Key, r.MissingPrices)
		}
		if w, ok := want[r.Key]; ok && w != r.KnownCost.USD {
			t.Errorf("%s: built-in $%s, LiteLLM's file $%s", r.Key, r.KnownCost.USD, w)
		}
	}
}
