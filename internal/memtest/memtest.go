// Package memtest measures what a test's work holds of the heap: the
// bound a huge input must keep memory under (SPEC: memory does not grow
// with a log's size), checked by the tests of the readers, the search
// and the commands alike.
package memtest

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// PeakHeap runs f and returns the most heap in use while it ran
// (runtime.MemStats.HeapInuse, looked at every millisecond and once
// more when f returns, before any collection could free what it held;
// after a collection before f starts, so a test's earlier garbage is not
// counted).
func PeakHeap(f func()) uint64 {
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	runtime.GC()
	wg.Go(func() {
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	})
	f()
	close(stop)
	wg.Wait()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return max(peak, ms.HeapInuse)
}

// Huge is the size of a huge input a test writes to bound the memory its
// reading takes: full in a plain build, 16 MB under the race detector
// (which makes reading 5 to 20 times slower: the same code is run, raced,
// and the bound is measured by the plain build, which scripts/test runs).
// With -short the test is skipped.
func Huge(t testing.TB, full int) int {
	if testing.Short() {
		t.Skipf("writes %d MB", full>>20)
	}
	if Race {
		return min(full, 16<<20)
	}
	return full
}
