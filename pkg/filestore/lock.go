package filestore

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/panto-dev/panto/pkg/store"
)

// Lock takes an exclusive flock on f. It retries for up to wait (0: one
// try) and returns store.ErrBusy when the lock stays taken. The kernel releases
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
			return store.ErrBusy
		}
		time.Sleep(delay)
		delay = min(2*delay, 50*time.Millisecond)
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
