package filestore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/panto-dev/panto/pkg/index"
	"github.com/panto-dev/panto/pkg/store"
)

// Receive makes the file at path hold the session r reads (a session
// file's bytes, from another store), incrementally: a missing file is
// created whole and atomically; an existing one must hold a prefix of r,
// byte for byte, and gets the rest appended under the writer's lock, in
// whole lines, fsynced, cut back on any error. Nothing is ever
// overwritten: a file that differs from r is store.ErrConflict. It returns
// how many bytes were added.
func (fs *Files) Receive(path string, r io.Reader) (int64, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		var n int64
		err := place(path, func(w io.Writer) error {
			var err error
			n, err = io.Copy(w, r)
			return err
		})
		return n, err
	}
	f, fi, err := OpenLocked(path, fs.Wait)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	l, err := scanAll(f, fi, path)
	if err != nil {
		return 0, err
	}
	if err := writable(path, l); err != nil {
		return 0, err
	}
	// The file's complete lines must be the first bytes of r.
	br := bufio.NewReaderSize(r, 1<<20)
	mine := bufio.NewReaderSize(io.NewSectionReader(f, 0, l.Good), 1<<20)
	a, b := make([]byte, 64<<10), make([]byte, 64<<10)
	for left := l.Good; left > 0; {
		k := int(min(left, int64(len(a))))
		if _, err := io.ReadFull(mine, a[:k]); err != nil {
			return 0, err
		}
		n, err := io.ReadFull(br, b[:k])
		if err != nil && n < k {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return 0, nil // the file is ahead: nothing to add
			}
			return 0, err
		}
		if !bytes.Equal(a[:k], b[:k]) {
			return 0, fmt.Errorf("%w: %s differs from the session it would receive (local changes?): nothing written", store.ErrConflict, path)
		}
		left -= int64(k)
	}
	if size := fi.Size(); size > l.Good {
		if _, err := CutAt(f, path, l.Good, size, 0); err != nil {
			return 0, err
		}
	}
	index.Forget(fs.CacheDir, path)
	// The rest, in whole lines.
	added, chunk := int64(0), make([]byte, 0, 1<<20)
	fail := func(err error) (int64, error) {
		if terr := f.Truncate(l.Good); terr != nil {
			return 0, fmt.Errorf("%w; cutting back also failed: %v (run panto-fsck --repair %s)", err, terr, path)
		}
		return 0, err
	}
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			chunk = append(chunk, line...)
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fail(err)
		}
		if len(line) > 0 && line[len(line)-1] == '\n' {
			chunk = append(chunk, line...)
		}
		if len(chunk) >= 1<<20 || err != nil && len(chunk) > 0 {
			if _, werr := f.Write(chunk); werr != nil {
				return fail(werr)
			}
			added += int64(len(chunk))
			chunk = chunk[:0]
		}
		if err != nil {
			break
		}
	}
	if added > 0 {
		if err := fsync(f); err != nil {
			return fail(err)
		}
	}
	return added, nil
}
