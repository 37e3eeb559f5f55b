package cli

import (
	"bytes"
	"testing"
)

// TestArgsAsGiven is hostile report §12: arguments with bytes that are not
// UTF-8 were rewritten to U+FFFD by the flag parser.
func TestArgsAsGiven(t *testing.T) {
	var g struct {
		File  string   `arg:""`
		More  []string `arg:"" optional:""`
		Opt   string
		Ptr   *string
		Other string
	}
	var out, errs bytes.Buffer
	proc := IO{Stdout: &out, Stderr: &errs, Getenv: func(string) string { return "" }}
	_, code, done := Parse("t", "test", &g, []string{"--opt", "x\xe9y", "--ptr=p\xff", "--other", "plain \U0010FF80 rune", "caf\xe9", "a\xc3", "日本"}, proc, nil)
	if done {
		t.Fatalf("parse: %d %s", code, errs.String())
	}
	if g.File != "caf\xe9" || g.Opt != "x\xe9y" || g.Ptr == nil || *g.Ptr != "p\xff" || len(g.More) != 2 || g.More[0] != "a\xc3" || g.More[1] != "日本" {
		t.Fatalf("parsed %q %q %v %q", g.File, g.Opt, g.Ptr, g.More)
	}
}
