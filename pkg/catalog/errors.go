package catalog

import "errors"

// Sentinel errors of the catalog.
var (
	ErrNoSessionDir  = errors.New("catalog: no session directory")
	ErrAmbiguousID   = errors.New("catalog: ambiguous id prefix")
	ErrNoSuchSession = errors.New("catalog: no such session")
	ErrNotRegular    = errors.New("catalog: not a regular file")
)
