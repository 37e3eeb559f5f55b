// Package ordered runs work on several goroutines and hands the results on
// in the order the work was given: a scan's chunks, import's logs. It is
// the one copy of that pipeline: its stop, its errors and its panics are
// handled here, and held by its tests under the race detector.
package ordered

import (
	"context"
	"sync"
)

// Run calls produce, which sends items one at a time; each item is given
// to work on one of workers goroutines, and then to emit, on the caller's
// goroutine, in the order the items were sent (an item is emitted once its
// own work and that of every item before it are done).
//
// At most 2×workers items are between send and emit: a slow emit holds
// produce back, so memory stays bounded. send returns false once the run
// stops; produce should then return.
//
// The run stops when emit returns an error (Run returns it), when ctx is
// done (Run returns ctx.Err()), or when produce returns: then every item
// sent is still worked on and emitted, and Run returns produce's error.
// Items sent but not emitted when the run stops early are worked on or
// not, never emitted. A panic in produce, work or emit is raised again on
// the caller's goroutine. When Run returns, every goroutine it started has
// ended.
func Run[T any](ctx context.Context, workers int, produce func(send func(T) bool) error, work func(T), emit func(T) error) (err error) {
	workers = max(workers, 1)
	ctx, cancel := context.WithCancel(ctx)
	type slot struct {
		item     T
		done     chan struct{}
		worked   bool // false: the run stopped before its work began
		panicked any
	}
	todo := make(chan *slot, workers)
	order := make(chan *slot, 2*workers)
	var wg sync.WaitGroup
	var produced error
	var producePanic any
	wg.Go(func() {
		defer close(order)
		defer close(todo)
		defer func() {
			if p := recover(); p != nil {
				producePanic = p
				cancel()
			}
		}()
		produced = produce(func(item T) bool {
			s := &slot{item: item, done: make(chan struct{})}
			select {
			case order <- s:
			case <-ctx.Done():
				return false
			}
			select {
			case todo <- s:
				return true
			case <-ctx.Done():
				close(s.done) // never worked on, never emitted
				return false
			}
		})
	})
	for range workers {
		wg.Go(func() {
			for s := range todo {
				func() {
					defer close(s.done)
					defer func() {
						if p := recover(); p != nil {
							s.panicked = p
						}
					}()
					if ctx.Err() == nil {
						s.worked = true
						work(s.item)
					}
				}()
			}
		})
	}
	// However Run ends (an emit that panicked included), the run stops and
	// every goroutine ends before it returns: produce sees the stop in
	// send, the workers see todo closed.
	ended := false
	end := func() {
		if !ended {
			ended = true
			cancel()
			for range order {
			}
			wg.Wait()
		}
	}
	defer end()
	for s := range order {
		<-s.done
		if !s.worked { // stopped: by ctx, or by a panic of produce
			break
		}
		if s.panicked != nil {
			end()
			panic(s.panicked)
		}
		if err := emit(s.item); err != nil {
			return err
		}
	}
	outer := ctx.Err() // before end cancels it: was the run stopped?
	end()
	if producePanic != nil {
		panic(producePanic)
	}
	if outer != nil {
		return outer
	}
	return produced
}
