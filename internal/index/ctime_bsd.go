//go:build darwin || freebsd || netbsd

package index

import (
	"syscall"
	"time"
)

// Ctime is when the inode of st last changed.
func Ctime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctimespec.Unix()) }
