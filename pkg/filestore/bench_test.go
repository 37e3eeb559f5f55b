package filestore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// makeLog writes a session of about size bytes of 4 KiB-text pairs.
func makeLog(b *testing.B, path string, size int64) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := session.Header{ID: "019dc5ba-53f6-71a5-ab8f-b1f8709c2572", Timestamp: "2026-01-01T00:00:00.000Z", Cwd: "/b"}.AppendLine(nil)
	parent, written := "", int64(0)
	for i := 0; written+int64(len(buf)) < size || i%2 == 1; i++ {
		m := pair(fmt.Sprint(i), 4096)[i%2]
		e := session.Entry{ID: fmt.Sprintf("%08x", i), ParentID: parent, Timestamp: "2026-01-01T00:00:00.000Z", Message: m.Raw}
		if m.Role == "user" {
			e.Provider, e.Model = "p", "m"
		}
		buf = e.AppendLine(buf)
		parent = e.ID
		if len(buf) > 1<<20 {
			written += int64(len(buf))
			f.Write(buf)
			buf = buf[:0]
		}
	}
	f.Write(buf)
}

// BenchmarkAppend measures one append (a user+assistant pair) against the
// size of the log, with and without fsync.
func BenchmarkAppend(b *testing.B) {
	for _, size := range []int64{100 << 10, 10 << 20, 100 << 20} {
		for _, sync := range []bool{false, true} {
			b.Run(fmt.Sprintf("size=%dKiB/fsync=%v", size>>10, sync), func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "s.jsonl")
				makeLog(b, path, size)
				if !sync {
					fsync = func(*os.File) error { return nil }
					defer func() { fsync = (*os.File).Sync }()
				}
				msgs := pair("bench", 200)
				cache := b.TempDir()
				// The first append reads the whole log once and leaves a
				// checkpoint; the steady state is what is measured.
				if _, err := (&Files{CacheDir: cache}).Append(context.Background(), path, msgs, store.AppendOptions{Cwd: "/b"}); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if _, err := (&Files{CacheDir: cache}).Append(context.Background(), path, msgs, store.AppendOptions{Cwd: "/b"}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
