package session

import "errors"

// Sentinel errors of the format.
var (
	ErrInvalidMsg  = errors.New("session: invalid message")
	ErrNoSuchEntry = errors.New("session: no such entry")
)
