// Package catalog finds session files: the sessions of a project, of every
// project, the newest one, and one by id prefix (SPEC §4).
package catalog

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/panto-dev/panto/internal/index"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// Files returns the session files directly in dir, links followed. A
// missing dir has none.
func Files(dir string) ([]string, error) { return walkFiles(dir, 0) }

// AllFiles returns the session files of every project under base: the
// files of its directories, links to directories followed.
func AllFiles(base string) ([]string, error) {
	files, err := walkFiles(base, 1)
	if err != nil {
		return nil, err
	}
	out := files[:0] // a file directly in base belongs to no project
	for _, f := range files {
		if filepath.Dir(f) != filepath.Clean(base) {
			out = append(out, f)
		}
	}
	return out, nil
}

// Describe reads one session file. With a cache directory it reads only
// what was added since its checkpoint, and leaves a checkpoint of a clean
// file for the next time.
//
// What is not a regular file (a FIFO named *.jsonl, say) is ErrNotRegular,
// found without waiting on it.
func Describe(path, cacheDir string) (store.Summary, error) {
	s := store.Summary{Path: path, ID: IDFromPath(path)}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return s, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return s, err
	}
	if !fi.Mode().IsRegular() {
		return s, fmt.Errorf("%w: %s", ErrNotRegular, path)
	}
	s.Size, s.Modified = fi.Size(), fi.ModTime().UTC()
	st := index.Load(cacheDir, path, f, fi)
	if st == nil || !st.Catch(f, fi.Size()) {
		l, err := scan.Scan(io.NewSectionReader(f, 0, s.Size), scan.ScanOptions{}) // sized: small files skip the parallel scan
		if err != nil {
			return s, err
		}
		if problem := damage(l); problem != "" {
			s.Problem = problem
			st = &index.State{HeaderID: l.Header.ID, Created: l.Header.Timestamp, Cwd: l.Header.Cwd, Messages: l.Messages, LastTime: l.LastTime}
			st.Title, st.Prompt, st.Agent = session.TitleOf(f, s.Size)
		} else {
			st = index.FromLog(l, f, fi)
			st.Save(cacheDir, path) // a cache: failing to save costs a full read next time
		}
	}
	if st.Agent == "" || st.Agent == "panto" && st.Prompt == "" { // no title yet: a prompt may have come since
		st.Title, st.Prompt, st.Agent = session.TitleOf(f, s.Size)
	}
	s.Cwd, s.Messages, s.Title, s.Prompt, s.Agent = st.Cwd, st.Messages, st.Title, st.Prompt, st.Agent
	if s.ID == "" {
		s.ID = st.HeaderID
	}
	if t, err := time.Parse(time.RFC3339Nano, st.Created); err == nil {
		s.Created = t.UTC()
	} else if u, err := uuid.Parse(s.ID); err == nil && u.Version() == 7 {
		sec, nsec := u.Time().UnixTime()
		s.Created = time.Unix(sec, nsec).UTC()
	}
	// The last entry's time, unless it lies ahead of the clock (written by
	// a machine whose clock was wrong): the file's time is more plausible.
	if t, err := time.Parse(time.RFC3339Nano, st.LastTime); err == nil && t.Before(time.Now().Add(futureSlack)) {
		s.Modified = t.UTC()
	} else if s.Agent != "" && s.Agent != "panto" && !s.Created.IsZero() && st.LastTime == "" {
		// An import holding no message: its file's time is when it was
		// imported; its log's last activity is its header's time.
		s.Modified = s.Created
	}
	return s, nil
}

// futureSlack is how far ahead of this clock a timestamp may be before it
// is taken for a wrong clock.
const futureSlack = 5 * time.Minute

// damage names what keeps a scanned file from being clean, or "".
func damage(l *scan.Log) string {
	switch {
	case !l.HeaderOK:
		return "no valid header"
	case l.Damage().Verdict == scan.Damaged:
		return l.Damage().At.String()
	}
	return ""
}

// List describes files, newest activity first (ties: newest id first).
// A file that is not a regular file is left out and given to skip.
func List(files []string, cacheDir string, skip func(error)) ([]store.Summary, error) {
	out := make([]store.Summary, 0, len(files))
	for _, p := range files {
		s, err := Describe(p, cacheDir)
		if errors.Is(err, ErrNotRegular) {
			skip(err)
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	store.SortNewest(out)
	return out, nil
}

// ShortLen is the shortest id prefix length, at least 8, at which every id
// of ids is told apart from the others.
func ShortLen(ids []string) int {
	if n, ok := shortUUIDs(ids); ok {
		return n
	}
	s := slices.Clone(ids)
	slices.Sort(s)
	n := 8
	for i := 1; i < len(s); i++ {
		c := 0
		for c < len(s[i]) && c < len(s[i-1]) && s[i][c] == s[i-1][c] {
			c++
		}
		n = max(n, c+1)
	}
	return n
}

// shortUUIDs is ShortLen for ids that are all UUIDs in canonical form (as
// session ids are): sorted as 128-bit numbers, not strings, ten times
// faster for a listing of thousands. False when one is not.
func shortUUIDs(ids []string) (int, bool) {
	type u128 struct{ hi, lo uint64 }
	v := make([]u128, len(ids))
	for i, id := range ids {
		u, err := uuid.Parse(id)
		if err != nil || len(id) != 36 || id != u.String() {
			return 0, false
		}
		v[i] = u128{binary.BigEndian.Uint64(u[:8]), binary.BigEndian.Uint64(u[8:])}
	}
	slices.SortFunc(v, func(a, b u128) int {
		if c := cmp.Compare(a.hi, b.hi); c != 0 {
			return c
		}
		return cmp.Compare(a.lo, b.lo)
	})
	same := 0 // the most leading hex digits two ids share
	for i := 1; i < len(v); i++ {
		d := bits.LeadingZeros64(v[i].hi^v[i-1].hi) / 4
		if d == 16 {
			d += bits.LeadingZeros64(v[i].lo^v[i-1].lo) / 4
		}
		same = max(same, d)
	}
	// Digits to characters: hyphens follow the 8th, 12th, 16th and 20th
	// digits.
	chars := same + 1
	for _, h := range []int{8, 12, 16, 20} {
		if same >= h {
			chars++
		}
	}
	return max(8, chars), true
}

// Resolve returns the file among files whose session id starts with prefix.
func Resolve(files []string, prefix string) (string, error) {
	ids := make([]string, len(files))
	for i, p := range files {
		if ids[i] = IDFromPath(p); ids[i] == "" {
			ids[i] = strings.TrimSuffix(filepath.Base(p), ".jsonl")
		}
	}
	return store.Pick(prefix, ids, files)
}
