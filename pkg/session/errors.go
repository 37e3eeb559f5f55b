package session

import (
	"errors"
	"fmt"
)

// Sentinel errors of the format.
var (
	ErrCorrupt       = errors.New("session: corrupt line")
	ErrInvalidEntry  = errors.New("session: invalid entry")
	ErrNewerVersion  = errors.New("session: newer format version")
	ErrNoHeader      = errors.New("session: missing header")
	ErrInvalidMsg    = errors.New("session: invalid message")
	ErrNoSuchEntry   = errors.New("session: no such entry")
	ErrNotSession    = errors.New("session: not a session file")
	ErrNoSessionDir  = errors.New("session: no session directory")
	ErrAmbiguousID   = errors.New("session: ambiguous id prefix")
	ErrNoSuchSession = errors.New("session: no such session")
)

// LineError locates a problem at a line of a file.
type LineError struct {
	Path   string
	Line   int   // 1-based
	Offset int64 // byte offset of the line's start
	Err    error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s: line %d (byte %d): %v", e.Path, e.Line, e.Offset, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }
