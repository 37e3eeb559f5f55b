package logcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/cli"
)

// run runs panto-log in this process in dir, with env as its whole
// environment and stdin empty.
func run(t *testing.T, dir string, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	proc := cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }, Cwd: dir}
	code = Run(args, proc)
	return code, out.String(), errb.String()
}

// TestFlagsFirst: a combination of flags a subcommand refuses is refused
// (exit 2, one line) before anything is opened: the store PANTO_STORE names
// here is no store at all, and no file is read or written.
func TestFlagsFirst(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"append", "--provider", "p", "s.jsonl"}, "--provider and --model go together"},
		{[]string{"append", "--model", "m", "s.jsonl"}, "--provider and --model go together"},
		{[]string{"append", "--user", "a", "--user-file", "f", "s.jsonl"}, "--user and --user-file: give one"},
		{[]string{"push", "--force", "--to", "postgres://h/db"}, "--force goes with --follow or --once"},
		{[]string{"push", "--force", "--status", "--to", "postgres://h/db"}, "--force goes with --follow or --once"},
		{[]string{"push", "--status", "--once", "--to", "postgres://h/db"}, "--status goes alone"},
		{[]string{"push", "--follow", "--once", "--to", "postgres://h/db"}, "--follow and --once: give one"},
		{[]string{"push", "--json", "--to", "postgres://h/db"}, "--json and --poll go with --follow, --once or --status"},
		{[]string{"push", "--poll", "1s", "--to", "postgres://h/db"}, "--json and --poll go with --follow, --once or --status"},
		{[]string{"push", "--jobs", "0", "--to", "postgres://h/db"}, "--jobs 0: give 1 to 32"},
		{[]string{"push", "--jobs", "33", "--to", "postgres://h/db"}, "--jobs 33: give 1 to 32"},
		{[]string{"push", "--jobs", "2", "--status", "--to", "postgres://h/db"}, "--jobs goes with a push, not with --follow, --once or --status"},
		{[]string{"push", "--jobs", "4", "--follow", "--to", "postgres://h/db"}, "--jobs goes with a push, not with --follow, --once or --status"},
		{[]string{"push", "--jobs", "1", "--once", "--to", "postgres://h/db"}, "--jobs goes with a push, not with --follow, --once or --status"},
		{[]string{"import", "--once"}, "--follow and --once import into a database: give --to postgres://…"},
		{[]string{"import", "--follow", "--once", "--to", "postgres://h/db"}, "--follow and --once: give one"},
		{[]string{"import", "--to", "postgres://h/db"}, "--to, --json and --poll go with --follow or --once"},
		{[]string{"import", "--json"}, "--to, --json and --poll go with --follow or --once"},
	} {
		dir := t.TempDir()
		env := map[string]string{"PANTO_STORE": "nosuchkind://x", "HOME": dir}
		code, stdout, stderr := run(t, dir, env, c.args...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "panto-log: error: "+c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
		if strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: not one line: %q", c.args, stderr)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%q: wrote %v", c.args, entries)
		}
	}
}

// TestStoreAfterFlags: flags that go together reach the store, whose
// error then is the one said (exit 2 for a URL that names no store); the
// completion script needs no store.
func TestStoreAfterFlags(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"PANTO_STORE": "nosuchkind://x"}
	for _, args := range [][]string{
		{"new"}, {"list"}, {"latest"}, {"resolve", "01"}, {"export", "s.jsonl"},
		{"append", "--user", "hi", "s.jsonl"}, {"truncate", "s.jsonl"},
		{"push", "--to", "postgres://h/db"}, {"pull", "--from", "postgres://h/db", "01"},
		{"import"}, {"import", "--once", "--to", "postgres://h/db"},
	} {
		code, _, stderr := run(t, dir, env, args...)
		if code != 2 || !strings.Contains(stderr, `no store of kind "nosuchkind"`) {
			t.Errorf("%q: exit %d, stderr %q; want the store's error, exit 2", args, code, stderr)
		}
	}
	code, stdout, stderr := run(t, dir, env, "completion", "bash")
	if code != 0 || !strings.Contains(stdout, "panto-log") || stderr != "" {
		t.Errorf("completion bash: exit %d, stdout %d bytes, stderr %q", code, len(stdout), stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("wrote %v", entries)
	}
}

// TestCommandsRun: every subcommand of the grammar runs through its Run
// method (a subcommand without one would fail here, not in a user's hands):
// each one's --help exits 0, and each one, run, gets past the dispatch.
func TestCommandsRun(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"PANTO_SESSION_DIR": filepath.Join(dir, "sessions"), "HOME": dir}
	for _, args := range [][]string{
		{"new"}, {"list"}, {"latest"}, {"resolve", "01"}, {"export", "s.jsonl"},
		{"truncate", "s.jsonl"}, {"completion", "zsh"},
	} {
		code, _, stderr := run(t, dir, env, args...)
		if code > 3 || strings.Contains(stderr, "unknown command") || strings.Contains(stderr, "Run()") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
}
