// Package ordered runs work on several goroutines and hands the results on
// in the order the work was given: a scan's chunks, import's logs, cost's
// inputs, fsck's files. It is the one copy of that pipeline: its stop, its
// errors and its panics are handled here, and held by its tests under the
// race detector.
//
// Run gives each item to emit once its work is done. Stream hands on what
// the work yields while it works (a log's turns, batch by batch, where Run
// would hold the whole log's), and can abandon work under way when the run
// stops (a read of a pipe nothing can interrupt, a check a signal ends).
package ordered

import (
	"context"
	"fmt"
	"iter"
	"runtime/debug"
	"sync"
)

// A Panic is what a work's or produce's panic is raised with on the
// caller's goroutine: the value it panicked with and the stack of the
// goroutine that panicked, which the caller's own stack does not show.
type Panic struct {
	Value any
	Stack []byte
}

// Error gives the value and the stack where it panicked: what a crash
// prints.
func (p *Panic) Error() string {
	return fmt.Sprintf("%v\n\ngoroutine of the panic:\n%s", p.Value, p.Stack)
}

// Unwrap is the value when it is an error.
func (p *Panic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

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
// the caller's goroutine (produce's and work's as a *Panic holding the
// stack of their own goroutine). When Run returns, every goroutine it started has
// ended.
func Run[T any](ctx context.Context, workers int, produce func(send func(T) bool) error, work func(T), emit func(T) error) error {
	return Stream(ctx, Options{Workers: workers}, produce,
		func(item T, _ func(struct{}) bool) { work(item) },
		func(item T, results iter.Seq[struct{}]) error {
			for range results { // nothing: it ends when the work has (or raises its panic)
			}
			return emit(item)
		})
}

// Options says how a Stream runs.
type Options struct {
	// Workers is how many goroutines work on items at once (at least 1).
	Workers int
	// Abandon: when the run stops (emit's error, ctx done), Stream
	// returns at once, without waiting for the work under way or for
	// produce: each of those goroutines ends when the call it is in
	// returns (a yield or a send returns false from then on), and nothing
	// of it is emitted. For work that cannot be interrupted and need not
	// be finished, in a program that ends after (a read of stdin, a check
	// that changes nothing). Without it, the work under way is finished,
	// and what it yields emitted, before Stream returns.
	Abandon bool
}

// resultsBuffer is how many results of an item wait for emit before its
// work's yield blocks.
const resultsBuffer = 4

// Stream calls produce, which sends items one at a time; each item is
// given to work on one of o.Workers goroutines, which calls yield with
// each of its results as it makes them; emit is called on the caller's
// goroutine once for each item, in the order the items were sent, with its
// results in the order they were yielded: emit ranges over results while
// the work is still making them, ranging ends when the work has returned.
// results may be ranged once; an emit that stops ranging early (or never
// ranges) makes the work's next yield return false.
//
// At most 2×Workers items are between send and emit, and 4 results of
// each wait for emit: a slow emit holds produce and the work back, so
// memory stays bounded. send returns false once the run stops; produce
// should then return. yield returns false when emit is done with the item
// or the run stopped; work should then return.
//
// The run stops when emit returns an error (Stream returns it), when ctx
// is done (Stream returns ctx.Err()), or when produce returns: then every
// item sent is still worked on and emitted, and Stream returns produce's
// error. An item whose work had not begun when the run stopped is never
// emitted, nor any after it. When ctx is done the work under way is
// finished and emitted (work that should stop sooner watches ctx), or,
// with o.Abandon, abandoned.
//
// A panic in produce, work or emit is raised again on the caller's
// goroutine (a work's panic where emit ranges over its results, after
// those it yielded; produce's and work's as a *Panic holding the stack of
// their own goroutine). When Stream returns, every goroutine it started has
// ended, except with o.Abandon (see Options).
func Stream[T, R any](ctx context.Context, o Options, produce func(send func(T) bool) error, work func(item T, yield func(R) bool), emit func(item T, results iter.Seq[R]) error) (err error) {
	workers := max(o.Workers, 1)
	run, cancel := context.WithCancel(ctx) // done: no item starts any more
	quit := make(chan struct{})            // closed: the run ended, nothing more is emitted
	halt := (<-chan struct{})(quit)        // closed: yields and sends fail
	abandon := (<-chan struct{})(nil)      // closed: the caller's loop stops waiting
	if o.Abandon {
		halt, abandon = run.Done(), ctx.Done()
	}
	type slot struct {
		item     T
		begun    chan struct{} // closed when the work begins, or skipped is set
		skipped  bool          // the run stopped before the work began
		out      chan R        // the results; closed when the work has returned
		done     chan struct{} // closed when emit is done with the item
		panicked any
	}
	todo := make(chan *slot, workers)
	order := make(chan *slot, 2*workers)
	var wg sync.WaitGroup
	var produced error
	var producePanic any
	skip := func(s *slot) {
		s.skipped = true
		close(s.begun)
		close(s.out)
	}
	wg.Go(func() {
		defer close(order)
		defer close(todo)
		defer func() {
			if p := recover(); p != nil {
				producePanic = &Panic{Value: p, Stack: debug.Stack()}
				cancel()
			}
		}()
		produced = produce(func(item T) bool {
			s := &slot{item: item, begun: make(chan struct{}), out: make(chan R, resultsBuffer), done: make(chan struct{})}
			select {
			case order <- s:
			case <-run.Done():
				return false
			}
			select {
			case todo <- s:
				return true
			case <-run.Done():
				skip(s) // never worked on, never emitted
				return false
			}
		})
	})
	for range workers {
		wg.Go(func() {
			for s := range todo {
				if run.Err() != nil {
					skip(s)
					continue
				}
				close(s.begun)
				func() {
					defer close(s.out)
					defer func() {
						if p := recover(); p != nil {
							s.panicked = &Panic{Value: p, Stack: debug.Stack()}
						}
					}()
					work(s.item, func(r R) bool {
						select {
						case <-s.done:
							return false
						case <-halt:
							return false
						default:
						}
						select {
						case s.out <- r:
							return true
						case <-s.done:
						case <-halt:
						}
						return false
					})
				}()
			}
		})
	}
	// However Stream ends (an emit that panicked included), the run stops
	// and, unless abandoned, every goroutine ends before it returns:
	// produce sees the stop in send, the workers see todo closed and their
	// yields fail.
	ended := false
	end := func() {
		if !ended {
			ended = true
			cancel()
			close(quit)
			if !o.Abandon {
				for range order {
				}
				wg.Wait()
			}
		}
	}
	defer end()
	for {
		var s *slot
		var ok bool
		select {
		case s, ok = <-order:
		case <-abandon: // nil unless o.Abandon
		}
		if o.Abandon && ctx.Err() != nil {
			return ctx.Err()
		}
		if !ok {
			break
		}
		select {
		case <-s.begun:
		case <-abandon:
			return ctx.Err()
		}
		if s.skipped { // stopped: by ctx, or by a panic of produce
			break
		}
		results := func(yield func(R) bool) {
			for {
				var r R
				var ok bool
				select {
				case r, ok = <-s.out:
				case <-abandon:
					return
				}
				if o.Abandon && ctx.Err() != nil {
					return
				}
				if !ok {
					if s.panicked != nil {
						close(s.done)
						end()
						panic(s.panicked)
					}
					return
				}
				if !yield(r) {
					return
				}
			}
		}
		err := emit(s.item, results)
		select {
		case <-s.done: // closed by a panic raised in results, recovered by emit
		default:
			close(s.done)
		}
		if err != nil {
			return err
		}
		if o.Abandon && ctx.Err() != nil {
			return ctx.Err()
		}
		if !o.Abandon {
			// The work ends at its next yield at the latest; a panic of
			// it after emit stopped ranging is raised here.
			for range s.out {
			}
			if s.panicked != nil {
				end()
				panic(s.panicked)
			}
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
