package pgstore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/panto-dev/panto/pkg/store"
)

func TestRedact(t *testing.T) {
	tests := []struct{ in, want, pw string }{
		{"postgres://u:hunter2@db.example/panto", "postgres://u:xxxxx@db.example/panto", "hunter2"},
		{"postgres://u@db/panto?password=hunter2&sslmode=require", "postgres://u@db/panto?password=xxxxx&sslmode=require", "hunter2"},
		{"postgres://u:hunter2@%zz/x", "postgres://u:xxxxx@%zz/x", "hunter2"},
		{"postgres://u:p@ss:w@rd@h/x", "postgres://u:xxxxx@h/x", "p@ss:w@rd"},
		{"postgres://u:pa ss@h/x", "postgres://u:xxxxx@h/x", "pa ss"},
		{"POSTGRESQL://u:hunter2@h/x", "POSTGRESQL://u:xxxxx@h/x", "hunter2"},
		// hostile #13: a password parameter with a space was shown from the space on
		{`postgres://u@/panto?host=/tmp/s&password=pa ss"w:d42`, "postgres://u@/panto?host=/tmp/s&password=xxxxx", `pa ss"w:d42`},
		{`postgres://u@/panto?password=pa ss"w:d42&sslmode=disable`, "postgres://u@/panto?password=xxxxx&sslmode=disable", `pa ss"w:d42`},
		{`postgres://u@/panto?PASSWORD = pa ss&x=1`, "postgres://u@/panto?PASSWORD = xxxxx&x=1", "pa ss"},
		{"host=/tmp/s user=u password=hunter2 dbname=panto", "host=/tmp/s user=u password=xxxxx dbname=panto", "hunter2"},
		{"host=/tmp/s password='se:cr et' dbname=panto", "host=/tmp/s password=xxxxx dbname=panto", "se:cr et"},
		{`host=/tmp/s password='pa ss"w:d42' dbname=panto`, "host=/tmp/s password=xxxxx dbname=panto", `pa ss"w:d42`},
		{"host=/tmp/s password = 'WRONG pw99' dbname=panto", "host=/tmp/s password = xxxxx dbname=panto", "WRONG pw99"},
		{`host=/s password='it\'s me' user=u`, "host=/s password=xxxxx user=u", "it's me"},
		{"host=/s PASSWORD=Secret:tail dbname=panto", "host=/s PASSWORD=xxxxx dbname=panto", "Secret:tail"},
		{"host=/s password='unterminated quote", "host=/s password=xxxxx", "unterminated quote"},
		{"postgres://u@/panto?host=/tmp/s", "postgres://u@/panto?host=/tmp/s", ""},
		{"postgres://h:5432/db?application_name=a@b", "postgres://h:5432/db?application_name=a@b", ""},
		{"foo password=Secret:tail", "foo password=xxxxx…", ""},
		// hostile2: a value holding "://" made a key=value string no
		// connection string, shown whole; a percent-encoded key was no
		// password parameter
		{"host=/tmp/s password=x://secretA", "host=/tmp/s password=xxxxx", "x://secretA"},
		{"host=/tmp/s application_name=http://x password=secretB", "host=/tmp/s application_name=http://x password=xxxxx", "secretB"},
		{"postgres://u@h/db?%70assword=secretY&x=1", "postgres://u@h/db?%70assword=xxxxx&x=1", "secretY"},
		{"postgres://u@h/db?pass%77ord=se cr%26&x=1", "postgres://u@h/db?pass%77ord=xxxxx&x=1", "se cr&"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := store.Redact(tt.in); got != tt.want {
			t.Errorf("store.Redact(%q) = %q, want %q (not through this package)", tt.in, got, tt.want)
		}
		if got := Password(tt.in); got != tt.pw {
			t.Errorf("Password(%q) = %q, want %q", tt.in, got, tt.pw)
		}
	}
}

// TestIsConnString: what every command takes as a database (hostile #13:
// the follower took only the two URL prefixes, in lowercase), here and as
// the commands ask the store (store.CanFollowInto, OpenFollower).
func TestIsConnString(t *testing.T) {
	for s, want := range map[string]bool{
		"postgres://u@/panto?host=/tmp/s":   true,
		"postgresql://h/db":                 true,
		"POSTGRES://h/db":                   true,
		"host=/tmp/s dbname=panto user=u":   true,
		" dbname = panto":                   true,
		"host=/nonexistent dbname=panto":    true,
		"":                                  false,
		"null:":                             false,
		"mysql://h/db":                      false,
		"postgres:/h/db":                    false,
		"sessions/a.jsonl":                  false,
		"foo password=Secret:tail dbname=x": false,
		"http://host=x":                     false,
		"host=/s application_name=http://x": true,
		"dbname=x password=a://b":           true,
	} {
		if got := IsConnString(s); got != want {
			t.Errorf("IsConnString(%q) = %v, want %v", s, got, want)
		}
		// The commands ask the store: what it follows into is this.
		if got := store.CanFollowInto(s); got != want {
			t.Errorf("store.CanFollowInto(%q) = %v, want %v", s, got, want)
		}
		if !want {
			if f, err := store.OpenFollower(context.Background(), s); f != nil || !errors.Is(err, store.ErrNotFollower) {
				t.Errorf("store.OpenFollower(%q) = %v, %v; want ErrNotFollower", s, f, err)
			}
		}
	}
}

func TestScrub(t *testing.T) {
	s := "host=/s password='WRONG pw99' dbname=x"
	for _, msg := range []string{
		"cannot parse `host=/s password=xxxxx pw99' dbname=x`: bad",
		`failed: "WRONG pw99"`, `near "pw99"`, "WRONG pw99 rejected",
	} {
		if got := Scrub(msg, s); strings.Contains(got, "pw99") || strings.Contains(got, "WRONG") {
			t.Errorf("Scrub(%q) = %q: a part of the password is left", msg, got)
		}
	}
}

// TestOpenNeverShowsPassword is hostile report §16 (2026-12-01): the
// scheme of a key=value string, cut at its first ":", was shown
// unredacted; and a password with a space, in either form, in what Open
// says when it cannot connect.
func TestOpenNeverShowsPassword(t *testing.T) {
	for _, s := range []string{
		"foo password=Secret:tail dbname=panto",
		"foo=bar password=Secret:tail",
		"mysql://u:Secret:tail@h/db",
		"x password='Secret: tail' y",
		"host=/nonexistent/s password='Secret: tail' dbname=panto connect_timeout=1",
		"postgres://u@/panto?host=/nonexistent/s&password=Secret tail&connect_timeout=1",
		"POSTGRES://u:Secret tail@/panto?host=/nonexistent/s&connect_timeout=1",
	} {
		_, err := store.Open(s, func(string) string { return "" })
		if err == nil {
			t.Fatalf("Open(%q): no error", s)
		}
		if m := err.Error(); strings.Contains(m, "Secret") || strings.Contains(m, "tail") {
			t.Errorf("Open(%q): %q shows the password", s, m)
		}
	}
}
