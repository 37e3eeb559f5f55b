package store

import (
	"context"
	"errors"
	"hash/crc32"
	"strings"
	"sync"
	"time"

	"github.com/panto-dev/panto/pkg/scan"
)

// Follower is a store that a follower (panto-log push --follow and
// --once, import --follow and --once; push --status) can follow files
// into: beside the sessions, it keeps, per session, where the follower
// stands in the file it follows (a Position), written in the same
// transaction as the lines, so that a follower killed at any moment, or
// another one elsewhere, goes on from what the store holds. pkg/pgstore
// implements it; a command reaches it through this interface only.
type Follower interface {
	Store
	// Follows returns what the store holds of session id.
	Follows(ctx context.Context, id string) (Followed, error)
	// FollowsAll returns it for every session, by id.
	FollowsAll(ctx context.Context) (map[string]Followed, error)
	// Shared compares the session file rd reads (from its header;
	// complete lines only) with session id, entry by entry, and says how
	// much they share. Their headers must be the same (ErrConflict
	// otherwise).
	Shared(ctx context.Context, id string, rd *scan.Reader) (Share, error)
	// Beyond returns what session id holds after the entries sh shares
	// with a file; pos is the session's position (nil: none).
	Beyond(ctx context.Context, id string, sh Share, pos *Position) (Tail, error)
	// Commit applies c all or nothing, the position with the lines;
	// ErrMoved when the session or its position is not what c expects.
	Commit(ctx context.Context, c Commit) (Committed, error)
	// Header returns session id's header line (without "\n"; nil when
	// the store does not hold the session).
	Header(ctx context.Context, id string) ([]byte, error)
	// IDsAfter returns the ids of session id's entries after its first n.
	IDsAfter(ctx context.Context, id string, n int64) ([]string, error)
}

// Position is where a follower stands in a file it follows (the source)
// and in the session it follows it into. For panto's own sessions the two
// are one file; for another agent's log the session is its conversion.
type Position struct {
	Source       string // the file followed, as last seen
	Bytes, Lines int64  // of the source: complete lines committed
	Sum          uint32 // CRC-32C of the source's first Bytes bytes
	Entries      int64  // the session's entries
	SessionBytes int64  // the session's size as a file
	SessionSum   uint32 // CRC-32C of the session file's first SessionBytes bytes
	Updated      time.Time
}

// Followed is what the database holds of a session a follower follows.
type Followed struct {
	Exists  bool      // the session is in the database
	Entries int64     // its entries
	Bytes   int64     // its size as a session file
	Pos     *Position // nil: never followed (or pushed by plain push only)
}

// Agrees reports whether the session is where its position says: nothing
// wrote to it but the follower since.
func (f Followed) Agrees() bool {
	return f.Pos != nil && f.Exists && f.Pos.Entries == f.Entries && f.Pos.SessionBytes == f.Bytes
}

// ErrMoved is a commit refused because the session or its position is no
// longer what the follower expected (another follower, a push or an
// append went first): nothing was written; read them again.
var ErrMoved = errors.New("the session in the database moved")

// Sum extends a CRC-32C (the checksum of positions) by b.
func Sum(sum uint32, b []byte) uint32 { return crc32.Update(sum, castagnoli(), b) }

// castagnoli is made when first needed: making it costs every command
// that links the store.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// Share is how much of a session file the database's session holds.
type Share struct {
	Entries int64 // the entries both hold, at the same places, byte for byte
	Bytes   int64 // the file's bytes up to the end of them (header included)
	Sum     uint32
	Have    int64 // the database's entries
	// The database's first entry beyond the shared ones (when Have >
	// Entries): its length and CRC-32C, to recognise a cut saved aside.
	NextLen int64
	NextCRC int32
}

// Tail is what a session holds beyond the entries a file shares with it
// (Share.Entries), to tell whose they are.
type Tail struct {
	Lens []int64  // each entry's length, in order
	Sums [][]byte // and its SHA-256, computed by the server
	// Committed is how many of them, from the first, a follower committed:
	// the database holds, up to the position's entries, exactly the
	// session file the position describes (its size and CRC-32C). 0 when
	// there is no position, or the session changed under it (a cut in
	// the database, then other appends).
	Committed int64
}

// Commit is one step of a follower: what it expects the database to hold
// of a session, what it changes, and where it then stands.
type Commit struct {
	ID     string
	Header []byte // the header line (without "\n"): the session's row when it is new

	// What the follower expects: the session's entries now, and its
	// position (nil: none yet). Anything else is ErrMoved.
	ExpectEntries int64
	Expect        *Position

	// Keep, when not negative, cuts the session back to its first Keep
	// entries first: the lines cut are moved to panto_cuts.
	Keep  int64
	Lines [][]byte // entry lines (without "\n") added after
	To    Position // where the follower stands after
}

// Committed is what a commit did.
type Committed struct {
	Entries int64 // entries added
	Cut     int64 // entries moved to panto_cuts
}

// FollowerOpener opens a Follower at a location, within ctx.
type FollowerOpener func(ctx context.Context, location string) (Follower, error)

var followers sync.Map // scheme → FollowerOpener

// RegisterFollower makes the store of scheme (its Register) openable as a
// Follower by OpenFollower; pkg/pgstore registers "postgres".
func RegisterFollower(scheme string, o FollowerOpener) { followers.Store(scheme, o) }

// ErrNotFollower is a location of a store that keeps no follower's
// positions (files, null): push, pull and the followers need a database.
var ErrNotFollower = errors.New("store: not a store that follows files (a database)")

// CanFollowInto reports whether location names a Follower's store (a
// database URL, or libpq's key=value settings), without opening it.
func CanFollowInto(location string) bool {
	_, ok := followerOpener(location)
	return ok
}

// OpenFollower opens the Follower location names, within ctx (a
// connection given up when ctx ends). A location of any other store is
// ErrNotFollower, and nothing is opened.
func OpenFollower(ctx context.Context, location string) (Follower, error) {
	o, ok := followerOpener(location)
	if !ok {
		return nil, ErrNotFollower
	}
	return o(ctx, location)
}

// followerOpener returns the opener of the Follower location names: a
// registered scheme's location written as a URL (scheme://…), or a form
// with no scheme that its backend claims.
func followerOpener(location string) (FollowerOpener, bool) {
	scheme := claimant(location)
	if scheme == "" {
		var url bool
		if scheme, _, url = strings.Cut(location, "://"); !url {
			return nil, false
		}
		if scheme = strings.ToLower(scheme); scheme == "postgresql" {
			scheme = "postgres"
		}
	}
	o, ok := followers.Load(scheme)
	if !ok {
		return nil, false
	}
	return o.(FollowerOpener), true
}
