// Package nullstore is the store that keeps nothing (PANTO_STORE=null:),
// seed 003's NullStore: every append succeeds, a prompt alone included,
// with the entry lines it would have written, and reads find nothing. For
// embedders and dry runs: an agent on it (package agent) keeps its
// conversation in memory.
package nullstore

import (
	"context"
	"fmt"
	"time"

	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// Null keeps nothing.
type Null struct{}

func init() {
	store.Register("null", func(url string, _ func(string) string) (store.Store, error) {
		if url != "null:" {
			return nil, fmt.Errorf("%w: %q: the null store is null: and nothing more", store.ErrBadURL, url)
		}
		return Null{}, nil
	})
}

// Where says that nothing is kept.
func (Null) Where() string { return "null: (nothing is kept)" }

// NewName is a new session id.
func (Null) NewName(string) (string, error) { return session.NewSessionID() }

// Append keeps nothing and succeeds: a batch without a reply too (the
// prompt written before its request), since no session is created. With
// nothing kept there is no leaf to check: the first entry is a child of
// the parent, or of the leaf the caller expects, as the caller says.
func (Null) Append(_ context.Context, _ string, msgs []store.Msg, o store.AppendOptions) (*store.Result, error) {
	if len(msgs) == 0 {
		return nil, store.ErrEmpty
	}
	parent := o.Parent
	if parent == "" && o.ExpectLeaf != nil && !o.Root {
		parent = *o.ExpectLeaf
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	lines, _, err := store.Build(msgs, parent, session.Stamp{Provider: o.Provider, Model: o.Model}, func(string) bool { return false }, now())
	if err != nil {
		return nil, err
	}
	return &store.Result{Lines: lines, Created: true}, nil
}

// Truncate finds nothing to cut.
func (Null) Truncate(_ context.Context, name, _ string) (*store.Cut, error) {
	return nil, fmt.Errorf("%w: %s (the null store keeps nothing)", store.ErrNoSuchSession, name)
}

// Open finds nothing.
func (Null) Open(_ context.Context, name string) (store.Reader, error) {
	return nil, fmt.Errorf("%w: %s (the null store keeps nothing)", store.ErrNoSuchSession, name)
}

// List lists nothing.
func (Null) List(context.Context, string, bool, func(error)) ([]store.Summary, error) {
	return nil, nil
}

// Resolve finds nothing.
func (Null) Resolve(_ context.Context, _ string, _ bool, prefix string) (string, error) {
	return "", fmt.Errorf("%w (the null store keeps nothing)", &store.NotFoundError{Prefix: prefix})
}

// Close does nothing.
func (Null) Close() error { return nil }

// Each finds nothing.
func (Null) Each(_ context.Context, arg string, fn func(string, error) error) error {
	return fn(arg, fmt.Errorf("%w: %s (the null store keeps nothing)", store.ErrNoSuchSession, arg))
}

// Receive checks the session as any store does and keeps nothing: every
// session is new.
func (Null) Receive(_ context.Context, src store.Source) (*store.Received, error) {
	l, err := store.CheckSource(src, "the session received")
	if err != nil {
		return nil, err
	}
	return &store.Received{Name: l.Header.ID, ID: l.Header.ID, Created: true}, nil
}

var _ store.Store = Null{}
