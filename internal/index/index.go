// Package index keeps a small checkpoint of each clean session file in the
// cache directory, so that an append or a listing reads only what was added
// since the last one instead of the whole log (logs only grow at the end).
//
// A checkpoint says: bytes [0, Good) of the file with this device and inode
// were read and are clean (a valid header, no corruption); here are their
// entry ids, the leaf, the active provider/model at the leaf, and what a
// listing shows. It is trusted only while the file is exactly as it was
// when the checkpoint was saved (the last panto writer saves one after its
// append): the same size, modification and change times (a change time no
// user call can set back), and the same last 4 KiB before Good. A file
// changed by anything else, in place or not, is read whole. It is only a
// cache: a missing, stale or unreadable checkpoint means one full read of
// the file, never a wrong answer, and the session file stays the only
// record.
package index

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"

	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
)

// State is the checkpoint of one session file.
type State struct {
	Dev, Ino   uint64
	Size       int64 // the file as the checkpoint was saved: size,
	Mtime      int64 // modification time (ns)
	Ctime      int64 // and change time (ns)
	Good       int64
	Tail       [sha256.Size]byte
	Leaf       string
	Stamp      session.Stamp // active provider/model at the leaf
	StampKnown bool
	Messages   int
	HeaderID   string
	Created    string
	Cwd        string
	LastTime   string
	Title      string // session.TitleOf, as the checkpoint was made
	Prompt     string
	Agent      string
	hexRaw     []byte   // sorted big-endian uint32s, as loaded: the 8-hex ids
	hexNew     []uint32 // sorted: 8-hex ids added since (merged on save)
	otherIDs   []string // sorted: every other id
}

// FromLog makes the checkpoint of a clean, fully scanned log of file f.
func FromLog(l *scan.Log, f *os.File, fi os.FileInfo) *State {
	s := &State{Good: l.Good, Messages: l.Messages, HeaderID: l.Header.ID, Created: l.Header.Timestamp, Cwd: l.Header.Cwd, LastTime: l.LastTime}
	s.Seen(fi)
	s.Title, s.Prompt, s.Agent = session.TitleOf(f, l.Good)
	if leaf := l.Leaf(); leaf >= 0 {
		s.Leaf = l.ID(leaf)
		s.Stamp, s.StampKnown = l.Active(leaf)
	}
	l.EachID(func(id string) { // collected, then sorted once: inserting one by one is quadratic
		if v, ok := session.HexID(id); ok {
			s.hexNew = append(s.hexNew, v)
		} else {
			s.otherIDs = append(s.otherIDs, id)
		}
	})
	slices.Sort(s.hexNew)
	s.hexNew = slices.Compact(s.hexNew)
	slices.Sort(s.otherIDs)
	s.otherIDs = slices.Compact(s.otherIDs)
	s.Tail = tailHash(f, s.Good)
	return s
}

// Seen records what the file system says of the file as the checkpoint
// is made: call it with a stat taken after the last write.
func (s *State) Seen(fi os.FileInfo) {
	s.Dev, s.Ino, s.Size, s.Mtime, s.Ctime = identity(fi)
}

func identity(fi os.FileInfo) (dev, ino uint64, size, mtime, ctime int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino), fi.Size(), fi.ModTime().UnixNano(), Ctime(st).UnixNano()
	}
	return 0, 0, -1, 0, 0 // never matches a file
}

func tailHash(f io.ReaderAt, good int64) [sha256.Size]byte {
	from := max(0, good-4096)
	buf := make([]byte, good-from)
	if _, err := f.ReadAt(buf, from); err != nil && !errors.Is(err, io.EOF) {
		return [sha256.Size]byte{} // never matches a real hash
	}
	return sha256.Sum256(buf)
}

// addID records id, keeping the lists sorted.
func (s *State) addID(id string) {
	if v, ok := session.HexID(id); ok {
		if s.hasHex(v) {
			return
		}
		i, _ := slices.BinarySearch(s.hexNew, v)
		s.hexNew = slices.Insert(s.hexNew, i, v)
		return
	}
	i, found := slices.BinarySearch(s.otherIDs, id)
	if !found {
		s.otherIDs = slices.Insert(s.otherIDs, i, id)
	}
}

// hasHex looks v up among the loaded and the added 8-hex ids.
func (s *State) hasHex(v uint32) bool {
	n := len(s.hexRaw) / 4
	i := sort.Search(n, func(i int) bool { return binary.BigEndian.Uint32(s.hexRaw[4*i:]) >= v })
	if i < n && binary.BigEndian.Uint32(s.hexRaw[4*i:]) == v {
		return true
	}
	_, found := slices.BinarySearch(s.hexNew, v)
	return found
}

// Taken reports whether any line of the file uses id.
func (s *State) Taken(id string) bool {
	if v, ok := session.HexID(id); ok {
		return s.hasHex(v)
	}
	_, found := slices.BinarySearch(s.otherIDs, id)
	return found
}

// Catch reads the lines of f between the checkpoint and size, as a full
// scan would, and moves the checkpoint past the complete ones. It returns
// false when it meets something only a full scan can judge (a corrupt line,
// a header): the caller then scans the whole file.
func (s *State) Catch(f io.ReaderAt, size int64) bool {
	if size <= s.Good {
		return size == s.Good
	}
	rd := scan.NewReader(io.NewSectionReader(f, s.Good, size-s.Good), s.Good)
	for {
		raw, _, term, err := rd.Next()
		if err == io.EOF || (err == nil && !term) {
			break // an unterminated tail is not written yet
		}
		if err != nil {
			return false
		}
		c := session.Classify(raw)
		switch c.Kind {
		case session.KindCorrupt, session.KindHeader:
			return false
		case session.KindInvalid:
			if c.Type == "session" {
				return false
			}
			if c.ID != "" {
				s.addID(c.ID)
			}
		default:
			if c.IsNode() && !s.Taken(c.ID) {
				s.addNode(&c)
			}
		}
		s.Good = rd.Offset()
	}
	s.Tail = tailHash(f, s.Good)
	return true
}

// addNode makes the entry c the new leaf.
func (s *State) addNode(c *session.Line) {
	if c.ParentID != s.Leaf || s.Leaf == "" {
		s.StampKnown = false // a branch off an earlier entry: its stamp is unknown here
	}
	if st, ok := c.UserStamp(); ok {
		s.Stamp, s.StampKnown = st, true
	}
	if c.Counted() {
		s.Messages++
	}
	if t := c.Activity(); t != "" {
		s.LastTime = t
	}
	s.addID(c.ID)
	s.Leaf = c.ID
}

// Path is where the checkpoint of the session file at path is kept in dir.
func Path(dir, path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".ckpt")
}

// Dir is the cache directory of checkpoints: $XDG_CACHE_HOME/panto/index,
// else $HOME/.cache/panto/index; "" when neither is set (no cache).
func Dir(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "panto", "index")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "panto", "index")
	}
	return ""
}

const magic = "panto-index 3\n"

// Load returns the checkpoint of the file f (at path, with info fi) when one
// is kept in dir and still describes the file; nil otherwise.
func Load(dir, path string, f io.ReaderAt, fi os.FileInfo) *State {
	if dir == "" {
		return nil
	}
	b, err := os.ReadFile(Path(dir, path))
	if err != nil {
		return nil
	}
	s, ok := decode(b)
	if !ok {
		return nil
	}
	dev, ino, size, mtime, ctime := identity(fi)
	if s.Dev != dev || s.Ino != ino || s.Size != size || s.Mtime != mtime || s.Ctime != ctime || size < s.Good || tailHash(f, s.Good) != s.Tail {
		return nil
	}
	return s
}

// Save writes the checkpoint to dir atomically (a cache needs no fsync). A
// failure only costs the next reader a full scan, so callers may ignore it.
func (s *State) Save(dir, path string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".ckpt-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(s.encode())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), Path(dir, path))
}

// Forget removes the checkpoint of path, after a cut or a rewrite.
func Forget(dir, path string) {
	if dir != "" {
		os.Remove(Path(dir, path))
	}
}

func (s *State) encode() []byte {
	b := []byte(magic)
	b = binary.AppendUvarint(b, s.Dev)
	b = binary.AppendUvarint(b, s.Ino)
	b = binary.AppendUvarint(b, uint64(s.Good))
	b = binary.AppendUvarint(b, uint64(s.Size))
	b = binary.AppendUvarint(b, uint64(s.Mtime))
	b = binary.AppendUvarint(b, uint64(s.Ctime))
	b = append(b, s.Tail[:]...)
	known := uint64(0)
	if s.StampKnown {
		known = 1
	}
	b = binary.AppendUvarint(b, known)
	b = binary.AppendUvarint(b, uint64(s.Messages))
	for _, str := range []string{s.Leaf, s.Stamp.Provider, s.Stamp.Model, s.HeaderID, s.Created, s.Cwd, s.LastTime, s.Title, s.Prompt, s.Agent} {
		b = appendString(b, str)
	}
	b = binary.AppendUvarint(b, uint64(len(s.hexRaw)/4+len(s.hexNew)))
	raw, added := s.hexRaw, s.hexNew // merge the two sorted lists
	for len(raw) > 0 || len(added) > 0 {
		if len(added) == 0 || len(raw) > 0 && binary.BigEndian.Uint32(raw) < added[0] {
			k := 4
			if len(added) == 0 {
				k = len(raw)
			} else {
				k = 4 * sort.Search(len(raw)/4, func(i int) bool { return binary.BigEndian.Uint32(raw[4*i:]) >= added[0] })
			}
			b = append(b, raw[:k]...)
			raw = raw[k:]
			continue
		}
		b = binary.BigEndian.AppendUint32(b, added[0])
		added = added[1:]
	}
	b = binary.AppendUvarint(b, uint64(len(s.otherIDs)))
	for _, str := range s.otherIDs {
		b = appendString(b, str)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

type decoder struct {
	b  []byte
	ok bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.ok = false
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if !d.ok || uint64(len(d.b)) < n {
		d.ok = false
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string { return string(d.bytes(d.uvarint())) }

func decode(b []byte) (*State, bool) {
	if !bytes.HasPrefix(b, []byte(magic)) {
		return nil, false
	}
	d := &decoder{b: b[len(magic):], ok: true}
	s := &State{}
	s.Dev, s.Ino, s.Good = d.uvarint(), d.uvarint(), int64(d.uvarint())
	s.Size, s.Mtime, s.Ctime = int64(d.uvarint()), int64(d.uvarint()), int64(d.uvarint())
	copy(s.Tail[:], d.bytes(sha256.Size))
	s.StampKnown = d.uvarint() == 1
	s.Messages = int(d.uvarint())
	s.Leaf, s.Stamp.Provider, s.Stamp.Model = d.string(), d.string(), d.string()
	s.HeaderID, s.Created, s.Cwd, s.LastTime = d.string(), d.string(), d.string(), d.string()
	s.Title, s.Prompt, s.Agent = d.string(), d.string(), d.string()
	n := d.uvarint()
	if n > uint64(len(d.b))/4 {
		return nil, false
	}
	raw := d.bytes(4 * n)
	if !d.ok {
		return nil, false
	}
	for i := 4; i < len(raw); i += 4 { // binary search needs them sorted and distinct
		if binary.BigEndian.Uint32(raw[i-4:]) >= binary.BigEndian.Uint32(raw[i:]) {
			return nil, false
		}
	}
	s.hexRaw = raw
	m := d.uvarint()
	for range m {
		if !d.ok {
			break
		}
		s.otherIDs = append(s.otherIDs, d.string())
	}
	return s, d.ok && len(d.b) == 0
}
