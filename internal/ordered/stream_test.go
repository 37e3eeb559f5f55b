package ordered

import (
	"context"
	"errors"
	"iter"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// results yields item i's results: i*1000+j for j below i%7 (some items
// have none), with jitter between them.
func results(i int, yield func(int) bool) {
	for j := range i % 7 {
		if j == 0 {
			jitter(i)
		}
		if !yield(i*1000 + j) {
			return
		}
	}
}

// within fails the test unless f returns within d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %v", what, d)
	}
}

// Every item is emitted in the order sent, each with its results in the
// order yielded, whatever order the work finishes in, in both modes.
func TestStreamOrder(t *testing.T) {
	for _, abandon := range []bool{false, true} {
		for _, workers := range []int{0, 1, 2, 8} {
			base := runtime.NumGoroutine()
			var sent atomic.Int64
			next := 0
			err := Stream(context.Background(), Options{Workers: workers, Abandon: abandon}, items(300, &sent), results, func(i int, rs iter.Seq[int]) error {
				if i != next {
					t.Fatalf("abandon %v, workers %d: item %d emitted at %d", abandon, workers, i, next)
				}
				next++
				j := 0
				for r := range rs {
					if r != i*1000+j {
						t.Fatalf("item %d: result %d at %d", i, r, j)
					}
					j++
				}
				if j != i%7 {
					t.Fatalf("item %d: %d results, want %d", i, j, i%7)
				}
				return nil
			})
			if err != nil || next != 300 {
				t.Fatalf("abandon %v, workers %d: Stream = %v after %d items, want nil after 300", abandon, workers, err, next)
			}
			settled(t, base)
		}
	}
}

// emit has an item's first results while its work is still making the
// rest: the work waits for emit to have its first result before yielding
// the second (a Stream that emitted only finished items would never end).
func TestStreamWhileWorking(t *testing.T) {
	base := runtime.NumGoroutine()
	var sent atomic.Int64
	seen := make([]chan struct{}, 10)
	for i := range seen {
		seen[i] = make(chan struct{})
	}
	within(t, time.Minute, "Stream", func() {
		err := Stream(context.Background(), Options{Workers: 2}, items(10, &sent), func(i int, yield func(int) bool) {
			yield(0)
			<-seen[i]
			yield(1)
		}, func(i int, rs iter.Seq[int]) error {
			for r := range rs {
				if r == 0 {
					close(seen[i])
				}
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	})
	settled(t, base)
}

// An emit that returns an error stops the run: nothing after it is
// emitted, the work's yields fail, produce is told to stop, and Stream
// returns that error; in both modes every goroutine ends.
func TestStreamEmitStops(t *testing.T) {
	for _, abandon := range []bool{false, true} {
		base := runtime.NumGoroutine()
		stop := errors.New("enough")
		var sent, afterStop atomic.Int64
		var stopped atomic.Bool
		last := -1
		err := Stream(context.Background(), Options{Workers: 4, Abandon: abandon}, items(100000, &sent), func(i int, yield func(int) bool) {
			for j := 0; ; j++ {
				if !yield(j) {
					return
				}
				if stopped.Load() {
					afterStop.Add(1)
				}
				if j == 10 {
					return
				}
			}
		}, func(i int, rs iter.Seq[int]) error {
			last = i
			for r := range rs {
				if i == 50 && r == 5 {
					stopped.Store(true)
					return stop
				}
			}
			return nil
		})
		if err != stop || last != 50 {
			t.Fatalf("abandon %v: Stream = %v after item %d, want %v after 50", abandon, err, last, stop)
		}
		if n := sent.Load(); n > 51+2*4+1 {
			t.Errorf("abandon %v: produce sent %d items, a stop at item 50 with 4 workers bounds it to %d", abandon, n, 51+2*4+1)
		}
		settled(t, base)
		// A yield under way when the stop came may succeed; none after.
		if n := afterStop.Load(); n > 4*(resultsBuffer+1) {
			t.Errorf("abandon %v: %d yields succeeded after the stop", abandon, n)
		}
	}
}

// An emit that stops ranging over an item's results early (and returns
// nil) makes that work's next yield fail; the run goes on.
func TestStreamEmitLeavesEarly(t *testing.T) {
	base := runtime.NumGoroutine()
	var sent, refused atomic.Int64
	n := 0
	err := Stream(context.Background(), Options{Workers: 3}, items(200, &sent), func(i int, yield func(int) bool) {
		for j := range 1000 {
			if !yield(j) {
				refused.Add(1)
				return
			}
		}
	}, func(i int, rs iter.Seq[int]) error {
		n++
		for r := range rs {
			if r == 2 {
				break
			}
		}
		return nil
	})
	if err != nil || n != 200 {
		t.Fatalf("Stream = %v after %d items, want nil after 200", err, n)
	}
	if refused.Load() != 200 {
		t.Errorf("%d works saw their yield fail, want 200", refused.Load())
	}
	settled(t, base)
}

// A context cancelled while an item is worked on: without Abandon, the work
// under way is finished and everything it yields (after the cancel too) is
// emitted, no item after it is started, and Stream returns ctx's error.
func TestStreamCancelFinishes(t *testing.T) {
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	var sent atomic.Int64
	var started [100]atomic.Bool
	gate := make(chan struct{})
	got := 0
	err := Stream(ctx, Options{Workers: 1}, items(100, &sent), func(i int, yield func(int) bool) {
		started[i].Store(true)
		yield(1)
		if i == 3 {
			<-gate // cancelled meanwhile
		}
		if !yield(2) {
			t.Errorf("item %d: a yield after the cancel failed", i)
		}
	}, func(i int, rs iter.Seq[int]) error {
		for r := range rs {
			got++
			if i == 3 && r == 1 {
				cancel()
				close(gate)
			}
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Stream = %v, want context.Canceled", err)
	}
	if got != 8 { // items 0..3, two results each
		t.Errorf("%d results emitted, want 8 (items 0 to 3)", got)
	}
	for i := 5; i < 100; i++ { // item 4 may have been taken before the cancel
		if started[i].Load() {
			t.Errorf("item %d started after the cancel", i)
		}
	}
	settled(t, base)
}

// With Abandon, a context cancelled while work is blocked (a read of a
// pipe) ends the run at once: Stream returns ctx's error while the work is
// still blocked, nothing more is emitted, and the goroutines end when the
// work returns.
func TestStreamAbandonCancel(t *testing.T) {
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	var sent atomic.Int64
	blocked := make(chan struct{})
	release := make(chan struct{})
	var lateYield atomic.Bool
	within(t, time.Minute, "Stream", func() {
		err := Stream(ctx, Options{Workers: 2, Abandon: true}, items(100, &sent), func(i int, yield func(int) bool) {
			if i == 2 {
				close(blocked)
				<-release
				lateYield.Store(yield(1))
			}
		}, func(i int, rs iter.Seq[int]) error {
			if i == 2 {
				<-blocked
				cancel()
			}
			for range rs {
				t.Errorf("item %d: a result emitted after the cancel", i)
			}
			if i > 2 {
				t.Errorf("item %d emitted after the cancel", i)
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Stream = %v, want context.Canceled", err)
		}
	})
	close(release)
	settled(t, base)
	if lateYield.Load() {
		t.Error("a yield of abandoned work succeeded")
	}
}

// With Abandon, an emit error while another item's work is blocked ends
// the run at once too (cost: a bad file while stdin is being read).
func TestStreamAbandonEmitError(t *testing.T) {
	base := runtime.NumGoroutine()
	var sent atomic.Int64
	release := make(chan struct{})
	bad := errors.New("bad input")
	within(t, time.Minute, "Stream", func() {
		err := Stream(context.Background(), Options{Workers: 2, Abandon: true}, items(2, &sent), func(i int, yield func(int) bool) {
			if i == 1 {
				<-release
			}
		}, func(i int, rs iter.Seq[int]) error {
			for range rs {
			}
			return bad
		})
		if err != bad {
			t.Errorf("Stream = %v, want %v", err, bad)
		}
	})
	close(release)
	settled(t, base)
}

// A panic in work (after some results), in emit or in produce is raised
// on Stream's caller, after the items and results before it were
// emitted, and no goroutine is left behind.
func TestStreamPanics(t *testing.T) {
	var sent atomic.Int64
	for _, abandon := range []bool{false, true} {
		for _, c := range []struct {
			name    string
			produce func(func(int) bool) error
			work    func(int, func(int) bool)
			emit    func(int, int)
			want    int // results emitted before the panic; -1: any
		}{
			{"work", items(1000, &sent), func(i int, yield func(int) bool) {
				yield(1)
				if i == 30 {
					yield(2)
					panic("work 30")
				}
			}, nil, 32},
			{"emit", items(1000, &sent), func(i int, yield func(int) bool) { jitter(i); yield(1) }, func(i, r int) {
				if i == 30 {
					panic("emit 30")
				}
			}, 30},
			{"produce", func(send func(int) bool) error {
				for i := range 30 {
					send(i)
				}
				panic("produce 30")
			}, func(i int, yield func(int) bool) { jitter(i); yield(1) }, nil, -1},
		} {
			t.Run(c.name, func(t *testing.T) {
				base := runtime.NumGoroutine()
				n, results := 0, 0
				emit := func(i int, rs iter.Seq[int]) error {
					if i != n {
						t.Errorf("item %d emitted at %d", i, n)
					}
					n++
					for r := range rs {
						if c.emit != nil {
							c.emit(i, r)
						}
						results++
					}
					return nil
				}
				p := panics(func() { Stream(context.Background(), Options{Workers: 4, Abandon: abandon}, c.produce, c.work, emit) })
				if p != c.name+" 30" {
					t.Fatalf("abandon %v: panic %v, want %q", abandon, p, c.name+" 30")
				}
				if c.want >= 0 && results != c.want {
					t.Errorf("abandon %v: %d results emitted before the panic, want %d", abandon, results, c.want)
				}
				if results > 32 {
					t.Errorf("abandon %v: %d results emitted, the panic was at 30", abandon, results)
				}
				settled(t, base)
			})
		}
	}
}

// Without Abandon, a work that panics after emit stopped ranging over its
// results has its panic raised all the same.
func TestStreamPanicAfterEmit(t *testing.T) {
	base := runtime.NumGoroutine()
	var sent atomic.Int64
	p := panics(func() {
		Stream(context.Background(), Options{Workers: 2}, items(10, &sent), func(i int, yield func(int) bool) {
			for yield(1) { // until emit is done with the item
			}
			if i == 5 {
				panic("work 5")
			}
		}, func(i int, rs iter.Seq[int]) error { return nil })
	})
	if p != "work 5" {
		t.Fatalf("panic %v, want work 5", p)
	}
	settled(t, base)
}

// While emit is blocked, produce is held back to 2×workers items, and each
// work to the results that wait for emit, whatever the number of items.
func TestStreamBlockedEmit(t *testing.T) {
	base := runtime.NumGoroutine()
	var sent, yielded atomic.Int64
	gate := make(chan struct{})
	in := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- Stream(context.Background(), Options{Workers: 2}, items(1000, &sent), func(i int, yield func(int) bool) {
			for j := range 20 {
				if !yield(j) {
					return
				}
				yielded.Add(1)
			}
		}, func(i int, rs iter.Seq[int]) error {
			if i == 0 {
				close(in)
				<-gate
			}
			for range rs {
			}
			return nil
		})
	}()
	<-in
	// Wait until produce and the workers cannot go on, then look.
	still(func() int64 { return sent.Load() + yielded.Load() })
	if n := sent.Load(); n > 2*2+2 {
		t.Errorf("%d items sent while the first was being emitted, want at most %d", n, 2*2+2)
	}
	if n := yielded.Load(); n > 2*resultsBuffer {
		t.Errorf("%d results yielded while the first item was being emitted, want at most %d", n, 2*resultsBuffer)
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := sent.Load(); n != 1000 {
		t.Fatalf("%d items sent, want 1000", n)
	}
	settled(t, base)
}
