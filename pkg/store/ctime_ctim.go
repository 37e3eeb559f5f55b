//go:build linux || openbsd

package store

import (
	"syscall"
	"time"
)

func ctime(st *syscall.Stat_t) time.Time { return time.Unix(st.Ctim.Unix()) }
