package panto_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/logcmd"
	"github.com/panto-dev/panto/internal/pgtest"
)

// sh runs a command with env and returns its stdout; a failure fails the
// test.
func sh(t *testing.T, env []string, stdin string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

const followPair = `{"role":"user","content":[{"type":"text","text":"hello"}]}
{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"p","model":"m","stopReason":"stop","usage":{"input":3,"output":1}}
`

// pantoLog runs panto-log in this process (logcmd.Run: the command's own
// code, from its arguments on) with env for its environment,
// a cwd of "/" and an empty stdin, and returns what it wrote to stdout and
// stderr and its exit code. Where a test starts a command hundreds of
// times and the process is not what is tested (the writers beside a
// follower), this spares a race-built process's start, about 60 ms of CPU
// each.
func pantoLog(env []string, args ...string) (string, int) {
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	var out lockedBuffer
	proc := cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: func(k string) string { return vars[k] }, Cwd: "/"}
	code := logcmd.Run(args, proc)
	return out.String(), code
}

// waitAgree waits until push --status says every session file and the
// database agree.
func waitAgree(t *testing.T, env []string, url string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		cmd := exec.Command("panto-log", "push", "--status", "--to", url)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the follower did not catch up in %s:\n%s", within, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// follower is a panto-log push --follow (or import --follow) child.
type followerProc struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
}

// lockedBuffer is a child's stderr, read by the test while the child
// still writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startFollower(t *testing.T, env []string, args ...string) *followerProc {
	t.Helper()
	cmd := exec.Command("panto-log", args...)
	cmd.Env = env
	f := &followerProc{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = f.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *followerProc) kill() {
	f.cmd.Process.Signal(syscall.SIGKILL)
	f.cmd.Wait()
}

// TestFollowFaults: three writers append (panto-log append, run in this
// process: 300 appends) to three
// sessions while the follower is killed with SIGKILL at random moments and
// started again, and the server is stopped (immediate) and started again.
// At the end every session in the database is its file byte for byte, no
// entry twice, none missing; a truncate reached panto_cuts; a deleted
// file's session is whole in the database.
func TestFollowFaults(t *testing.T) {
	t.Parallel()
	srv := pgtest.Own(t)
	dir := t.TempDir()
	base := filepath.Join(dir, "sessions")
	env := append(os.Environ(), "PANTO_SESSION_DIR="+base, "HOME="+dir, "XDG_CACHE_HOME="+filepath.Join(dir, ".cache"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "XDG_DATA_HOME="+filepath.Join(dir, ".data"))
	files := make([]string, 3)
	for i := range files {
		files[i] = filepath.Join(base, fmt.Sprintf("--proj%d--", i), fmt.Sprintf("w%d.jsonl", i))
		sh(t, env, followPair, "panto-log", "append", "-q", "--provider", "p", "--model", "m", files[i])
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 22))
	t.Logf("seed %d", seed)

	var wg sync.WaitGroup
	done := make(chan struct{})
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 100 {
				if out, code := pantoLog(env, "append", "-q", "--user", fmt.Sprintf("writer %d line %d", i, n), f); code != 0 {
					t.Errorf("append: exit %d: %s", code, out)
					return
				}
				// As long between appends as when each was a process of
				// its own (100 ms and more): the follower is killed as often.
				time.Sleep(time.Duration(70+n%7*10) * time.Millisecond)
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()

	// A second follower of the same files all along (polling, not
	// watching): two followers never double a line.
	second := startFollower(t, env, "push", "--follow", "--poll", "20ms", "--to", srv.URL)
	// The follower, killed at random points; the server stopped once, with a
	// follower running across the stop.
	kills, stopped := 0, false
	var retried bool
	for running := true; running; {
		f := startFollower(t, env, "push", "--follow", "--to", srv.URL)
		wait := time.Duration(30+rng.IntN(400)) * time.Millisecond
		if kills == 3 && !stopped {
			time.Sleep(100 * time.Millisecond)
			if err := srv.Ctl("stop -m immediate"); err != nil {
				t.Error(err)
			}
			time.Sleep(800 * time.Millisecond)
			if err := srv.Ctl("start"); err != nil {
				t.Error(err)
			}
			stopped = true
			wait = time.Second // it catches up by itself
		}
		select {
		case <-done:
			running = false
		case <-time.After(wait):
		}
		f.kill()
		kills++
		if strings.Contains(f.stderr.String(), "retrying in") {
			retried = true
		}
	}
	second.kill()
	if regexp.MustCompile(`(?m)^panto-log: error:`).MatchString(second.stderr.String()) {
		t.Errorf("the second follower failed:\n%s", second.stderr)
	}
	if !retried {
		t.Errorf("no follower said it was retrying while the server was down")
	}
	t.Logf("%d kills", kills)

	f := startFollower(t, env, "push", "--follow", "--to", srv.URL)
	defer func() { f.kill() }()
	waitAgree(t, env, srv.URL, 20*time.Second)

	// A truncate reaches panto_cuts; the session goes on after it.
	lines := strings.Split(strings.TrimSpace(readFile(t, files[0])), "\n")
	after := regexp.MustCompile(`"id":"([0-9a-f]{8})"`).FindStringSubmatch(lines[10])[1]
	cmd := exec.Command("panto-log", "truncate", "--after", after, files[0])
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("truncate: %v: %s", err, out)
	}
	cut := int64(len(lines) - 11)
	waitAgree(t, env, srv.URL, 10*time.Second)
	sh(t, env, "", "panto-log", "append", "-q", "--user", "after the cut", files[0])

	// A new project, and a session in it, while the follower runs: watched
	// as they appear (the follower of the base learns of the directory by
	// its event, not by a rescan, which comes only once a minute).
	fresh := filepath.Join(base, "--new-project--", "fresh.jsonl")
	sh(t, env, followPair, "panto-log", "append", "-q", "--provider", "p", "--model", "m", fresh)
	waitAgree(t, env, srv.URL, 10*time.Second)

	// A deleted file: the database keeps its session.
	deleted := readFile(t, files[2])
	if err := os.Remove(files[2]); err != nil {
		t.Fatal(err)
	}
	sh(t, env, "", "panto-log", "append", "-q", "--user", "one more", files[1])
	waitAgree(t, env, srv.URL, 10*time.Second)
	f.kill()

	ctx := context.Background()
	db, err := pgx.Connect(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	for i, path := range files {
		want := deleted
		if i != 2 {
			want = readFile(t, path)
		}
		id := regexp.MustCompile(`"id":"([0-9a-f-]{36})"`).FindStringSubmatch(want)[1]
		got := sh(t, env, "", "panto-log", "--store", srv.URL, "export", id)
		if got != want {
			t.Errorf("session %d: the database's export differs from the file (%d bytes, file %d)", i, len(got), len(want))
		}
		var n, distinct int64
		if err := db.QueryRow(ctx, `SELECT count(*), count(DISTINCT id) FROM panto_entries WHERE session = $1`, id).Scan(&n, &distinct); err != nil {
			t.Fatal(err)
		}
		if entries := int64(strings.Count(want, "\n") - 1); n != entries || distinct != entries {
			t.Errorf("session %d: %d entries in the database (%d distinct ids), the file has %d", i, n, distinct, entries)
		}
		var cuts int64
		if err := db.QueryRow(ctx, `SELECT count(*) FROM panto_cuts WHERE session = $1`, id).Scan(&cuts); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int64{true: cut}[i == 0]; cuts != want {
			t.Errorf("session %d: %d lines in panto_cuts, want %d", i, cuts, want)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFollowClaude: a Claude Code transcript written line by line (its
// responses in several copies, each grown by the next) is imported as it
// grows and costs in the database what the file costs.
func TestFollowClaude(t *testing.T) {
	t.Parallel()
	srv := pgtest.Own(t)
	dir := t.TempDir()
	env := append(os.Environ(), "HOME="+dir, "XDG_CACHE_HOME="+filepath.Join(dir, ".cache"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "XDG_DATA_HOME="+filepath.Join(dir, ".data"))
	src := filepath.Join(dir, ".claude", "projects", "-home-u-proj")
	if err := os.MkdirAll(src, 0o700); err != nil {
		t.Fatal(err)
	}
	f := startFollower(t, env, "import", "--follow", "--to", srv.URL) // no paths: the agents' own places
	defer func() { f.kill() }()
	fixture := readFile(t, "testdata/follow/claude.jsonl")
	log := filepath.Join(src, "0a9a8045-53e9-44b1-83fb-aafc6e1f4f0b.jsonl")
	w, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.SplitAfter(fixture, "\n") { // each line torn in two for a moment
		w.WriteString(line[:len(line)/2])
		time.Sleep(40 * time.Millisecond)
		w.WriteString(line[len(line)/2:])
		time.Sleep(100 * time.Millisecond)
	}
	w.Close()
	want := total(sh(t, env, "", "panto-cost", "--format", "jsonl", log))
	deadline := time.Now().Add(15 * time.Second)
	for {
		cmd := exec.Command("panto-cost", "--store", srv.URL, "--all", "--format", "jsonl")
		cmd.Env = env
		out, _ := cmd.Output()
		got := total(string(out))
		if got == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database costs\n%s\nthe file\n%s\nfollower:\n%s", got, want, f.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if regexp.MustCompile(`(?m)^panto-log: error:`).MatchString(f.stderr.String()) {
		t.Errorf("a log being written was reported:\n%s", f.stderr)
	}
	// History the agent deletes stays in the database.
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	out := sh(t, env, "", "panto-cost", "--store", srv.URL, "--all", "--format", "jsonl")
	if total(out) != want {
		t.Errorf("after the log was deleted the database costs\n%s", total(out))
	}
}

// total is the "by":"total" line of a jsonl cost report.
func total(report string) string {
	for _, l := range strings.Split(report, "\n") {
		if strings.HasPrefix(l, `{"by":"total"`) {
			return l
		}
	}
	return ""
}

// TestFollowOpenCode: an opencode.db of several sessions, open in OpenCode
// (its write-ahead log beside it, where the new rows go), is followed
// session by session: each into a panto session of its own, and what
// OpenCode writes next (into the WAL only: the database file does not
// change) reaches the database, which then costs what the file costs.
func TestFollowOpenCode(t *testing.T) {
	t.Parallel()
	srv := pgtest.Own(t)
	dir := t.TempDir()
	env := append(os.Environ(), "HOME="+dir, "XDG_CACHE_HOME="+filepath.Join(dir, ".cache"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "XDG_DATA_HOME="+filepath.Join(dir, ".data"))
	path := filepath.Join(dir, ".data", "opencode", "opencode.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, f := range []string{"schema.sql", "shapes.sql"} {
		if _, err := db.Exec(readFile(t, filepath.Join("testdata", "opencode", f))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("OpenCode's database is open: its WAL should be there: %v", err)
	}
	f := startFollower(t, env, "import", "--follow", "--to", srv.URL) // no paths: the agents' own places
	defer func() { f.kill() }()
	agree := func(what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			want := total(sh(t, env, "", "panto-cost", "--format", "jsonl", path))
			cmd := exec.Command("panto-cost", "--store", srv.URL, "--all", "--format", "jsonl")
			cmd.Env = env
			out, _ := cmd.Output()
			got := total(string(out))
			if got == want && want != "" {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the database costs\n%s\nthe file\n%s\nfollower:\n%s", what, got, want, f.stderr)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	agree("at first")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO message VALUES
		('msg_c3', 'ses_C', 1780000301000, 1780000301000, '{"role":"user","time":{"created":1780000301000},"agent":"build","model":{"providerID":"openai","modelID":"gpt-5"}}'),
		('msg_c4', 'ses_C', 1780000302000, 1780000303000, '{"parentID":"msg_c3","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/proj","root":"/proj"},"cost":0,"tokens":{"input":10000,"output":8,"reasoning":0,"cache":{"read":0,"write":0}},"modelID":"gpt-5","providerID":"openai","time":{"created":1780000302000,"completed":1780000303000},"finish":"stop"}');
		INSERT INTO part VALUES
		('prt_c3_1', 'msg_c3', 'ses_C', 1780000301000, 1780000301000, '{"type":"text","text":"And again"}'),
		('prt_c4_1', 'msg_c4', 'ses_C', 1780000303000, 1780000303000, '{"type":"text","text":"Again."}')`); err != nil {
		t.Fatal(err)
	}
	if now, err := os.Stat(path); err != nil || now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("the rows went into the database file, not its WAL: %v", err)
	}
	agree("after OpenCode wrote to ses_C")
	out := sh(t, env, "", "panto-log", "--store", srv.URL, "list", "--all", "--json")
	if n := strings.Count(out, `"agent":"opencode"`); n != 3 {
		t.Errorf("the database holds %d OpenCode sessions, want 3:\n%s", n, out)
	}
	if regexp.MustCompile(`(?m)^panto-log: error:`).MatchString(f.stderr.String()) {
		t.Errorf("the follower reported:\n%s", f.stderr)
	}
}
