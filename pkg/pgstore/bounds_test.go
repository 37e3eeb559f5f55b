package pgstore

import (
	"bufio"
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/panto-dev/panto/pkg/store"
)

// TestTableLockBounded is hostile report §19: under a table lock held by
// another (a migration, a VACUUM FULL), reads waited forever and an
// append with a wait of 2 s did too; each ends now with ErrBusy.
func TestTableLockBounded(t *testing.T) {
	u := testDB(t)
	ctx := context.Background()
	p := open(t, u)
	path := sessionFile(t, t.TempDir(), 2)
	res, err := pushFile(ctx, p, path)
	if err != nil {
		t.Fatal(err)
	}
	locker, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE panto_sessions, panto_entries IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	r := open(t, u+"&lock_timeout=500") // a reader's bound, from its URL
	p.SetWait(time.Second)              // a writer's, its --wait
	checks := map[string]func() error{
		"list":             func() error { _, err := r.List(ctx, "", true, nil); return err },
		"open":             func() error { _, err := r.Open(ctx, res.ID); return err },
		"append --wait 1s": func() error { _, err := p.Append(ctx, res.ID, pair("x"), store.AppendOptions{}); return err },
		"truncate":         func() error { _, err := p.Truncate(ctx, res.ID, "nope"); return err },
		"push":             func() error { _, err := pushFile(ctx, p, path); return err },
	}
	for name, check := range checks {
		done := make(chan error, 1)
		go func() { done <- check() }()
		select {
		case err := <-done:
			if !errors.Is(err, store.ErrBusy) {
				t.Errorf("%s under a table lock: %v, want ErrBusy", name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s under a table lock: still waiting after 30 s", name)
		}
	}
}

// TestKilledClientQueryEnds: a client killed in the middle of a query
// leaves no backend running it: the server looks for its client every
// second (client_connection_check_interval) and cancels the query.
func TestKilledClientQueryEnds(t *testing.T) {
	u := testDB(t)
	ctx := context.Background()
	watch, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	var version int
	if err := watch.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil || version < 140000 {
		t.Skipf("server version %d: client_connection_check_interval is PostgreSQL 14 on", version)
	}
	cmd := client(t, u, "sleep")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "started" {
		t.Fatalf("helper: %q", line)
	}
	running := func() int {
		var n int
		if err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%panto-sleeper%' AND state = 'active' AND pid <> pg_backend_pid()`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for deadline := time.Now().Add(10 * time.Second); running() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the helper's query never ran")
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// The server checks every second: its backend must be gone within 5 s.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		n := running()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after its client was killed, %d backends still run its query", n)
		}
	}
}
