package store

import "errors"

// Sentinel errors of the stores.
var (
	ErrBusy          = errors.New("store: session is locked by another writer")
	ErrExists        = errors.New("store: session already exists")
	ErrLeafMoved     = errors.New("store: leaf moved")
	ErrNeedsFsck     = errors.New("store: session needs panto-fsck")
	ErrNewerVersion  = errors.New("store: newer format version")
	ErrNoReply       = errors.New("store: no assistant message in the batch")
	ErrNoStamp       = errors.New("store: no provider/model for user entries")
	ErrNoParent      = errors.New("store: no such parent entry")
	ErrEmpty         = errors.New("store: empty batch")
	ErrIsDir         = errors.New("store: path is a directory")
	ErrNoSuchSession = errors.New("store: no such session")
	ErrAmbiguousID   = errors.New("store: ambiguous id prefix")
	ErrBadURL        = errors.New("store: bad store URL")
	ErrUnavailable   = errors.New("store: cannot reach the store")
	ErrConflict      = errors.New("store: an entry exists with other bytes")
	ErrBadRow        = errors.New("store: a row of the database is no part of a session")
)

// Mark returns err, still saying what it says, that is also kind (one of
// the sentinels): errors.Is(Mark(err, kind), kind).
func Mark(err error, kind error) error { return marked{err, kind} }

type marked struct{ err, kind error }

func (m marked) Error() string   { return m.err.Error() }
func (m marked) Unwrap() []error { return []error{m.err, m.kind} }
