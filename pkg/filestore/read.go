package filestore

import (
	"errors"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/panto-dev/panto/internal/index"
	"github.com/panto-dev/panto/pkg/catalog"
)

// Reader is a session file open to read: its descriptor without the
// machinery of os.File (a poller check, a cleanup, a lock on every call),
// which counts when fsck checks thousands of small files. It reads with
// pread: ReadAt may be used from many goroutines; Read, from one, reads on
// from where the last Read stopped.
type Reader struct {
	fd      int
	name    string
	size    int64
	regular bool
	st      syscall.Stat_t // as opened
	off     int64          // where Read goes on
}

// OpenRead opens path to read it and learns its size. It does not block
// on a FIFO or a device: those open, and say they are not Regular.
func OpenRead(path string) (*Reader, error) {
	fd, err := retry(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	})
	if errors.Is(err, syscall.ENOENT) {
		// FILE#SESSION, one session of a log that holds several (an
		// OpenCode database; catalog.SplitSession): FILE, its Name still
		// FILE#SESSION, so that the log's reader reads that session only.
		if file, _, ok := catalog.SplitSession(path); ok {
			fd, err = retry(func() (int, error) {
				return syscall.Open(file, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
			})
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	r := &Reader{fd: fd, name: path}
	if err := syscall.Fstat(fd, &r.st); err != nil {
		r.Close()
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	r.size, r.regular = r.st.Size, uint32(r.st.Mode)&syscall.S_IFMT == syscall.S_IFREG
	return r, nil
}

// Name is the name the file was opened by.
func (r *Reader) Name() string { return r.name }

// Dev and Ino tell the file apart from every other.
func (r *Reader) Dev() uint64 { return uint64(r.st.Dev) }

// Ino is the file's inode number.
func (r *Reader) Ino() uint64 { return uint64(r.st.Ino) }

// Ctime is when the file's inode last changed (its bytes, size, mode or
// names): a time no user call can set back.
func (r *Reader) Ctime() time.Time { return index.Ctime(&r.st) }

// Size is the file's size when it was opened.
func (r *Reader) Size() int64 { return r.size }

// Regular reports whether the file is a regular file.
func (r *Reader) Regular() bool { return r.regular }

// ReadAt reads len(p) bytes at off, or what there is up to the end.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		k, err := retry(func() (int, error) { return syscall.Pread(r.fd, p[n:], off+int64(n)) })
		if err != nil {
			return n, &os.PathError{Op: "read", Path: r.name, Err: err}
		}
		if k == 0 {
			return n, io.EOF
		}
		n += k
	}
	return n, nil
}

// Read reads on from where the last Read stopped.
func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.ReadAt(p, r.off)
	r.off += int64(n)
	return n, err
}

// SizeNow is the file's size now.
func (r *Reader) SizeNow() (int64, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(r.fd, &st); err != nil {
		return 0, &os.PathError{Op: "stat", Path: r.name, Err: err}
	}
	return st.Size, nil
}

// Locked reports whether another open file description holds a lock on
// the file, without taking it for longer than the test.
func (r *Reader) Locked() (bool, error) {
	err := syscall.Flock(r.fd, syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "flock", Path: r.name, Err: err}
	}
	return false, syscall.Flock(r.fd, syscall.LOCK_UN)
}

// Close closes the file.
func (r *Reader) Close() error { return syscall.Close(r.fd) }

// retry calls fn again while it is interrupted by a signal.
func retry(fn func() (int, error)) (int, error) {
	for {
		n, err := fn()
		if !errors.Is(err, syscall.EINTR) {
			return n, err
		}
	}
}
