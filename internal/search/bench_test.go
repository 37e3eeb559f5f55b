package search

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkDir searches the logs under $PANTO_BENCH_SEARCH_DIR for
// $PANTO_BENCH_SEARCH_WORD (default golangci), for profiles:
//
//	PANTO_BENCH_SEARCH_DIR=/tmp/logs go test -run X -bench Dir -cpuprofile cpu.out ./internal/search
func BenchmarkDir(b *testing.B) {
	dir := os.Getenv("PANTO_BENCH_SEARCH_DIR")
	if dir == "" {
		b.Skip("PANTO_BENCH_SEARCH_DIR is not set")
	}
	word := os.Getenv("PANTO_BENCH_SEARCH_WORD")
	if word == "" {
		word = "golangci"
	}
	var files []File
	var size int64
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, File{Path: p})
			size += fi.Size()
		}
		return nil
	})
	q, err := Parse(strings.Fields(word), nil, Smart)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	cpu0 := cpuTime()
	for b.Loop() {
		n := 0
		Run(context.Background(), q, files, Options{}, func(*Hit) bool { n++; return true })
	}
	// CPU time (user+sys) is what a loaded machine moves least
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's CPU time so far (user+sys), in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
