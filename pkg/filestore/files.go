package filestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/panto-dev/panto/internal/index"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// Files is the store of sessions as files under a base directory (SPEC §4):
// a session is named by its file's path.
type Files struct {
	Env      catalog.Env   // where sessions live
	CacheDir string        // where append checkpoints are kept; "" for none
	Wait     time.Duration // how long a writer waits for another's lock
}

// DefaultWait is how long a writer waits for another writer's lock.
const DefaultWait = 10 * time.Second

func init() {
	store.Register("file", func(url string, getenv func(string) string) (store.Store, error) {
		if url != "" && url != "file:" {
			return nil, fmt.Errorf("%w: %q: the file store takes no URL (set PANTO_SESSION_DIR)", store.ErrBadURL, url)
		}
		return New(getenv), nil
	})
}

// New is the file store the environment names.
func New(getenv func(string) string) *Files {
	return &Files{Env: catalog.EnvFrom(getenv), CacheDir: index.Dir(getenv), Wait: DefaultWait}
}

// Where is the sessions base directory.
func (fs *Files) Where() string {
	base, err := fs.Env.BaseDir()
	if err != nil {
		return "(no sessions directory)"
	}
	return base
}

// NewName is the path a new session of cwd would get.
func (fs *Files) NewName(cwd string) (string, error) {
	dir, err := fs.Env.ProjectDir(cwd)
	if err != nil {
		return "", err
	}
	id, err := session.NewSessionID()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, catalog.FileName(id)), nil
}

// Open opens the session file at path to read. What is not a regular file
// is refused at once, never waited on (FILE#SESSION: see OpenRead).
func (fs *Files) Open(_ context.Context, path string) (store.Reader, error) {
	r, err := OpenRead(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, store.Mark(err, store.ErrNoSuchSession)
		}
		return nil, err
	}
	if !r.Regular() {
		r.Close()
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			return nil, store.Mark(fmt.Errorf("%s is a directory", path), store.ErrIsDir)
		}
		return nil, fmt.Errorf("%w: %s", catalog.ErrNotRegular, path)
	}
	return r, nil
}

// files returns the session files of cwd, or of every project.
func (fs *Files) files(cwd string, all bool) ([]string, error) {
	if all {
		base, err := fs.Env.BaseDir()
		if err != nil {
			return nil, err
		}
		return catalog.AllFiles(base)
	}
	dir, err := fs.Env.ProjectDir(cwd)
	if err != nil {
		return nil, err
	}
	return catalog.Files(dir)
}

// leftovers says, through skip, each temporary file a writer killed midway
// left among the sessions List lists: no session, and panto-fsck --repair
// removes it.
func (fs *Files) leftovers(cwd string, all bool, skip func(error)) {
	if skip == nil {
		return
	}
	dir, depth := "", 0
	if all {
		dir, _ = fs.Env.BaseDir()
		depth = 1
	} else {
		dir, _ = fs.Env.ProjectDir(cwd)
	}
	if dir == "" {
		return
	}
	catalog.WalkLeftovers(dir, depth, func(p string) error {
		if fi, err := os.Lstat(p); err == nil {
			if catalog.LeftoverSession(p) != "" {
				skip(fmt.Errorf("%s: %w (%d bytes): a whole session not yet at its name: panto-fsck --repair links it into place", p, catalog.ErrLeftover, fi.Size()))
			} else {
				skip(fmt.Errorf("%s: %w (%d bytes, no session): panto-fsck --repair removes it", p, catalog.ErrLeftover, fi.Size()))
			}
		}
		return nil
	})
}

// List describes the sessions of cwd (of every project with all), newest
// activity first. Those of another folder whose name encodes the same
// (/a/b and /a-b) are left out by their header's cwd; a session whose cwd
// encodes otherwise was moved here by hand, and is kept.
func (fs *Files) List(_ context.Context, cwd string, all bool, skip func(error)) ([]store.Summary, error) {
	files, err := fs.files(cwd, all)
	if err != nil {
		return nil, err
	}
	fs.leftovers(cwd, all, skip)
	list, err := catalog.List(files, fs.CacheDir, skip)
	if err != nil || all {
		return list, err
	}
	mine := list[:0]
	for _, s := range list {
		if s.Cwd == cwd || catalog.EncodeCwd(s.Cwd) != catalog.EncodeCwd(cwd) {
			mine = append(mine, s)
		}
	}
	return mine, nil
}

// Resolve returns the file among the sessions of cwd (or of all) whose id
// starts with prefix.
func (fs *Files) Resolve(_ context.Context, cwd string, all bool, prefix string) (string, error) {
	files, err := fs.files(cwd, all)
	if err != nil {
		return "", err
	}
	return catalog.Resolve(files, prefix)
}

// Close does nothing: files need no connection.
func (fs *Files) Close() error { return nil }

// SetWait sets how long a writer waits for another writer's lock.
func (fs *Files) SetWait(d time.Duration) { fs.Wait = d }

// Each calls fn with the file arg names, or every session file below the
// directory arg names (links followed, each directory once).
func (fs *Files) Each(_ context.Context, arg string, fn func(string, error) error) error {
	return catalog.Walk(arg, fn)
}

var _ store.Files = (*Files)(nil)

// BaseDir is the sessions base (SPEC §4), where the store keeps its files.
func (fs *Files) BaseDir() (string, error) { return fs.Env.BaseDir() }

// OpenFile opens the session file at path to follow it (OpenRead).
func (fs *Files) OpenFile(path string) (store.File, error) {
	r, err := OpenRead(path)
	if err != nil {
		return nil, err // not a nil *Reader in an interface
	}
	return r, nil
}

// Cuts names the cuts saved beside the session file at path (Cuts).
func (fs *Files) Cuts(path string) []string { return Cuts(path) }
