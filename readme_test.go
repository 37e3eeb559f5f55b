package panto_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadme runs the README's set-up and examples as written: every ```sh
// block after a "<!-- runnable" comment, in order, in one bash from the
// repository's root (as a fresh clone has it), with a home, caches and
// sessions of its own so that nothing of the user's is read or written.
// The first block builds the commands (scripts/demo); its other line,
// ./scripts/test, is the command that runs this test, and is left out.
// The next puts them on PATH: an example that needs a step the README
// does not give fails.
func TestReadme(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the commands")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	blocks := runnable(t, "README.md")
	if len(blocks) < 3 {
		t.Fatalf("README.md has %d runnable blocks, want the set-up, the PATH and the turn by hand", len(blocks))
	}
	setup := blocks[0]
	blocks[0] = strings.Replace(setup, "./scripts/test ", "# ./scripts/test ", 1)
	if blocks[0] == setup || !strings.HasPrefix(setup, "./scripts/demo ") {
		t.Fatalf("README.md's first block is not ./scripts/demo then ./scripts/test:\n%s", setup)
	}
	home := t.TempDir()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(blocks, "\n"))
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH", k == "GOPATH", k == "GOCACHE", k == "GOMODCACHE", k == "GOFLAGS", k == "GOPROXY", k == "TMPDIR":
			env = append(env, kv)
		}
	}
	for _, kv := range [][2]string{{"GOCACHE", "go env GOCACHE"}, {"GOMODCACHE", "go env GOMODCACHE"}} {
		if os.Getenv(kv[0]) == "" { // the caches are found from HOME, which changes
			out, err := exec.Command("go", "env", kv[0]).Output()
			if err == nil {
				env = append(env, kv[0]+"="+strings.TrimSpace(string(out)))
			}
		}
	}
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"PANTO_SESSION_DIR="+filepath.Join(home, "sessions"), "TERM=dumb")
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the README's examples fail as written: %v\nstdout:\n%s\nstderr:\n%s", err, tail(stdout.String()), stderr.String())
	}
	for _, want := range []string{"TOTAL", "ID ", ": clean"} {
		if !strings.Contains(stdout.String()+stderr.String(), want) {
			t.Errorf("the output has no %q:\nstdout:\n%s\nstderr:\n%s", want, tail(stdout.String()), stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "command not found") {
		t.Errorf("a command was not found:\n%s", stderr.String())
	}
}

// runnable returns the ```sh blocks of a markdown file that follow a
// "<!-- runnable" comment line.
func runnable(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []string
	var cur *strings.Builder
	marked := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur != nil && line == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		case strings.HasPrefix(line, "<!-- runnable"):
			marked = true
		case line == "```sh" && marked:
			cur = &strings.Builder{}
			marked = false
		case strings.TrimSpace(line) != "":
			marked = false
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}
