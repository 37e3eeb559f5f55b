package catalog

import "errors"

// Sentinel errors of the catalog.
var (
	ErrNoSessionDir = errors.New("catalog: no session directory")
	ErrNotRegular   = errors.New("catalog: not a regular file")
)
