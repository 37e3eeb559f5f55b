// Package filecmp says whether two files, or two readers, hold the same
// bytes: the file store's cuts and received sessions, and the pages of a
// site written again only when they changed.
package filecmp

import (
	"bytes"
	"errors"
	"io"
	"os"
)

// Readers reports whether a and b read the same bytes to their ends,
// compared in blocks; an error of either read (other than its end) is
// returned.
func Readers(a, b io.Reader) (bool, error) {
	x, y := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		n, errA := io.ReadFull(a, x)
		m, errB := io.ReadFull(b, y)
		if !bytes.Equal(x[:n], y[:m]) {
			return false, nil
		}
		done := errors.Is(errA, io.EOF) || errors.Is(errA, io.ErrUnexpectedEOF)
		if errA != nil && !done {
			return false, errA
		}
		if errB != nil && !errors.Is(errB, io.EOF) && !errors.Is(errB, io.ErrUnexpectedEOF) {
			return false, errB
		}
		if done {
			return true, nil
		}
	}
}

// Files reports whether the files a and b hold the same bytes: files of
// different sizes are not read; one that cannot be opened or read is not
// the same.
func Files(a, b string) bool {
	fa, err := os.Open(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false
	}
	defer fb.Close()
	if sa, err := fa.Stat(); err != nil {
		return false
	} else if sb, err := fb.Stat(); err != nil || sa.Size() != sb.Size() {
		return false
	}
	same, err := Readers(fa, fb)
	return same && err == nil
}
