// Package pgtest gives a test a PostgreSQL server of its own, started with
// scripts/pg, for the tests that stop, kill or restart their server. The
// server scripts/test starts (PANTO_TEST_PG) is shared by every package's
// tests, which run at the same time: a test that restarted it failed
// whatever another package was doing on it ("the database system is
// shutting down"), so scripts/test does not hand its pg_ctl to the tests.
// It also makes the tests' throwaway databases on that shared server
// (database.go). Only tests import it.
package pgtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Server is a test's own server: the URL of its empty database "panto".
type Server struct {
	URL string
	ctl string // pg_ctl with the server's data directory and options
}

// Own starts a server for t, stopped and removed when t ends. It skips t
// where scripts/test started no server (PANTO_TEST_PG unset: no
// PostgreSQL binaries), as every database test does.
func Own(t testing.TB) Server {
	t.Helper()
	if os.Getenv("PANTO_TEST_PG") == "" {
		t.Skip("PANTO_TEST_PG is not set: ./scripts/test starts a PostgreSQL server for these tests")
	}
	script, err := scriptsPG()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "panto-pg-own-")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", "-c", `. "$1"; pg_start "$2" >&2 && printf '%s\n%s\n' "$PANTO_TEST_PG" "$PANTO_TEST_PGCTL"`, "bash", script, dir).Output()
	if err != nil {
		os.RemoveAll(dir)
		t.Fatalf("start a PostgreSQL server: %v", err)
	}
	lines := strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)
	if len(lines) != 2 {
		os.RemoveAll(dir)
		t.Fatalf("scripts/pg printed %q, want the URL and the pg_ctl command", out)
	}
	s := Server{URL: lines[0], ctl: lines[1]}
	t.Cleanup(func() {
		exec.Command("bash", "-c", s.ctl+" stop -m immediate").Run()
		os.RemoveAll(dir)
	})
	return s
}

// Ctl runs pg_ctl ARGS on the server ("stop -m immediate", "start",
// "restart -m fast"); its output is in the error.
func (s Server) Ctl(args string) error {
	if out, err := exec.Command("bash", "-c", s.ctl+" "+args).CombinedOutput(); err != nil {
		return errors.New("pg_ctl " + args + ": " + err.Error() + "\n" + string(out))
	}
	return nil
}

// scriptsPG finds scripts/pg in the module's root, above the test's
// working directory (its package's directory).
func scriptsPG() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "scripts", "pg"), nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("pgtest: no go.mod above the test's directory: run the tests from the repository")
		}
		dir = up
	}
}
