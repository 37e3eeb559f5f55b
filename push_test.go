package panto_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/panto-dev/panto/internal/pgtest"
)

// pushSessions writes n session files of lines entries each (a prompt
// and a reply each round, text enough to keep the server's index busy)
// below dir/--p--, and returns their paths by id.
func pushSessions(t *testing.T, dir string, n, lines int) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := os.MkdirAll(filepath.Join(dir, "--p--"), 0o700); err != nil {
		t.Fatal(err)
	}
	words := strings.Repeat("the quick brown fox jumps over a lazy dog, parsing logs of calls; ", 8)
	for s := range n {
		id := fmt.Sprintf("019dc5ba-53f6-71a5-ab8f-%012x", s+1)
		path := filepath.Join(dir, "--p--", id+".jsonl")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		fmt.Fprintf(w, `{"type":"session","version":1,"id":"%s","timestamp":"2026-03-02T10:00:00.000Z","cwd":"/p"}`+"\n", id)
		parent := "null"
		for i := range lines {
			eid := fmt.Sprintf("%08x", i+1)
			if i%2 == 0 {
				fmt.Fprintf(w, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-03-02T10:00:00.000Z","provider":"anthropic","model":"m","message":{"role":"user","content":[{"type":"text","text":"%d %s"}]}}`+"\n", eid, parent, i, words)
			} else {
				fmt.Fprintf(w, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-03-02T10:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"%d %s"}],"provider":"anthropic","model":"m","usage":{"input":1,"output":1},"stopReason":"stop"}}`+"\n", eid, parent, i, words)
			}
			parent = `"` + eid + `"`
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		out[id] = path
	}
	return out
}

// pushEnv is the environment of the commands these tests run.
func pushEnv(dir string) []string {
	return append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir+"/.config", "XDG_CACHE_HOME="+dir+"/.cache",
		"XDG_DATA_HOME="+dir+"/.data", "PANTO_SESSION_DIR="+dir+"/sessions", "NO_COLOR=1")
}

// sessionsIn is what the database holds of each session: its entries.
func sessionsIn(t *testing.T, c *pgx.Conn) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	rows, err := c.Query(context.Background(), `SELECT s.id, (SELECT count(*) FROM panto_entries e WHERE e.session = s.id) FROM panto_sessions s`)
	if err != nil {
		if strings.Contains(err.Error(), "does not exist") {
			return got // no schema yet
		}
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var n int64
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		got[id] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestPushKilledMidway: panto-log push sending several sessions at once
// (--jobs 4), killed with SIGKILL while some are committed and others
// under way, leaves each session whole or absent; pushed again, every
// session is in the database byte for byte as its file, and push
// --status agrees.
func TestPushKilledMidway(t *testing.T) {
	base := os.Getenv("PANTO_TEST_PG")
	if base == "" {
		t.Skip("PANTO_TEST_PG is not set: ./scripts/test starts a PostgreSQL server for these tests")
	}
	t.Parallel()
	dir := t.TempDir()
	const n, lines = 12, 1200
	files := pushSessions(t, filepath.Join(dir, "src"), n, lines)
	db := pgtest.On(t, base, "push")
	ctx := context.Background()
	c, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	env := pushEnv(dir)
	killed := 0
	for try := 0; try < 4 && len(sessionsIn(t, c)) < n; try++ {
		cmd := exec.Command("panto-log", "push", "--jobs", "4", "--to", db, filepath.Join(dir, "src"))
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// Killed once one more session is committed than before.
		before := len(sessionsIn(t, c))
		deadline := time.Now().Add(time.Minute)
	wait:
		for {
			select {
			case <-done:
				break wait // pushed everything before the kill
			default:
			}
			if len(sessionsIn(t, c)) > before {
				cmd.Process.Signal(syscall.SIGKILL)
				<-done
				killed++
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("no session committed in a minute: %s", stderr.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
		for id, got := range sessionsIn(t, c) {
			if got != lines {
				t.Fatalf("after a push killed at try %d: session %s holds %d entries, want %d or none", try, id, got, lines)
			}
		}
	}
	t.Logf("killed %d times; %d sessions of %d committed before the last push", killed, len(sessionsIn(t, c)), n)
	out, err := exec.Command("panto-log", "push", "--to", db, filepath.Join(dir, "src")).CombinedOutput()
	if err != nil {
		t.Fatalf("the push after: %v\n%s", err, out)
	}
	got := sessionsIn(t, c)
	if len(got) != n {
		t.Fatalf("%d sessions in the database, want %d", len(got), n)
	}
	for id, path := range files {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("panto-log", "--store", db, "export", id)
		cmd.Env = env
		have, err := cmd.Output()
		if err != nil || !bytes.Equal(have, want) {
			t.Fatalf("session %s exported: %d bytes, want %d (%v)", id, len(have), len(want), err)
		}
	}
	cmd := exec.Command("panto-log", "push", "--status", "--to", db, filepath.Join(dir, "src"))
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("push --status: %v\n%s", err, out)
	}
}

// TestPushFewConnections: a role the server allows one connection (its
// CONNECTION LIMIT) pushes with --jobs 4 all the same, over the one
// connection it has; and a session named twice in one push (a file and
// its copy) is pushed once, the other found there already, whatever the
// jobs.
func TestPushFewConnections(t *testing.T) {
	base := os.Getenv("PANTO_TEST_PG")
	if base == "" {
		t.Skip("PANTO_TEST_PG is not set: ./scripts/test starts a PostgreSQL server for these tests")
	}
	t.Parallel()
	dir := t.TempDir()
	files := pushSessions(t, filepath.Join(dir, "src"), 6, 40)
	db, name, drop, err := pgtest.Create(base, "pushone")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	role := name + "_one"
	if _, err := admin.Exec(ctx, `CREATE ROLE `+role+` LOGIN CONNECTION LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		drop()
		admin, err := pgx.Connect(ctx, base)
		if err == nil {
			admin.Exec(ctx, `DROP ROLE IF EXISTS `+role)
			admin.Close(ctx)
		}
	})
	if _, err := admin.Exec(ctx, `ALTER DATABASE `+name+` OWNER TO `+role); err != nil {
		t.Fatal(err)
	}
	c, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, `ALTER SCHEMA public OWNER TO `+role); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(db)
	u.User = url.User(role)
	for id, path := range files { // a copy of one session beside the others
		os.MkdirAll(filepath.Join(dir, "src", "--copy--"), 0o700)
		data, _ := os.ReadFile(path)
		if err := os.WriteFile(filepath.Join(dir, "src", "--copy--", id+".jsonl"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		break
	}
	cmd := exec.Command("panto-log", "push", "--jobs", "4", "--to", u.String(), filepath.Join(dir, "src"))
	cmd.Env = pushEnv(dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "pushed 240 entries of 7 sessions") || !strings.Contains(string(out), "(40 there already)") {
		t.Fatalf("push over one connection: %v\n%s", err, out)
	}
	if got := sessionsIn(t, c); len(got) != 6 {
		t.Fatalf("the database holds %v", got)
	}
}
