package filestore

import "errors"

// Sentinel errors of the store.
var (
	ErrBusy         = errors.New("store: session file is locked by another writer")
	ErrExists       = errors.New("store: session file already exists")
	ErrLeafMoved    = errors.New("store: leaf moved")
	ErrNeedsFsck    = errors.New("store: file needs panto-fsck")
	ErrNewerVersion = errors.New("store: newer format version")
	ErrNoReply      = errors.New("store: no assistant message in the batch")
	ErrNoStamp      = errors.New("store: no provider/model for user entries")
	ErrNoParent     = errors.New("store: no such parent entry")
	ErrEmpty        = errors.New("store: empty batch")
	ErrIsDir        = errors.New("store: path is a directory")
)
