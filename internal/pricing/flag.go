package pricing

import (
	_ "embed"

	"github.com/panto-dev/panto/internal/exitcode"
)

// builtin is the built-in price table (SPEC §11), each price with its
// source in a comment; a pricing file adds to it and overrides it model by
// model (Open).
//
//go:embed builtin.toml
var builtin []byte

// BuiltinDate is the day the built-in prices were checked.
const BuiltinDate = "2026-12-03"

// Builtin returns the built-in price table.
func Builtin() (Table, error) {
	t, err := LoadTOML(builtin)
	if err != nil {
		return nil, exitcode.Failuref("the built-in price table does not load (%v): give --pricing", err)
	}
	return t, nil
}

// ForFlag is Open for a --pricing flag: the table in use, and where its
// prices came from (Set.String).
func ForFlag(flag string, getenv func(string) string, warn func(string)) (Table, string, error) {
	s, err := Open(flag, false, getenv, warn)
	if err != nil {
		return nil, "", err
	}
	return s.Table, s.String(), nil
}
