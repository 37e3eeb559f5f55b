package cli

import (
	"errors"
	"io/fs"

	"github.com/panto-dev/panto/pkg/exitcode"
	"github.com/panto-dev/panto/pkg/pricing"
)

// Prices loads the pricing file a --pricing flag names, else the one at
// the XDG place (a missing one there means no prices known). The second
// result says whether a file was read. A bad file is a usage error.
func Prices(name, flag string, io IO) (pricing.Table, bool, error) {
	path, optional := flag, false
	if path == "" {
		path, optional = pricing.DefaultPath(io.Getenv), true
	}
	if path == "" {
		return pricing.Table{}, false, nil
	}
	table, warnings, err := pricing.Load(path, optional)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, exitcode.Usagef("%v: give a models.toml", err)
		}
		return nil, false, exitcode.Usagef("pricing %v: fix the file", err)
	}
	for _, w := range warnings {
		Warnf(io.Stderr, name, "pricing %s: %s", path, w)
	}
	return table, len(table) > 0 || !optional, nil
}
