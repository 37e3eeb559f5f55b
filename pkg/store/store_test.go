package store

import (
	"errors"
	"strings"
	"testing"
)

// TestRedactUnknown: a location no registered backend knows shows its
// URL without password or query, its scheme only where it does not parse,
// or nothing from "password" on (the forms a backend knows are its own
// tests': pkg/pgstore's TestRedact).
func TestRedactUnknown(t *testing.T) {
	for in, want := range map[string]string{
		"mysql://u:Secret@h/db":          "mysql://u:xxxxx@h/db",
		"mysql://u@h/db?password=Secret": "mysql://u@h/db",
		"mysql://u:Sec ret@h/db":         "mysql://…",
		"mysql://u:Sec%zzret@h/db":       "mysql://…",
		"mysql://h/db#Secret":            "mysql://h/db",
		"foo password=Secret dbname=x":   "foo password=xxxxx…",
		"null:":                          "null:",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPick(t *testing.T) {
	ids := []string{"019dc5ba-53f6-71a5", "019dc5ba-53a0-7000", "01a00000-0000-7000"}
	names := []string{"a", "b", "c"}
	tests := []struct {
		prefix, want string
		err          error
	}{
		{"019dc5ba-53f", "a", nil},
		{"019DC5BA-53A", "b", nil}, // prefixes are read in lowercase
		{"01a", "c", nil},
		{"019dc5ba", "", ErrAmbiguousID},
		{"ff", "", ErrNoSuchSession},
	}
	for _, tt := range tests {
		got, err := Pick(tt.prefix, ids, names)
		if got != tt.want || !errors.Is(err, tt.err) && !(err == nil && tt.err == nil) {
			t.Errorf("Pick(%q) = %q, %v; want %q, %v", tt.prefix, got, err, tt.want, tt.err)
		}
	}
	var amb *AmbiguousError
	if _, err := Pick("019dc5ba", ids, names); !errors.As(err, &amb) || len(amb.IDs) != 2 || amb.IDs[0] > amb.IDs[1] {
		t.Errorf("the candidates, sorted: %v", err)
	}
}

func TestOpen(t *testing.T) {
	Register("test", func(string, func(string) string) (Store, error) { return nil, nil })
	for _, bad := range []string{"nonsense", "mysql://u:pw@h/db", ":x"} {
		if _, err := Open(bad, func(string) string { return "" }); !errors.Is(err, ErrBadURL) {
			t.Errorf("Open(%q): %v, want ErrBadURL", bad, err)
		}
	}
	if _, err := Open("TEST:x", func(string) string { return "" }); err != nil {
		t.Errorf("a scheme in capitals: %v", err)
	}
}

func TestOpenUnlinked(t *testing.T) {
	// This test binary links no store: Open says which package to import
	// (it said "no store of kind file (give … nothing for files)" for "").
	for _, url := range []string{"", "null:", "postgres://u@h/db"} {
		_, err := Open(url, func(string) string { return "" })
		if !errors.Is(err, ErrBadURL) || !strings.Contains(err.Error(), "is not linked into this program: import github.com/panto-dev/panto/pkg/agent") {
			t.Errorf("Open(%q): %v", url, err)
		}
	}
}
