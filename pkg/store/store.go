// Package store is what the commands do to sessions, whatever holds them
// (SPEC §10, seed 003): create, append a batch, cut, read a session's entry
// lines in order, list, resolve an id prefix. A backend is a package of its
// own that registers itself: files (package filestore, the default), null
// (nullstore) and PostgreSQL (pgstore). The commands use only this
// interface, and one conformance suite (storetest) holds every backend to
// the same behaviour.
package store

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// Store holds sessions. A session is named by a file path in the file
// store and by its id (or a unique prefix of it) in a database.
type Store interface {
	// Where says where the sessions are, for messages: a directory, or a
	// database URL without its password.
	Where() string
	// NewName returns the name a new session of cwd would get; nothing is
	// created (SPEC §4: a session exists from its first reply on).
	NewName(cwd string) (string, error)
	// Append writes msgs to the session as one batch, all or nothing,
	// under the rules of SPEC §5 (stamps, parent, expected leaf, deferred
	// creation).
	Append(ctx context.Context, name string, msgs []Msg, o AppendOptions) (*Result, error)
	// Truncate cuts every entry after entry after (after "": only a torn
	// tail, which only files have; after the session's own id, the
	// header's, when no entry has that id: every entry, the header kept);
	// what it cuts is kept aside, never simply deleted. A nil Cut means
	// there was nothing to cut.
	Truncate(ctx context.Context, name, after string) (*Cut, error)
	// Open opens a session to read it as a session file's bytes: the
	// header line, then the entry lines in order. What another store or
	// another writer put there is input: a session that is not one (a
	// line that is not one complete JSON object, a header that does not
	// match where it is kept, entries whose parents do not come before
	// them) is an error, never handed on.
	Open(ctx context.Context, name string) (Reader, error)
	// Receive makes the store hold the session src holds (a session
	// file's bytes, from another store or a conversion), incrementally:
	// created whole when the store has no session of its id, else only
	// the entries it lacks appended, in one batch. The entries it holds
	// must be src's first, byte for byte: a session that differs is
	// ErrConflict and nothing is written, never overwritten (the Received
	// returned with it names the session). A store that holds all of src
	// and more has nothing to add. A src that
	// is no clean session (no valid header, an id that is not a UUID,
	// damage before its end, a repeated entry id, a parent cycle) is
	// ErrNeedsFsck. The store names the session itself (a file of its
	// cwd's project directory, checked to be under the sessions base;
	// the id in a database).
	Receive(ctx context.Context, src Source) (*Received, error)
	// List describes the sessions of cwd (of every cwd with all), newest
	// activity first. What cannot be a session is given to skip.
	List(ctx context.Context, cwd string, all bool, skip func(error)) ([]Summary, error)
	// Resolve returns the name of the session whose id starts with
	// prefix: ErrNoSuchSession or an *AmbiguousError otherwise.
	Resolve(ctx context.Context, cwd string, all bool, prefix string) (string, error)
	// Each calls fn with the name of every session an argument names, in
	// order: a file, or every session file below a directory, for the
	// file store; a session id or a unique prefix of one for a database.
	// What cannot be read is given to fn with its error; fn's error stops
	// the walk.
	Each(ctx context.Context, arg string, fn func(name string, err error) error) error
	// Close releases what the store holds (a connection).
	Close() error
}

// Files is a store that keeps its sessions as files below one directory,
// its sessions base (pkg/filestore): what push copies from, pull writes
// into and a follower watches. A command asks for it by this interface,
// never by the backend's type.
type Files interface {
	Store
	// BaseDir is the sessions base (SPEC §4).
	BaseDir() (string, error)
	// OpenFile opens the session file at path as a follower reads it:
	// without blocking on a FIFO, its writer's lock tested, its size
	// learned again as it grows.
	OpenFile(path string) (File, error)
	// Cuts names the copies that cuts of the session file at path set
	// aside (panto-log truncate, a repair), in the order of their names.
	Cuts(path string) []string
}

// File is a session file of a Files store opened to follow it.
type File interface {
	Reader
	// Regular reports whether it is a regular file (not a FIFO, a device).
	Regular() bool
	// Dev and Ino are the file's identity: a name given to another file
	// is a new one.
	Dev() uint64
	Ino() uint64
	// SizeNow is the file's size now (Size: when it was opened).
	SizeNow() (int64, error)
	// Locked reports whether a writer holds the file's lock now: tested,
	// never waited for. A writer holds it while its batch is not yet
	// durable.
	Locked() (bool, error)
}

// Reader is a session opened to read: its bytes as a session file has
// them, read in order or at any offset.
type Reader interface {
	io.Reader
	io.ReaderAt
	Size() int64
	Close() error
}

// Source is a session to receive: a session file's bytes, readable at any
// offset (a Reader of another store, or a file).
type Source interface {
	io.ReaderAt
	Size() int64
}

// Received is what a Receive did.
type Received struct {
	Name    string // the session's name in the store
	ID      string // its id
	Created bool   // the store had no session of that id
	Had     int64  // entries the store held already
	Entries int64  // entries added now
	Bytes   int64  // bytes added, as a session file counts them
	Ahead   bool   // the store holds all of src and entries src lacks
}

// The optional interfaces a store or a Reader may have, beside Store:
//
//   - SetWait(time.Duration), on a store: how long its writers wait for
//     another writer's lock (files and PostgreSQL); internal/stores.SetWait
//     calls it where it exists.
//   - Dev() uint64 and Ino() uint64, on a Reader: the identity of the file
//     it reads (the file store), so that a file named twice is read once
//     (panto-cost). A wrapper that drops them turns that off silently:
//     keep them when wrapping a Reader.
//   - Regular() bool, on the file store's Reader: whether it reads a
//     regular file.

// Summary describes one session in a listing.
type Summary struct {
	ID       string    `json:"id"`
	Path     string    `json:"path"` // its name: a file's path, or the id in a database
	Cwd      string    `json:"cwd"`
	Created  time.Time `json:"created"`
	Modified time.Time `json:"modified"` // last activity
	Messages int       `json:"messages"` // user and assistant entries
	Size     int64     `json:"size"`
	Problem  string    `json:"problem,omitempty"` // set when the session could not be read whole
	Title    string    `json:"title"`             // what it is called (session.Titles): "" when nothing says
	Agent    string    `json:"agent"`             // who wrote it: panto, or the agent it was imported from
	Prompt   string    `json:"-"`                 // the first user prompt (the title, unless the agent gave one)
}

// Msg is one entry of a batch: a message (its JSON as it will be stored,
// and its role), or an entry of another type.
type Msg struct {
	Raw  []byte
	Role string
	// Type is the entry's type when it is not a message ("compaction"):
	// Raw then holds its members after "timestamp", as JSON (`"a":1,"b":2`).
	Type string
}

// Compaction is the compaction entry of SPEC §13, to append: from it on
// the conversation sent is summary, then the entries from firstKept on.
// request, when not nil, holds the members that say what the summary
// cost (`"provider":…,"model":…,"usage":{…}`, CompactionRequest). The
// entry's shape and rules are pkg/session's (compaction.go).
func Compaction(summary, firstKept string, tokensBefore int64, request []byte) Msg {
	return Msg{Type: session.TypeCompaction, Raw: session.CompactionFields(summary, firstKept, tokensBefore, request)}
}

// ToolRound is the mark of a tool round (SPEC §13), to append before the
// round's tools run, as a child of the reply that asks for them: it says
// that the calls named (toolUseIds) started at its timestamp, so that a
// session cut off before their results tells them apart from calls that
// never started. Readers that do not know the type skip it (SPEC §2); the
// model is never sent it.
func ToolRound(toolUseIDs []string) Msg {
	f := []byte(`"toolUseIds":[`)
	for i, id := range toolUseIDs {
		if i > 0 {
			f = append(f, ',')
		}
		f = rawjson.AppendString(f, id)
	}
	return Msg{Type: session.TypeToolRound, Raw: append(f, ']')}
}

// ToolRoundLine is the line a tool round's mark travels on a pipe
// (panto-log append reads it): the entry without id, parentId and
// timestamp, which the writer gives it.
func ToolRoundLine(toolUseIDs []string) []byte {
	m := ToolRound(toolUseIDs)
	return append(append([]byte(`{"type":"toolRound",`), m.Raw...), '}')
}

// ParseToolRound reads a tool round's line (ToolRoundLine).
func ParseToolRound(line []byte) (Msg, error) {
	if !gjson.ValidBytes(line) {
		return Msg{}, fmt.Errorf("%w: not a JSON object", session.ErrInvalidMsg)
	}
	r := gjson.GetBytes(line, "toolUseIds")
	var ids []string
	ok := r.IsArray()
	r.ForEach(func(_, v gjson.Result) bool {
		ok = ok && v.Type == gjson.String && v.Str != ""
		ids = append(ids, v.Str)
		return ok
	})
	if !ok || len(ids) == 0 {
		return Msg{}, fmt.Errorf("%w: a toolRound needs toolUseIds, an array of the ids of the calls it runs", session.ErrInvalidMsg)
	}
	return ToolRound(ids), nil
}

// CompactionRequest returns the members of a compaction entry that say
// what its summary cost, from the reply (an assistant message line) that
// held it: its provider, model and usage (session.CompactionRequest).
func CompactionRequest(reply []byte) []byte { return session.CompactionRequest(reply) }

// CompactionLine is the line a compaction travels on a pipe (panto-turn
// --compact prints it, panto-log append reads it): the entry without
// id, parentId and timestamp, which the writer gives it.
func CompactionLine(summary, firstKept string, tokensBefore int64, request []byte) []byte {
	m := Compaction(summary, firstKept, tokensBefore, request)
	return append(append([]byte(`{"type":"compaction",`), m.Raw...), '}')
}

// CheckCompactionRequest validates the request a compaction line says it
// made (session.CheckCompactionRequest): nil when it says none.
func CheckCompactionRequest(line []byte) error { return session.CheckCompactionRequest(line) }

// ParseCompaction reads a compaction line (CompactionLine).
func ParseCompaction(line []byte) (Msg, error) {
	f, err := session.ParseCompaction(line)
	if err != nil {
		return Msg{}, err
	}
	return Msg{Type: session.TypeCompaction, Raw: f}, nil
}

// ParseMessage validates a message line and compacts it. Field order,
// escapes, numbers and string bytes are kept as given.
func ParseMessage(line []byte) (Msg, error) {
	role, err := session.CheckMessage(line)
	if err != nil {
		return Msg{}, err
	}
	raw, err := rawjson.Compact(line)
	if err != nil {
		return Msg{}, fmt.Errorf("%w: %v", session.ErrInvalidMsg, err)
	}
	return Msg{Raw: raw, Role: role}, nil
}

// AppendOptions are the choices of one append.
type AppendOptions struct {
	Provider, Model string // stamp of user entries; "" for the session's active one
	Parent          string // parent of the first entry; "" for the leaf
	// Root makes the first entry a root (parentId null) beside the
	// session's first entry, which must be a user prompt that got no
	// reply: the sibling of a dangling root prompt (SPEC §13).
	Root       bool
	ExpectLeaf *string // fail unless the leaf is this id ("" : no entry yet)
	AllowEmpty bool    // create a new session even without a reply
	Cwd        string  // the header's cwd of a new session
	Now        func() time.Time
}

// Result is what an append did.
type Result struct {
	Lines   []byte // the entry lines written
	Created bool   // the session was created
	Cut     *Cut   // a torn tail cut first, if any
}

// Cut is what a cut removed.
type Cut struct {
	From    int64  // where the session was cut: a byte offset of the file
	Bytes   int64  // bytes removed
	Entries int    // complete entries among them
	SavedAs string // where they were kept
}

// HasReply reports whether msgs hold an assistant message: a session is
// created only by a batch that does (SPEC §4).
func HasReply(msgs []Msg) bool {
	for _, m := range msgs {
		if m.Role == "assistant" {
			return true
		}
	}
	return false
}

// HasUser reports whether msgs hold a user message.
func HasUser(msgs []Msg) bool {
	for _, m := range msgs {
		if m.Role == "user" {
			return true
		}
	}
	return false
}

// CheckNew applies the rules of a batch that would create the session
// name (SPEC §4, §5): no parent to branch from, no leaf to expect, and a
// reply in the batch (a session exists from its first reply on) unless
// AllowEmpty. noun says what is created ("session file", "session").
func CheckNew(name, noun string, msgs []Msg, o AppendOptions) error {
	if o.Parent != "" {
		return fmt.Errorf("%w: %s does not exist, so it has no entry %q", ErrNoParent, name, o.Parent)
	}
	if err := CheckLeaf("", o.ExpectLeaf); err != nil {
		return err
	}
	if !HasReply(msgs) && !o.AllowEmpty {
		return fmt.Errorf("%w: %s does not exist and a %s is created by its first reply", ErrNoReply, name, noun)
	}
	return nil
}

// CheckLeaf fails with ErrLeafMoved unless the leaf is want (when given).
func CheckLeaf(got string, want *string) error {
	if want == nil || got == *want {
		return nil
	}
	if got == "" {
		got = "none"
	}
	return fmt.Errorf("%w: the leaf is %s, not %s (another writer appended)", ErrLeafMoved, got, *want)
}

// Build renders msgs as entry lines: the first a child of parentID, each
// next a child of the one before. User entries get stamp, or without one
// the provider/model of the batch's reply (where the prompt was sent).
// taken says which ids the session uses already. It returns the lines and
// their ids.
func Build(msgs []Msg, parentID string, stamp session.Stamp, taken func(string) bool, now time.Time) ([]byte, []string, error) {
	if stamp.Provider == "" {
		for _, m := range msgs {
			if m.Role == "assistant" {
				r := gjson.GetManyBytes(m.Raw, "provider", "model")
				stamp = session.Stamp{Provider: r[0].Str, Model: r[1].Str}
				break
			}
		}
	}
	ts := session.Timestamp(now)
	mine := map[string]bool{}
	var buf []byte
	ids := make([]string, 0, len(msgs))
	for _, m := range msgs {
		id, err := session.NewEntryID(func(s string) bool { return mine[s] || taken(s) })
		if err != nil {
			return nil, nil, err
		}
		mine[id] = true
		if m.Type != "" {
			buf = session.Kept{Type: m.Type, ID: id, ParentID: parentID, Timestamp: ts, Fields: m.Raw}.AppendLine(buf)
			ids = append(ids, id)
			parentID = id
			continue
		}
		e := session.Entry{ID: id, ParentID: parentID, Timestamp: ts, Message: m.Raw}
		if m.Role == "user" {
			if stamp.Provider == "" || stamp.Model == "" {
				return nil, nil, fmt.Errorf("%w: give --provider and --model", ErrNoStamp)
			}
			e.Provider, e.Model = stamp.Provider, stamp.Model
		}
		buf = e.AppendLine(buf)
		ids = append(ids, id)
		parentID = id
	}
	return buf, ids, nil
}

// AmbiguousError is a prefix that more than one session id starts with.
type AmbiguousError struct {
	Prefix string
	IDs    []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("id prefix %q is ambiguous: %s: give more of the id", e.Prefix, strings.Join(e.IDs, ", "))
}

func (e *AmbiguousError) Unwrap() error { return ErrAmbiguousID }

// NotFoundError is a prefix that no session id starts with.
type NotFoundError struct{ Prefix string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no session id starts with %q: panto-log list shows them", e.Prefix)
}

func (e *NotFoundError) Unwrap() error { return ErrNoSuchSession }

// Pick resolves prefix among ids (names[i] is the name of ids[i]).
func Pick(prefix string, ids, names []string) (string, error) {
	prefix = strings.ToLower(prefix)
	var hits []int
	for i, id := range ids {
		if strings.HasPrefix(id, prefix) {
			hits = append(hits, i)
		}
	}
	switch len(hits) {
	case 0:
		return "", &NotFoundError{Prefix: prefix}
	case 1:
		return names[hits[0]], nil
	}
	e := &AmbiguousError{Prefix: prefix}
	for _, i := range hits {
		e.IDs = append(e.IDs, ids[i])
	}
	sort.Strings(e.IDs)
	return "", e
}

// Opener opens a store from its URL; getenv reads the environment (for
// the file store's directories, and libpq's PG* variables).
type Opener func(url string, getenv func(string) string) (Store, error)

var (
	mu      sync.Mutex
	openers = map[string]Opener{}
)

// Register makes a backend known by the scheme of its URLs ("file" is the
// default, for an empty URL).
func Register(scheme string, o Opener) {
	mu.Lock()
	defer mu.Unlock()
	openers[scheme] = o
}

// schemeName is what a URL's scheme may be (RFC 3986).
var schemeName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)

// builtin names the package of each built-in store.
var builtin = map[string]string{"file": "pkg/filestore", "null": "pkg/nullstore", "postgres": "pkg/pgstore"}

// Open opens the store a URL names: "" for the file store, "null:", or
// "postgres://…" (also "postgresql://…"). The stores register
// themselves; a program that imports pkg/agent has all three.
func Open(url string, getenv func(string) string) (Store, error) {
	scheme := "file"
	if c := claimant(url); c != "" {
		scheme = c // a form with no scheme: libpq's host=… dbname=…
	} else if url != "" {
		s, _, ok := strings.Cut(url, ":")
		if !ok || !schemeName.MatchString(s) { // never quoted: it may hold a piece of a password
			return nil, fmt.Errorf("%w: %q: give postgres://…, null: or nothing for files", ErrBadURL, Redact(url))
		}
		scheme = strings.ToLower(s)
	}
	if scheme == "postgresql" {
		scheme = "postgres"
	}
	mu.Lock()
	o := openers[scheme]
	mu.Unlock()
	if pkg := builtin[scheme]; o == nil && pkg != "" {
		return nil, fmt.Errorf("%w: %q: the %s store is not linked into this program: import github.com/panto-dev/panto/pkg/agent (or the store's package, %s)", ErrBadURL, Redact(url), scheme, pkg)
	}
	if o == nil {
		return nil, fmt.Errorf("%w: %q: no store of kind %q (give postgres://…, null: or nothing for files)", ErrBadURL, Redact(url), scheme)
	}
	return o(url, getenv)
}

// SortNewest orders a listing: newest activity first, ties by newest id,
// then as given. It sorts small keys, not the summaries: a database
// lists ten thousand sessions in a few milliseconds.
func SortNewest(list []Summary) {
	type key struct {
		mod int64
		id  string
		i   int32
	}
	keys := make([]key, len(list))
	for i := range list {
		keys[i] = key{list[i].Modified.UnixNano(), list[i].ID, int32(i)}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(b.mod, a.mod); c != 0 {
			return c
		}
		if c := strings.Compare(b.id, a.id); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	sorted := make([]Summary, len(list))
	for i, k := range keys {
		sorted[i] = list[k.i]
	}
	copy(list, sorted)
}
