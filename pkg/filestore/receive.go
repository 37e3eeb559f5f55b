package filestore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/panto-dev/panto/internal/filecmp"
	"github.com/panto-dev/panto/internal/index"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/store"
)

// Receive makes the file of the session src holds (at the sessions
// directory of its header's cwd) hold it, incrementally: a missing file is
// created whole and atomically; an existing one must hold a prefix of src,
// byte for byte, and gets the rest appended under the writer's lock, in
// whole lines, fsynced, cut back on any error. Nothing is ever overwritten:
// a file that differs from src, longer or shorter, is store.ErrConflict.
// A file that holds all of src and more is left as it is (Had > Entries
// of src: nothing to add). src is checked first (store.CheckSource), and
// the path made from its id and cwd must lie under the sessions base.
func (fs *Files) Receive(_ context.Context, src store.Source) (*store.Received, error) {
	l, err := store.CheckSource(src, "the session received")
	if err != nil {
		return nil, err
	}
	path, err := fs.pathOf(l.Header.ID, l.Header.Cwd)
	if err != nil {
		return nil, err
	}
	res := &store.Received{Name: path, ID: l.Header.ID}
	// Only src's complete lines are received: a torn tail never is.
	whole := io.NewSectionReader(src, 0, l.Good)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		err := place(path, func(w io.Writer) error {
			_, err := io.Copy(w, whole)
			return err
		})
		if err == nil {
			res.Created, res.Entries, res.Bytes = true, int64(len(l.Nodes)), l.Good
			return res, nil
		}
		if !errors.Is(err, store.ErrExists) {
			return nil, err
		}
		// Another receiver created it first: compare with what it wrote.
	}
	f, fi, err := OpenLocked(path, fs.Wait)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	mine, err := scanAll(f, fi, path)
	if err != nil {
		return nil, err
	}
	if err := writable(path, mine); err != nil {
		return nil, err
	}
	res.Had = int64(len(mine.Nodes))
	// The shorter of the file's complete lines and src must be the first
	// bytes of the other (both end in a newline there, so whole lines).
	common := min(mine.Good, l.Good)
	if same, err := filecmp.Readers(io.NewSectionReader(f, 0, common), io.NewSectionReader(src, 0, common)); err != nil {
		return nil, err
	} else if !same {
		return res, fmt.Errorf("%w: %s differs from the session it would receive (local changes?): nothing written", store.ErrConflict, path)
	}
	if mine.Good >= l.Good {
		res.Ahead = mine.Good > l.Good
		return res, nil // the file holds src already, or more
	}
	if size := fi.Size(); size > mine.Good {
		if _, err := CutAt(f, path, mine.Good, size, 0); err != nil {
			return nil, err
		}
	}
	index.Forget(fs.CacheDir, path)
	fail := func(err error) (*store.Received, error) {
		if terr := f.Truncate(mine.Good); terr != nil {
			return nil, fmt.Errorf("%w; cutting back also failed: %v (run panto-fsck --repair %s)", err, terr, path)
		}
		return nil, err
	}
	if _, err := f.Seek(mine.Good, io.SeekStart); err != nil {
		return fail(err)
	}
	n, err := io.Copy(f, bufio.NewReaderSize(io.NewSectionReader(src, mine.Good, l.Good-mine.Good), 1<<20))
	if err != nil {
		return fail(err)
	}
	if err := fsync(f); err != nil {
		return fail(err)
	}
	res.Bytes = n
	res.Entries = int64(len(l.Nodes)) - res.Had
	return res, nil
}

// pathOf is the path of the session id of cwd: a file of the sessions
// directory of cwd, which must lie under the sessions base, whatever the
// id and the cwd hold (they may come from a database row).
func (fs *Files) pathOf(id, cwd string) (string, error) {
	base, err := fs.Env.BaseDir()
	if err != nil {
		return "", err
	}
	dir, err := fs.Env.ProjectDir(cwd)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, catalog.FileName(id))
	rel, err := filepath.Rel(base, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) ||
		filepath.Dir(filepath.Dir(rel)) != "." || filepath.Base(path) != catalog.FileName(id) {
		return "", fmt.Errorf("%w: session %q of cwd %q would be written at %s, outside the sessions base %s: nothing written", store.ErrNeedsFsck, id, cwd, path, base)
	}
	return path, nil
}
