package panto_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/costcmd"
	"github.com/panto-dev/panto/internal/fsckcmd"
	"github.com/panto-dev/panto/internal/logcmd"
	"github.com/panto-dev/panto/internal/replaycmd"
)

// TestCommandsRace runs the commands' parallel parts through each
// command's Run in this process, where the race detector watches them (the
// script tests run the commands built without it, script_test.go): cost
// and fsck over the logs of every format at once (ordered.Stream, a
// worker a core), search's workers, then an import of them all, list
// --all and the site of every session. What each says is what the command
// built as a program says of the same logs, byte for byte.
func TestCommandsRace(t *testing.T) {
	t.Parallel()
	plain := plainCommands(t)
	logs, err := filepath.Abs(filepath.Join("internal", "agents", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := map[string]string{
		"HOME":              home,
		"PANTO_SESSION_DIR": filepath.Join(home, "sessions"),
		"XDG_CONFIG_HOME":   filepath.Join(home, ".config"),
		"XDG_CACHE_HOME":    filepath.Join(home, ".cache"),
		"XDG_DATA_HOME":     filepath.Join(home, ".data"),
		"TZ":                "UTC",
		"NO_COLOR":          "1",
	}
	type result struct {
		code        int
		out, stderr string
	}
	inProcess := func(run func([]string, cli.IO) int, args ...string) result {
		var out, errb bytes.Buffer
		code := run(args, cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			Getenv: func(k string) string { return env[k] }, Cwd: home})
		return result{code, out.String(), errb.String()}
	}
	program := func(name string, args ...string) result {
		cmd := exec.Command(filepath.Join(plain, name), args...)
		cmd.Dir = home
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{code, out.String(), errb.String()}
	}
	// Program names in messages ("panto-log: …") are the commands' own in
	// both; how long a search took is not compared.
	elapsed := regexp.MustCompile(`"elapsedMs":\d+`)
	same := func(what string, a, b result) {
		t.Helper()
		a.out, b.out = elapsed.ReplaceAllString(a.out, ""), elapsed.ReplaceAllString(b.out, "")
		if a != b {
			t.Errorf("%s in this process: exit %d\n%s%s\nthe program: exit %d\n%s%s", what, a.code, a.out, a.stderr, b.code, b.out, b.stderr)
		}
	}
	for _, c := range []struct {
		name string
		run  func([]string, cli.IO) int
		args []string
		code int
	}{
		{"panto-cost", costcmd.Run, []string{"--format", "json", logs}, 1}, // 1: a Codex thread missing a page
		{"panto-fsck", fsckcmd.Run, []string{logs}, 0},
		{"panto-log", logcmd.Run, []string{"search", "--path", logs, "--format", "jsonl", "the"}, 3}, // 3: the same page
	} {
		got := inProcess(c.run, c.args...)
		if got.code != c.code || got.out+got.stderr == "" {
			t.Fatalf("%s %s: exit %d, want %d\n%s%s", c.name, strings.Join(c.args, " "), got.code, c.code, got.out, got.stderr)
		}
		same(c.name+" "+c.args[0], got, program(c.name, c.args...))
	}
	imp := inProcess(logcmd.Run, "import", logs)
	if imp.code != 1 || !strings.Contains(imp.stderr, "missing a page") {
		t.Fatalf("import: exit %d\n%s%s", imp.code, imp.out, imp.stderr)
	}
	list := inProcess(logcmd.Run, "list", "--all")
	if list.code != 0 || strings.Count(list.out, "\n") < 20 {
		t.Fatalf("list --all: exit %d\n%s%s", list.code, list.out, list.stderr)
	}
	same("list --all", list, program("panto-log", "list", "--all"))
	site := inProcess(replaycmd.Run, "--site", filepath.Join(home, "site"))
	m := regexp.MustCompile(`(\d+) sessions: (\d+) pages written`).FindStringSubmatch(site.out + site.stderr)
	n := 0
	if m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	if site.code != 0 || n < 20 {
		t.Fatalf("--site: exit %d, want a page for each of 20 sessions or more\n%s%s", site.code, site.out, site.stderr)
	}
}
