package filestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/panto-dev/panto/internal/index"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// Append writes msgs to the session file at path as one batch: all of it
// or, on any error, none of it.
func (fs *Files) Append(_ context.Context, path string, msgs []store.Msg, o store.AppendOptions) (*store.Result, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return create(path, msgs, o)
	case err != nil:
		return nil, err
	case fi.IsDir():
		return nil, fmt.Errorf("%w: %s", store.ErrIsDir, path)
	}
	if len(msgs) == 0 {
		return nil, store.ErrEmpty
	}
	f, fi, err := OpenLocked(path, fs.Wait)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, l, err := loadState(f, fi, path, fs.CacheDir, o.Parent != "" || o.Root)
	if err != nil {
		return nil, err
	}
	if err := store.CheckLeaf(st.Leaf, o.ExpectLeaf); err != nil {
		return nil, err
	}
	parentID := st.Leaf
	stamp := session.Stamp{Provider: o.Provider, Model: o.Model}
	if stamp.Provider == "" && !st.StampKnown && l == nil && store.HasUser(msgs) {
		// The leaf's active stamp lies on a branch the checkpoint does
		// not follow: read the whole file for it.
		if l, err = scanAll(f, fi, path); err != nil {
			return nil, err
		}
	}
	switch {
	case o.Root:
		if !scan.RootsOnly(l) {
			return nil, fmt.Errorf("%w: %s: only a prompt that got no reply, alone in its session, may get a second root", store.ErrNoParent, path)
		}
		parentID = ""
	case o.Parent != "":
		i := l.Lookup(o.Parent)
		if i < 0 {
			return nil, fmt.Errorf("%w: %s has no entry %q", store.ErrNoParent, path, o.Parent)
		}
		parentID = o.Parent
		if stamp.Provider == "" {
			stamp, _ = l.Active(i)
		}
	case stamp.Provider != "":
	case st.StampKnown:
		stamp = st.Stamp
	case l != nil && l.Leaf() >= 0:
		stamp, _ = l.Active(l.Leaf())
	}
	buf, _, err := store.Build(msgs, parentID, stamp, st.Taken, o.Now())
	if err != nil {
		return nil, err
	}
	res := &store.Result{Lines: buf}
	if size := fi.Size(); size > st.Good {
		if res.Cut, err = CutAt(f, path, st.Good, size, 0); err != nil {
			index.Forget(fs.CacheDir, path)
			return nil, err
		}
	}
	if err := appendBatch(f, path, st.Good, buf); err != nil {
		return nil, err
	}
	if st.Catch(f, st.Good+int64(len(buf))) {
		if fi, err := f.Stat(); err == nil { // the file as this append leaves it
			st.Seen(fi)
			st.Save(fs.CacheDir, path) // a cache: a failure costs the next append a full read
		}
	}
	return res, nil
}

// loadState returns what an append must know of the locked file f: from
// its checkpoint and the lines added since when it can, else from a full
// scan (also returned, as l), which must find the file writable.
func loadState(f *os.File, fi os.FileInfo, path, cacheDir string, full bool) (st *index.State, l *scan.Log, err error) {
	if !full {
		if st := index.Load(cacheDir, path, f, fi); st != nil && st.Catch(f, fi.Size()) {
			return st, nil, nil
		}
	}
	if l, err = scanAll(f, fi, path); err != nil {
		return nil, nil, err
	}
	if err := writable(path, l); err != nil {
		return nil, nil, err
	}
	return index.FromLog(l, f, fi), l, nil
}

// appendBatch writes buf with one write(2) at the end of f (opened with
// O_APPEND, its size good) and fsyncs it. On any error it cuts f back to
// good, so no partial batch stays behind.
func appendBatch(f *os.File, path string, good int64, buf []byte) error {
	_, err := f.Write(buf)
	if err == nil {
		if err = fsync(f); err != nil {
			err = fmt.Errorf("fsync %s: %w", path, err)
		}
	} // else a write's error names path already ("write PATH: no space left on device")
	if err != nil {
		if terr := f.Truncate(good); terr != nil {
			return fmt.Errorf("%w; cutting the partial batch back also failed: %v (run panto-fsck --repair %s)", err, terr, path)
		}
		return err
	}
	return nil
}

// create writes a new session file holding the header and msgs, atomically:
// a temporary file beside the final name, fsynced, linked into place only if
// the name is still free, then the directory fsynced.
func create(path string, msgs []store.Msg, o store.AppendOptions) (*store.Result, error) {
	if err := store.CheckNew(path, "session file", msgs, o); err != nil {
		return nil, err
	}
	id := catalog.IDFromPath(path)
	if id == "" {
		var err error
		if id, err = session.NewSessionID(); err != nil {
			return nil, err
		}
	}
	now := o.Now()
	buf := session.Header{ID: id, Timestamp: session.Timestamp(now), Cwd: o.Cwd}.AppendLine(nil)
	body, _, err := store.Build(msgs, "", session.Stamp{Provider: o.Provider, Model: o.Model}, func(string) bool { return false }, now)
	if err != nil {
		return nil, err
	}
	buf = append(buf, body...)
	if err := place(path, func(w io.Writer) error { _, err := w.Write(buf); return err }); err != nil {
		return nil, err
	}
	return &store.Result{Lines: body, Created: true}, nil
}

// place creates the file at path with what write writes, atomically: a
// temporary file beside it (0600, its directory 0700), fsynced, linked into
// place only if the name is still free (a racing creator loses visibly:
// store.ErrExists), then the directory fsynced.
func place(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return beside(path, write, func(tmp string) error {
		if err := os.Link(tmp, path); err != nil {
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%w: %s (another writer created it first)", store.ErrExists, path)
			}
			return err
		}
		return nil
	})
}
