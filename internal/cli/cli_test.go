package cli

import (
	"bytes"
	"strings"
	"testing"
)

type testGrammar struct {
	By    string   `enum:"day,model" default:"day"`
	Since string   `help:"x"`
	Tag   []string `help:"repeatable"`
	All   bool
}

// A flag that holds one value, given twice, is a usage error: kong would
// keep the last silently. Repeatable flags stay repeatable.
func TestRepeatedFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"--by", "day"}, 0, ""},
		{[]string{"--by", "day", "--by", "model"}, 2, "--by is given more than once"},
		{[]string{"--by=day", "--by=day"}, 2, "--by is given more than once"},
		{[]string{"--since", "x", "--all", "--since=y"}, 2, "--since is given more than once"},
		{[]string{"--all", "--all"}, 2, "--all is given more than once"},
		{[]string{"--tag", "a", "--tag", "b"}, 0, ""},
	} {
		var g testGrammar
		var stderr bytes.Buffer
		_, code, done := Parse("panto-x", "", &g, tc.args, IO{Stdout: &bytes.Buffer{}, Stderr: &stderr}, nil)
		if tc.code == 0 && done || tc.code != 0 && (!done || code != tc.code) {
			t.Errorf("%q: code %d done %v, want %d (%s)", tc.args, code, done, tc.code, stderr.String())
		}
		if !strings.Contains(stderr.String(), tc.err) || tc.err == "" && stderr.Len() > 0 {
			t.Errorf("%q: stderr %q, want %q", tc.args, stderr.String(), tc.err)
		}
	}
}
