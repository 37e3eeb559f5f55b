package session

import "errors"

// Sentinel errors of the format.
var (
	ErrInvalidMsg    = errors.New("session: invalid message")
	ErrNoSuchEntry   = errors.New("session: no such entry")
	ErrNoSessionDir  = errors.New("session: no session directory")
	ErrAmbiguousID   = errors.New("session: ambiguous id prefix")
	ErrNoSuchSession = errors.New("session: no such session")
)
