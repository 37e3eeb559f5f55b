package store

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// Lock takes an exclusive flock on f. It retries for up to wait (0: one
// try) and returns ErrBusy when the lock stays taken. The kernel releases
// the lock when f is closed or the process dies, so no lock is ever stale.
func Lock(f *os.File, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	delay := time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
		if !time.Now().Before(deadline) {
			return ErrBusy
		}
		time.Sleep(delay)
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// Locked reports whether another open file description holds a lock on
// the file f is open on, without taking it for longer than the test.
func Locked(f *os.File) (bool, error) {
	fd := int(f.Fd())
	err := syscall.Flock(fd, syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
	return false, syscall.Flock(fd, syscall.LOCK_UN)
}

// OpenRead opens path to read it, more cheaply than os.Open: a regular
// file gets no poller registration (os.Open spends four fcntl calls and an
// epoll_ctl on it), which counts when fsck checks thousands of small files.
func OpenRead(path string) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// syncDir fsyncs a directory, so that a name created in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// fsync is (*os.File).Sync; benchmarks replace it to measure appends
// without the disk.
var fsync = (*os.File).Sync
