package pricing

import (
	_ "embed"
	"errors"
	"io/fs"

	"github.com/panto-dev/panto/pkg/exitcode"
)

// builtin is the built-in price table (SPEC §11), each price with its
// source in a comment.
//
//go:embed builtin.toml
var builtin []byte

// BuiltinDate is the day the built-in prices were checked.
const BuiltinDate = "2026-12-01"

// Builtin returns the built-in price table.
func Builtin() (Table, error) {
	t, err := LoadTOML(builtin)
	if err != nil {
		return nil, exitcode.Failuref("the built-in price table does not load (%v): give --pricing", err)
	}
	return t, nil
}

// ForFlag loads the pricing file a --pricing flag names, else the one at
// the XDG place, else the built-in table; warn gets what the file leaves
// out. The second result names where the prices came from: the file's
// path, or "built-in, <date>". A bad file is a usage error (exit 2).
func ForFlag(flag string, getenv func(string) string, warn func(string)) (Table, string, error) {
	path, optional := flag, false
	if path == "" {
		path, optional = DefaultPath(getenv), true
	}
	if path == "" {
		return builtinFor()
	}
	table, warnings, err := Load(path, optional)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", exitcode.Usagef("%v: give a models.toml", err)
		}
		return nil, "", exitcode.Usagef("pricing %v: fix the file", err)
	}
	if table == nil && optional { // none at the XDG place
		return builtinFor()
	}
	for _, w := range warnings {
		warn("pricing " + path + ": " + w)
	}
	return table, path, nil
}

func builtinFor() (Table, string, error) {
	t, err := Builtin()
	if err != nil {
		return nil, "", err
	}
	return t, "built-in, " + BuiltinDate, nil
}
