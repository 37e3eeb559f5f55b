package pricing

import (
	"errors"
	"io/fs"

	"github.com/panto-dev/panto/pkg/exitcode"
)

// ForFlag loads the pricing file a --pricing flag names, else the one at
// the XDG place (a missing one there means no prices known); warn gets
// what the file leaves out. The second result says whether any prices
// were read. A bad file is a usage error (exit 2).
func ForFlag(flag string, getenv func(string) string, warn func(string)) (Table, bool, error) {
	path, optional := flag, false
	if path == "" {
		path, optional = DefaultPath(getenv), true
	}
	if path == "" {
		return Table{}, false, nil
	}
	table, warnings, err := Load(path, optional)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, exitcode.Usagef("%v: give a models.toml", err)
		}
		return nil, false, exitcode.Usagef("pricing %v: fix the file", err)
	}
	for _, w := range warnings {
		warn("pricing " + path + ": " + w)
	}
	return table, len(table) > 0 || !optional, nil
}
