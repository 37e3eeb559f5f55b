package store

import (
	"errors"
	"strings"
	"testing"
)

func TestRedactForms(t *testing.T) {
	tests := []struct{ in, want, pw string }{
		{"postgres://u:hunter2@db.example/panto", "postgres://u:xxxxx@db.example/panto", "hunter2"},
		{"postgres://u@db/panto?password=hunter2&sslmode=require", "postgres://u@db/panto?password=xxxxx&sslmode=require", "hunter2"},
		{"postgres://u:hunter2@%zz/x", "postgres://u:xxxxx@%zz/x", "hunter2"},
		{"postgres://u:p@ss:w@rd@h/x", "postgres://u:xxxxx@h/x", "p@ss:w@rd"},
		{"host=/tmp/s user=u password=hunter2 dbname=panto", "host=/tmp/s user=u password=xxxxx dbname=panto", "hunter2"},
		{"host=/tmp/s password='se:cr et' dbname=panto", "host=/tmp/s password=xxxxx dbname=panto", "se:cr et"},
		{"host=/tmp/s password = 'WRONG pw99' dbname=panto", "host=/tmp/s password = xxxxx dbname=panto", "WRONG pw99"},
		{`host=/s password='it\'s me' user=u`, "host=/s password=xxxxx user=u", "it's me"},
		{"host=/s PASSWORD=Secret:tail dbname=panto", "host=/s PASSWORD=xxxxx dbname=panto", "Secret:tail"},
		{"host=/s password='unterminated quote", "host=/s password=xxxxx", "unterminated quote"},
		{"postgres://u@/panto?host=/tmp/s", "postgres://u@/panto?host=/tmp/s", ""},
		{"null:", "null:", ""},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := Password(tt.in); got != tt.pw {
			t.Errorf("Password(%q) = %q, want %q", tt.in, got, tt.pw)
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

// TestOpenNeverShowsPassword is hostile report §16: the scheme of a
// key=value string, cut at its first ":", was shown unredacted.
func TestOpenNeverShowsPassword(t *testing.T) {
	Register("postgres", func(string, func(string) string) (Store, error) { return nil, errors.New("reached") })
	for _, s := range []string{
		"foo password=Secret:tail dbname=panto",
		"foo=bar password=Secret:tail",
		"mysql://u:Secret:tail@h/db",
		"x password='Secret: tail' y",
	} {
		_, err := Open(s, func(string) string { return "" })
		if err == nil {
			t.Fatalf("Open(%q): no error", s)
		}
		if m := err.Error(); strings.Contains(m, "Secret") || strings.Contains(m, "tail") {
			t.Errorf("Open(%q): %q shows the password", s, m)
		}
	}
	if _, err := Open("host=/s password='se:cr et' dbname=panto", func(string) string { return "" }); err == nil || err.Error() != "reached" {
		t.Errorf("a key=value string goes to the database: %v", err)
	}
}
