//go:build poison

package panto_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/costcmd"
	"github.com/panto-dev/panto/internal/fsckcmd"
	"github.com/panto-dev/panto/internal/logcmd"
	"github.com/panto-dev/panto/internal/replaycmd"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/rogpeppe/go-internal/txtar"
)

// realDir is the real logs of other agents, beside the project.
const realDir = "../shared/real"

// TestPoison runs the commands (replay in every format, cost, import,
// fsck, search) in this process over every log of ../shared/real and every
// session file of testdata/ (the script tests' archives and the packages'
// testdata/), twice: with the poison build's poisoning off, then on, and
// holds the second run to the first byte for byte (stdout, stderr, exit
// code, and the sessions an import writes). Poisoned, every line the
// scanner hands out and every reused buffer of lines is overwritten once
// done with (pkg/scan, poison.go): a reader that keeps a view into one
// gives another answer, at once, on files of any size. Every reader is
// covered, the ones added later too: the files are told by their content
// (agents.Read's detection), not by a list of formats here.
//
// Run by scripts/test: go test -tags poison -run TestPoison .
func TestPoison(t *testing.T) {
	if !scan.PoisonBuild {
		t.Fatal("not the poison build")
	}
	work := t.TempDir()
	inputs := poisonInputs(t, work)
	if len(inputs) < 100 {
		t.Fatalf("only %d inputs found", len(inputs))
	}
	var real []string
	if _, err := os.Stat(realDir); err == nil {
		abs, _ := filepath.Abs(realDir)
		real = append(real, abs)
	} else {
		t.Logf("no %s: the real logs are not part of this run", realDir)
	}
	type run struct {
		cmd   string
		args  []string
		stdin string // a file whose bytes are stdin
	}
	var runs []run
	for _, f := range inputs {
		for _, a := range [][]string{
			{"--format", "messages"}, {"--format", "markdown"}, {"--format", "html"}, {"--format", "entries"},
			{"--tree"}, {"--info"}, {"--full"},
		} {
			runs = append(runs, run{cmd: "panto-replay", args: append(a, f)})
		}
		runs = append(runs,
			run{cmd: "panto-replay", args: []string{"--format", "messages", "-"}, stdin: f},
			run{cmd: "panto-cost", args: []string{"--format", "json", "--by", "turn", f}},
			run{cmd: "panto-cost", args: []string{"--format", "html", f}},
			run{cmd: "panto-cost", args: []string{"--format", "jsonl", "-"}, stdin: f},
			run{cmd: "panto-fsck", args: []string{"--json", "-v", f}},
			run{cmd: "panto-log", args: []string{"import", f}},
		)
	}
	for _, d := range real {
		prices := filepath.Join(d, "prices", "litellm-2026-07-24.json")
		runs = append(runs,
			run{cmd: "panto-cost", args: []string{"--format", "json", "--by", "session", "--subagents", d}},
			run{cmd: "panto-cost", args: []string{"--format", "json", "--by", "model", "--pricing", prices, d}},
			run{cmd: "panto-fsck", args: []string{"--json", "-v", d}},
			run{cmd: "panto-log", args: []string{"import", d}},
		)
	}
	// Search (panto-log search) over every folder of inputs at once.
	for _, d := range append(real, filepath.Join(work, "archives"), mustAbs("testdata"), mustAbs("pkg")) {
		runs = append(runs,
			run{cmd: "panto-log", args: []string{"search", "--format", "jsonl", "--path", d, "the"}},
			run{cmd: "panto-log", args: []string{"search", "--format", "jsonl", "--path", d, "-e", "[0-9a-f]{4}"}},
			run{cmd: "panto-log", args: []string{"search", "--format", "jsonl", "--sessions", "--path", d, "-e", "."}},
		)
	}
	sessions := filepath.Join(work, "sessions")
	env := map[string]string{
		"HOME": work, "XDG_CONFIG_HOME": filepath.Join(work, ".config"), "XDG_CACHE_HOME": filepath.Join(work, ".cache"),
		"XDG_DATA_HOME": filepath.Join(work, ".data"), "PANTO_SESSION_DIR": sessions, "NO_COLOR": "1", "TZ": "UTC",
	}
	mains := map[string]func([]string, cli.IO) int{
		"panto-replay": replaycmd.Run, "panto-cost": costcmd.Run, "panto-fsck": fsckcmd.Run, "panto-log": logcmd.Run,
	}
	exec := func(r run) string {
		os.RemoveAll(sessions)
		var stdin []byte
		if r.stdin != "" {
			var err error
			if stdin, err = os.ReadFile(r.stdin); err != nil {
				t.Fatal(err)
			}
		}
		var out, errw bytes.Buffer
		proc := cli.IO{Stdin: bytes.NewReader(stdin), Stdout: &out, Stderr: &errw, Getenv: func(k string) string { return env[k] }, Cwd: work}
		done := make(chan int, 1)
		go func() { done <- mains[r.cmd](r.args, proc) }()
		var code int
		select {
		case code = <-done:
		case <-time.After(2 * time.Minute):
			t.Fatalf("%s %s (poisoning %v) did not end in two minutes", r.cmd, strings.Join(r.args, " "), poisoned)
		}
		var b strings.Builder
		stdout := elapsed.ReplaceAll(out.Bytes(), []byte(`"elapsedMs":0`)) // search says how long it took
		fmt.Fprintf(&b, "exit %d\n-- stdout --\n%s-- stderr --\n%s", code, stdout, errw.Bytes())
		// What an import wrote.
		filepath.WalkDir(sessions, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, _ := os.ReadFile(p)
				fmt.Fprintf(&b, "-- %s --\n%s", strings.TrimPrefix(p, sessions), data)
			}
			return nil
		})
		return b.String()
	}
	want := make([]string, len(runs))
	scan.SetPoison(false)
	poisoned = false
	for i, r := range runs {
		want[i] = exec(r)
	}
	scan.SetPoison(true)
	poisoned = true
	defer func() { scan.SetPoison(true) }()
	failed := 0
	for i, r := range runs {
		got := exec(r)
		if got != want[i] {
			failed++
			if failed <= 20 {
				t.Errorf("%s %s (stdin %s): poisoned, the output differs from a normal run's:\n%s", r.cmd, strings.Join(r.args, " "), r.stdin, firstDiff(want[i], got))
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d runs differ", failed, len(runs))
	}
	t.Logf("%d runs over %d inputs (and %s), each the same poisoned and not", len(runs), len(inputs), strings.Join(real, ", "))
}

func mustAbs(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return abs
}

var elapsed = regexp.MustCompile(`"elapsedMs":[0-9]+`)

// poisoned says whether the run under way is poisoned, for messages.
var poisoned bool

// firstDiff shows where two outputs part: the lines around the first
// that differs.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			cut := func(s string) string {
				if len(s) > 300 {
					return s[:300] + "…"
				}
				return s
			}
			return fmt.Sprintf("line %d:\n normal:   %q\n poisoned: %q", i+1, cut(x), cut(y))
		}
	}
	return "(same lines)"
}

// poisonInputs returns the session files to run the commands on: the logs
// of ../shared/real (read in place), the files of testdata/ and of the
// packages' testdata/ directories, and the .jsonl and .json files of the
// script tests' archives, written under work, each archive in a directory
// of its own (a Claude Code log's subagents are found beside it).
func poisonInputs(t *testing.T, work string) []string {
	var files []string
	take := func(p string) bool {
		switch {
		case strings.Contains(p, "/fuzz/"), strings.HasSuffix(p, ".txtar"), strings.HasSuffix(p, ".go"):
			return false
		}
		b, err := os.ReadFile(p)
		if err != nil || len(bytes.TrimSpace(b)) == 0 {
			return false
		}
		return bytes.TrimSpace(b)[0] == '{' || strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".db")
	}
	walk := func(root string) {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && d.Name() == "prices" && strings.HasPrefix(p, realDir) {
				return filepath.SkipDir
			}
			if !d.IsDir() && d.Type().IsRegular() && take(p) {
				abs, _ := filepath.Abs(p)
				files = append(files, abs)
			}
			return nil
		})
	}
	if _, err := os.Stat(realDir); err == nil {
		walk(realDir)
	}
	walk("testdata")
	for _, top := range []string{"pkg", "internal"} {
		dirs, _ := filepath.Glob(filepath.Join(top, "*", "testdata"))
		for _, d := range dirs {
			walk(d)
		}
	}
	archives, _ := filepath.Glob("testdata/script/*.txtar")
	for _, a := range archives {
		ar, err := txtar.ParseFile(a)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(work, "archives", strings.TrimSuffix(filepath.Base(a), ".txtar"))
		for _, f := range ar.Files {
			if !strings.HasSuffix(f.Name, ".jsonl") && !strings.HasSuffix(f.Name, ".json") {
				continue
			}
			p := filepath.Join(dir, f.Name)
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o600); err != nil {
				t.Fatal(err)
			}
			files = append(files, p)
		}
	}
	sort.Strings(files)
	return files
}
