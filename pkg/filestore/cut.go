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
	"syscall"
	"time"

	"github.com/panto-dev/panto/internal/filecmp"
	"github.com/panto-dev/panto/internal/index"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// CutName is the name a cut of path made at t is saved under.
func CutName(path string, t time.Time) string {
	return path + ".cut-" + t.UTC().Format("20060102T150405.000Z")
}

// SaveCut copies bytes [from, end of file) of f beside path; see SaveAside.
func SaveCut(f *os.File, path string, from int64) (string, func(), error) {
	return SaveAside(path, io.NewSectionReader(f, from, 1<<62))
}

// SaveAside writes what r holds to a new file beside path named
// <path>.cut-<UTC timestamp>, fsyncs it and its directory, and returns its
// name. It never replaces an existing file. When an earlier cut of path
// holds the same bytes (a repair stopped between saving its cut and
// making it), that cut's name is returned and no second copy is kept.
// discard removes the copy again when the cut it was saved for fails (an
// earlier cut it reused stays).
func SaveAside(path string, r io.Reader) (name string, discard func(), err error) {
	name = CutName(path, time.Now())
	var out *os.File
	for i := 1; ; i++ {
		out, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, os.ErrExist) || i == 100 {
			break
		}
		name = fmt.Sprintf("%s.%d", CutName(path, time.Now()), i)
	}
	if err != nil {
		return "", nil, fmt.Errorf("save cut bytes: %w", err)
	}
	_, err = io.Copy(out, r)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if same := sameCut(path, name); same != "" {
			os.Remove(name)
			return same, func() {}, nil
		}
		err = syncDir(filepath.Dir(name))
	}
	if err != nil {
		os.Remove(name)
		return "", nil, fmt.Errorf("save cut bytes to %s: %w", name, err)
	}
	return name, func() { os.Remove(name) }, nil
}

// sameCut returns an earlier cut of path, other than name, that holds
// exactly the bytes of name; "" when there is none.
func sameCut(path, name string) string {
	olds := Cuts(path)
	fi, err := os.Stat(name)
	if err != nil {
		return ""
	}
	for _, old := range olds {
		if oi, err := os.Stat(old); old != name && err == nil && oi.Mode().IsRegular() && oi.Size() == fi.Size() && filecmp.Files(old, name) {
			return old
		}
	}
	return ""
}

// Cuts returns the cuts saved beside path (its name followed by ".cut-"),
// in the order of their names. The directory is read, not globbed: a name
// holds any bytes, those that are not UTF-8 and glob's own characters
// included.
func Cuts(path string) []string {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), base+".cut-") {
			names = append(names, filepath.Join(dir, e.Name()))
		}
	}
	return names
}

// Replace rewrites the file at path atomically: write fills a temporary
// file (mode 0600) beside it, which is fsynced and renamed over path, and
// the directory is fsynced. On any error path is untouched.
func Replace(path string, write func(io.Writer) error) error {
	err := beside(path, write, func(tmp string) error { return os.Rename(tmp, path) })
	if err != nil {
		return fmt.Errorf("rewrite %s: %w", path, err)
	}
	return nil
}

// beside fills a temporary file (0600) beside path with what write writes,
// fsyncs it, puts it in place with put (a rename, or a link that fails if
// the name is taken), and fsyncs the directory. The temporary name never
// stays behind.
func beside(path string, write func(io.Writer) error, put func(tmp string) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := put(tmp.Name()); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

// CutAt saves [from, size) of the locked file f beside path, then truncates
// f to from and fsyncs it.
func CutAt(f *os.File, path string, from, size int64, entries int) (*store.Cut, error) {
	saved, discard, err := SaveCut(f, path, from)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(from); err != nil {
		discard() // nothing was cut
		return nil, fmt.Errorf("truncate %s: %w", path, err)
	}
	cut := &store.Cut{From: from, Bytes: size - from, Entries: entries, SavedAs: saved}
	if err := f.Sync(); err != nil {
		return cut, fmt.Errorf("fsync %s: %w", path, err) // cut, but maybe not durably
	}
	return cut, nil
}

// Truncate repairs a torn tail of path (policy tail) or, with after set,
// cuts every line after the entry with that id. It takes the writer's lock
// for up to wait. A nil Cut means there was nothing to cut.
func (fs *Files) Truncate(_ context.Context, path, after string) (*store.Cut, error) {
	f, fi, err := OpenLocked(path, fs.Wait)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l, err := scanAll(f, fi, path)
	if err != nil {
		return nil, err
	}
	if err := writable(path, l); err != nil {
		return nil, err
	}
	from := l.Good
	if after != "" {
		switch i := l.Lookup(after); {
		case i >= 0:
			n := l.Nodes[i]
			from = n.Off + n.Len + 1
		case l.HeaderOK && after == l.Header.ID: // every entry
			from = headerEnd(f)
		default:
			return nil, fmt.Errorf("%w: %s has no entry %q", store.ErrNoParent, path, after)
		}
	}
	if from >= l.Size {
		return nil, nil
	}
	index.Forget(fs.CacheDir, path)
	return CutAt(f, path, from, l.Size, l.EntriesFrom(from))
}

// headerEnd is the offset after the first line of f (its header, which a
// scan found whole).
func headerEnd(f *os.File) int64 {
	line, _ := bufio.NewReader(io.NewSectionReader(f, 0, 1<<62)).ReadSlice('\n')
	return int64(len(line))
}

// OpenLocked opens the session file at path to write (appends go to its
// end) and takes its lock, waiting up to wait. It makes sure the file it
// locked is still the one at path (a repair may have replaced it), and
// never waits on what is not a regular file: a directory is store.ErrIsDir,
// anything else (a FIFO named *.jsonl) catalog.ErrNotRegular.
func OpenLocked(path string, wait time.Duration) (*os.File, os.FileInfo, error) {
	for range 10 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|syscall.O_NONBLOCK, 0)
		if errors.Is(err, syscall.EISDIR) {
			return nil, nil, fmt.Errorf("%w: %s", store.ErrIsDir, path)
		}
		if err != nil {
			return nil, nil, err
		}
		fi, err := f.Stat()
		switch {
		case err != nil:
			f.Close()
			return nil, nil, err
		case !fi.Mode().IsRegular():
			f.Close()
			return nil, nil, fmt.Errorf("%w: %s", catalog.ErrNotRegular, path)
		}
		if err := Lock(f, wait); err != nil {
			f.Close()
			return nil, nil, err
		}
		fi, err = f.Stat() // its size now that no writer can change it
		if pi, perr := os.Stat(path); err == nil && perr == nil && os.SameFile(fi, pi) {
			return f, fi, nil
		}
		f.Close()
	}
	return nil, nil, fmt.Errorf("open %s: the file keeps being replaced", path)
}

// scanAll reads the whole locked file f.
func scanAll(f *os.File, fi os.FileInfo, path string) (*scan.Log, error) {
	l, err := scan.Scan(io.NewSectionReader(f, 0, fi.Size()), scan.ScanOptions{})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return l, nil
}

// writable refuses files a writer must not touch (SPEC §5): no valid
// header on line 1, a newer version, a second header, or corruption before
// the last line. A cut never goes before the header.
func writable(path string, l *scan.Log) error {
	switch {
	case l.Size == 0:
		return fmt.Errorf("%w: %s is empty (no header)", store.ErrNeedsFsck, path)
	case !l.HeaderOK && l.Header.Type == "session":
		return fmt.Errorf("%w: %s: bad header: %s", store.ErrNeedsFsck, path, l.Header.Problem)
	case !l.HeaderOK:
		return fmt.Errorf("%w: %s: line 1 is not a session header", store.ErrNeedsFsck, path)
	case l.Header.Version > session.Version:
		return fmt.Errorf("%w: %s is format version %d; this panto writes version %d", store.ErrNewerVersion, path, l.Header.Version, session.Version)
	case l.Damage().Verdict == scan.Damaged:
		return fmt.Errorf("%w: %s: %s", store.ErrNeedsFsck, path, l.Damage().At)
	}
	return nil
}
