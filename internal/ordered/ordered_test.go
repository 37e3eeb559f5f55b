package ordered

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// settled fails the test unless the goroutines are back to n (Run's own
// ended before it returned; a goroutine may take a moment to be gone once
// it is done).
func settled(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left, want %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		runtime.Gosched()
	}
}

// still returns once count has not moved over 1,000 yields of the
// processor: what it counts is blocked.
func still(count func() int64) {
	for prev, same := int64(-1), 0; same < 1000; {
		if n := count(); n == prev {
			same++
		} else {
			prev, same = n, 0
		}
		runtime.Gosched()
	}
}

// items sends 0..n-1, counting what send accepted.
func items(n int, sent *atomic.Int64) func(func(int) bool) error {
	return func(send func(int) bool) error {
		for i := range n {
			if !send(i) {
				return nil
			}
			sent.Add(1)
		}
		return nil
	}
}

// jitter makes the work finish out of order.
func jitter(i int) {
	if rand.IntN(4) == 0 {
		time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
	}
	runtime.Gosched()
}

func TestOrder(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 8} {
		base := runtime.NumGoroutine()
		var sent atomic.Int64
		worked := make([]atomic.Bool, 1000)
		var got []int
		err := Run(context.Background(), workers, items(1000, &sent), func(i int) { jitter(i); worked[i].Store(true) }, func(i int) error {
			if !worked[i].Load() {
				t.Errorf("workers %d: item %d emitted before its work was done", workers, i)
			}
			got = append(got, i)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1000 {
			t.Fatalf("workers %d: %d items emitted, want 1000", workers, len(got))
		}
		for i, v := range got {
			if v != i {
				t.Fatalf("workers %d: item %d emitted at %d", workers, v, i)
			}
		}
		settled(t, base)
	}
}

// An emit that returns an error stops the run: nothing after it is
// emitted, produce is told to stop, little work is done past it, and Run
// returns that error.
func TestEmitStops(t *testing.T) {
	base := runtime.NumGoroutine()
	stop := errors.New("enough")
	var sent, works atomic.Int64
	var last int
	err := Run(context.Background(), 4, items(100000, &sent), func(i int) { works.Add(1); jitter(i) }, func(i int) error {
		last = i
		if i == 50 {
			return stop
		}
		return nil
	})
	if err != stop || last != 50 {
		t.Fatalf("Run = %v after item %d, want %v after 50", err, last, stop)
	}
	if n := sent.Load(); n > 51+2*4+1 {
		t.Errorf("produce sent %d items, a stop at item 50 with 4 workers bounds it to %d", n, 51+2*4+1)
	}
	if n := works.Load(); n > sent.Load() {
		t.Errorf("%d works for %d items sent", n, sent.Load())
	}
	settled(t, base)
}

// What produce returns comes after every item it sent.
func TestProduceError(t *testing.T) {
	base := runtime.NumGoroutine()
	bad := errors.New("walk failed")
	n := 0
	err := Run(context.Background(), 3, func(send func(int) bool) error {
		for i := range 20 {
			send(i)
		}
		return bad
	}, jitter, func(i int) error {
		if i != n {
			t.Fatalf("item %d emitted at %d", i, n)
		}
		n++
		return nil
	})
	if err != bad || n != 20 {
		t.Fatalf("Run = %v after %d items, want %v after 20", err, n, bad)
	}
	settled(t, base)
}

// A context cancelled midway stops the run: Run returns its error, nothing
// is emitted that was not worked on, and produce and the workers end.
func TestCancel(t *testing.T) {
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	var sent atomic.Int64
	worked := make([]atomic.Bool, 100000)
	n := 0
	err := Run(ctx, 4, items(100000, &sent), func(i int) { jitter(i); worked[i].Store(true) }, func(i int) error {
		if !worked[i].Load() {
			t.Errorf("item %d emitted, never worked on", i)
		}
		if n++; n == 100 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if sent.Load() == 100000 {
		t.Errorf("produce was not stopped")
	}
	settled(t, base)
}

// panics runs f and returns what it panicked with: a *Panic's value,
// when its stack names the goroutine that panicked (work or produce, run
// by the test's functions). A work's or produce's panic raised bare (the
// tests' values say whose they are) is returned marked as such.
func panics(f func()) (p any) {
	defer func() {
		p = recover()
		if v, ok := p.(string); ok && (strings.HasPrefix(v, "work") || strings.HasPrefix(v, "produce")) {
			p = "raised without its stack: " + v
		}
		if pp, ok := p.(*Panic); ok {
			p = pp.Value
			if !bytes.Contains(pp.Stack, []byte("ordered.Test")) || !strings.Contains(pp.Error(), fmt.Sprint(pp.Value)) {
				p = fmt.Sprintf("%v, with a stack not of its own goroutine:\n%s", pp.Value, pp.Stack)
			}
		}
	}()
	f()
	return nil
}

// A panic in work, in emit or in produce is raised on Run's caller, after
// the items before it were emitted, and no goroutine is left behind.
func TestPanics(t *testing.T) {
	var sent atomic.Int64
	for _, c := range []struct {
		name          string
		produce       func(func(int) bool) error
		work          func(int)
		emit          func(int) error
		emitted, want int // items emitted before the panic
	}{
		{"work", items(1000, &sent), func(i int) {
			if jitter(i); i == 30 {
				panic("work 30")
			}
		}, nil, 30, 30},
		{"emit", items(1000, &sent), jitter, func(i int) error {
			if i == 30 {
				panic("emit 30")
			}
			return nil
		}, 30, 30},
		{"produce", func(send func(int) bool) error {
			for i := range 30 {
				send(i)
			}
			panic("produce 30")
		}, jitter, nil, 30, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := runtime.NumGoroutine()
			n := 0
			emit := func(i int) error {
				if c.emit != nil {
					if err := c.emit(i); err != nil {
						return err
					}
				}
				if i != n {
					t.Errorf("item %d emitted at %d", i, n)
				}
				n++
				return nil
			}
			p := panics(func() { Run(context.Background(), 4, c.produce, c.work, emit) })
			if p != c.name+" 30" {
				t.Fatalf("panic %v, want %q", p, c.name+" 30")
			}
			if c.want >= 0 && n != c.want {
				t.Errorf("%d items emitted before the panic, want %d", n, c.want)
			}
			if n > 30 {
				t.Errorf("%d items emitted, the panic was at 30", n)
			}
			settled(t, base)
		})
	}
}

// While emit is blocked, produce is held back: at most 2×workers items
// (and the one being emitted) wait, whatever the number of items.
func TestBlockedEmit(t *testing.T) {
	base := runtime.NumGoroutine()
	var sent atomic.Int64
	gate := make(chan struct{})
	in := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- Run(context.Background(), 2, items(10000, &sent), func(int) {}, func(i int) error {
			if i == 0 {
				close(in)
				<-gate
			}
			return nil
		})
	}()
	<-in
	// Wait until produce cannot go on (its sends are blocked), then look.
	still(sent.Load)
	if n := sent.Load(); n > 2*2+2 {
		t.Errorf("%d items sent while the first was being emitted, want at most %d", n, 2*2+2)
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := sent.Load(); n != 10000 {
		t.Fatalf("%d items sent, want 10000", n)
	}
	settled(t, base)
}
