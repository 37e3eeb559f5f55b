package pgtest

// The throwaway databases of the tests, on the shared server scripts/pg
// starts (PANTO_TEST_PG): one helper for the stores' tests, the agent's,
// the signal tests and the scripts' pgdb.

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

var databases atomic.Int64

// Create makes an empty database on the server of base, its name
// beginning with prefix and unique to this process; it returns the
// database's URL and name, and drop, which removes it (connections and
// all).
func Create(base, prefix string) (dbURL, name string, drop func(), err error) {
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", "", nil, err
	}
	defer admin.Close(ctx)
	name = fmt.Sprintf("panto_%s%d_%d", prefix, os.Getpid(), databases.Add(1))
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", "", nil, err
	}
	drop = func() {
		if c, err := pgx.Connect(ctx, base); err == nil {
			c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	}
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return "", "", nil, err
	}
	u.Path = "/" + name
	return u.String(), name, drop, nil
}

// On is a new, empty database on the server of base, dropped when the
// test ends: its URL.
func On(tb testing.TB, base, prefix string) string {
	tb.Helper()
	u, _, drop, err := Create(base, prefix)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(drop)
	return u
}

// New is a new, empty database on the test server (PANTO_TEST_PG),
// dropped when the test ends; the test is skipped when there is none.
func New(tb testing.TB, prefix string) string {
	tb.Helper()
	base := os.Getenv("PANTO_TEST_PG")
	if base == "" {
		tb.Skip("PANTO_TEST_PG is not set: ./scripts/test (or scripts/pg) starts a PostgreSQL server for these tests")
	}
	return On(tb, base, prefix)
}
