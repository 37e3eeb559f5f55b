package panto_test

import (
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/panto-dev/panto/internal/costcmd"
	"github.com/panto-dev/panto/internal/fsckcmd"
	"github.com/panto-dev/panto/internal/logcmd"
	"github.com/panto-dev/panto/internal/pgtest"
	"github.com/panto-dev/panto/internal/replaycmd"
	"github.com/panto-dev/panto/internal/turncmd"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"
	_ "modernc.org/sqlite"
)

// scripts is the absolute path of scripts/, for the script tests.
var scripts, _ = filepath.Abs("scripts")

var update = flag.Bool("u", false, "update testscript golden files")

// TestMain lets the test binary stand in for every command, so scripts can
// pipe them into each other without building anything.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"panto-log":    func() { os.Exit(logcmd.Main()) },
		"panto-fsck":   func() { os.Exit(fsckcmd.Main()) },
		"panto-cost":   func() { os.Exit(costcmd.Main()) },
		"panto-turn":   func() { os.Exit(turncmd.Main()) },
		"panto-replay": func() { os.Exit(replaycmd.Main()) },
	})
}

// TestScripts runs testdata/script/*.txtar end to end through the commands.
func TestScripts(t *testing.T) {
	// The package's long tests (the scripts, the follower's faults, the
	// README, the pages in Chromium) run beside each other: each spends most
	// of its time waiting on the processes it starts, and one after the
	// other they left a core idle (138 s of CPU in 180 s).
	t.Parallel()
	plain := plainCommands(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update || os.Getenv("PANTO_UPDATE_SCRIPTS") != "",
		Setup: func(e *testscript.Env) error {
			e.Setenv("HOME", e.WorkDir)
			e.Setenv("XDG_CONFIG_HOME", filepath.Join(e.WorkDir, ".config"))
			e.Setenv("XDG_CACHE_HOME", filepath.Join(e.WorkDir, ".cache"))
			e.Setenv("XDG_DATA_HOME", filepath.Join(e.WorkDir, ".data"))
			e.Setenv("PANTO_SESSION_DIR", filepath.Join(e.WorkDir, "sessions"))
			e.Setenv("NO_COLOR", "1")
			e.Setenv("TZ", "UTC")
			e.Setenv("SCRIPTS", scripts)
			name := filepath.Base(e.WorkDir)
			if !raceScript(strings.TrimPrefix(name, "script-")) {
				e.Setenv("PATH", plain+string(os.PathListSeparator)+e.Getenv("PATH"))
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "pg" { // a PostgreSQL server to test against (scripts/test starts one)
				return os.Getenv("PANTO_TEST_PG") != "", nil
			}
			if cond == "root" { // permissions do not hold (but through setpriv)
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":  cmdStatus,
			"serve":   cmdServe,
			"pgdb":    cmdPGDB,
			"waitfor": cmdWaitfor,
			"copies":  cmdCopies,
			"ocdb":    cmdOCDB,
		},
	})
}

// A script runs the commands built without -race, unless its commands run
// beside each other (raceScript). A race-built process costs about 40 ms of
// CPU to start against 8, and runs 3 to 10 times slower; on the scripts'
// thousands of starts TestScripts took 136 s of CPU, 45 s without. The race
// detector stays on where goroutines share memory: every package's tests,
// this package's Go tests that drive the commands' concurrent parts through
// race-built processes (follow_test, push_test, signal_test,
// signal_repair_test: the test binary itself, as testscript.Main installs
// it), TestCommandsRace (cost, fsck, search, list, site over many logs,
// through each command's Run in this process), and the scripts below.

// raceScript reports whether the script name runs its commands race-built:
// one that starts a command in the background beside another (a line
// ending in &) or follows logs (a follower's goroutines and signals).
func raceScript(name string) bool {
	b, err := os.ReadFile(filepath.Join("testdata", "script", name+".txtar"))
	if err != nil {
		return true
	}
	ar := txtar.Parse(b)
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasSuffix(line, "&") || strings.Contains(line, "follow") {
			return true
		}
	}
	return false
}

// plainCommands builds the five commands without -race into a directory
// of t's and returns it; $PANTO_PLAIN_BIN when set (scripts/test builds
// them there first, from the same tree).
func plainCommands(t *testing.T) string {
	if dir := os.Getenv("PANTO_PLAIN_BIN"); dir != "" {
		return dir
	}
	dir := t.TempDir()
	out, err := exec.Command("go", "build", "-o", dir+string(os.PathSeparator), "./cmd/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/...: %v\n%s", err, out)
	}
	return dir
}

// cmdOCDB makes an OpenCode database (SQLite, WAL mode, closed cleanly as
// OpenCode leaves it) from testdata/opencode/schema.sql and the SQL files
// given (the script's, else testdata/opencode's); given a database that
// exists, it runs the SQL files on it (OpenCode writing more):
//
//	ocdb home/.local/share/opencode/opencode.db shapes.sql
func cmdOCDB(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: ocdb DB [SQL...]")
	}
	path := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o700))
	sqls := append([]string{"schema.sql"}, args[1:]...)
	if _, err := os.Stat(path); err == nil {
		sqls = args[1:] // a database there already: rows added to it
	}
	db, err := sql.Open("sqlite", "file:"+path)
	ts.Check(err)
	defer db.Close()
	for _, f := range sqls {
		if _, err := os.Stat(ts.MkAbs(f)); err == nil {
			f = ts.MkAbs(f) // the script's own
		} else {
			f = filepath.Join(schemaDir, f)
		}
		b, err := os.ReadFile(f)
		ts.Check(err)
		_, err = db.Exec(string(b))
		ts.Check(err)
	}
	ts.Check(db.Close())
}

// schemaDir holds the OpenCode fixtures' schema.
var schemaDir, _ = filepath.Abs(filepath.Join("testdata", "opencode"))

// cmdPGDB creates an empty database on the test server for this script,
// dropped at its end, and sets $PG to its URL ($PGSOCKET, $PGNAME: its
// socket directory and name, for libpq's key=value form):
//
//	[pg] pgdb
func cmdPGDB(ts *testscript.TestScript, neg bool, args []string) {
	base := os.Getenv("PANTO_TEST_PG")
	if neg || len(args) > 0 || base == "" {
		ts.Fatalf("usage: [pg] pgdb")
	}
	dbURL, name, drop, err := pgtest.Create(base, "s")
	ts.Check(err)
	ts.Defer(drop)
	u, err := url.Parse(dbURL)
	ts.Check(err)
	ts.Setenv("PG", u.String())
	ts.Setenv("PGSOCKET", u.Query().Get("host"))
	ts.Setenv("PGNAME", name)
}

// cmdStatus runs a command and checks its exact exit code:
//
//	status 2 panto-log append
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdServe starts a local HTTP server that answers every request with the
// status and body given, records the last request body in the file
// request.json, and sets $SERVER to its URL:
//
//	serve stream.sse [STATUS]
//	serve -hang [FILE]   (a server that never answers; it records the
//	                     request in FILE, request.json by default, so a
//	                     script can waitfor the request to have come)
func cmdServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: serve FILE [STATUS] | serve -hang [FILE]")
	}
	dir := ts.MkAbs(".")
	if args[0] == "-hang" {
		record := "request.json"
		if len(args) == 2 {
			record = args[1]
		}
		stop := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			req, _ := io.ReadAll(r.Body)
			os.WriteFile(filepath.Join(dir, record), req, 0o600)
			select { // until the script ends (or a minute): never an answer
			case <-stop:
			case <-time.After(time.Minute):
			}
		}))
		ts.Defer(func() { close(stop); srv.Close() })
		ts.Setenv("SERVER", srv.URL)
		return
	}
	body, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	status := http.StatusOK
	if len(args) == 2 {
		status, err = strconv.Atoi(args[1])
		ts.Check(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := io.ReadAll(r.Body)
		os.WriteFile(filepath.Join(dir, "request.json"), req, 0o600)
		if status == http.StatusOK {
			w.Header().Set("content-type", "text/event-stream")
		} else {
			w.Header().Set("content-type", "application/json")
		}
		w.WriteHeader(status)
		w.Write(body)
	}))
	ts.Defer(srv.Close)
	ts.Setenv("SERVER", srv.URL)
}

// cmdWaitfor waits until a file exists (and, with a pattern, until it holds
// a match of it), polling, so a script waits on a condition, never on a
// sleep; it fails after a minute:
//
//	waitfor locked            (the file exists)
//	waitfor out.txt 'ready'   (the file holds a match of the regexp)
func cmdWaitfor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitfor FILE [REGEXP]")
	}
	var re *regexp.Regexp
	if len(args) == 2 {
		var err error
		if re, err = regexp.Compile(args[1]); err != nil {
			ts.Fatalf("waitfor: %v", err)
		}
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(time.Minute)
	for {
		b, err := os.ReadFile(path)
		if err == nil && (re == nil || re.Match(b)) {
			return
		}
		if time.Now().After(deadline) {
			if re != nil {
				ts.Fatalf("waitfor: %s holds no match of %q after a minute", args[0], args[1])
			}
			ts.Fatalf("waitfor: no %s after a minute", args[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdCopies makes DIR (and its parents) and N copies of FILE in it, named
// 1 to N with FILE's extension (a loop of cp in bash forked N processes):
//
//	copies 1000 torn.jsonl d   (d/1.jsonl … d/1000.jsonl)
func cmdCopies(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: copies N FILE DIR")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		ts.Fatalf("copies: bad count %q", args[0])
	}
	b, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	dir := ts.MkAbs(args[2])
	ts.Check(os.MkdirAll(dir, 0o777))
	ext := filepath.Ext(args[1])
	for i := 1; i <= n; i++ {
		ts.Check(os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+ext), b, 0o666))
	}
}
