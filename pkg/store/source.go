package store

import (
	"fmt"
	"io"

	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
)

// CheckSource reads the session src holds and refuses what no store may
// receive (SPEC §10: what comes from another store is input): no valid
// header, an id that is not a UUID, a newer format version, damage before
// its end, a repeated entry id, or an entry whose parent is itself or
// comes after it (a parent cycle, which would make every walk up the tree
// endless). A torn tail is left out of what it reads (l.Good). what names
// the source in errors.
func CheckSource(src Source, what string) (*scan.Log, error) {
	l, err := scan.Scan(io.NewSectionReader(src, 0, src.Size()), scan.ScanOptions{})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	switch {
	case l.Size == 0:
		return nil, fmt.Errorf("%w: %s is empty (no session header)", ErrNeedsFsck, what)
	case !l.HeaderOK:
		return nil, fmt.Errorf("%w: %s has no valid session header", ErrNeedsFsck, what)
	case !session.IsUUID(l.Header.ID):
		return nil, fmt.Errorf("%w: %s: the session id %q is not a UUID", ErrNeedsFsck, what, l.Header.ID)
	case l.Header.Version > session.Version:
		return nil, fmt.Errorf("%w: %s is format version %d", ErrNewerVersion, what, l.Header.Version)
	case l.Damage().Verdict == scan.Damaged:
		return nil, fmt.Errorf("%w: %s is damaged before its end", ErrNeedsFsck, what)
	case len(l.DupIDs) > 0:
		return nil, fmt.Errorf("%w: %s repeats entry id %s", ErrNeedsFsck, what, l.DupIDs[0].ID)
	}
	// A parent that names no earlier entry is dangling (a warning of
	// panto-fsck) unless it names the entry itself or a later one: a cycle.
	for _, d := range l.Dangling {
		i := l.Lookup(d.ID)
		if i < 0 {
			continue
		}
		n := l.Nodes[i]
		line := make([]byte, n.Len)
		if _, err := src.ReadAt(line, n.Off); err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
		if p := session.Classify(line).ParentID; p != "" && l.Taken(p) {
			return nil, fmt.Errorf("%w: %s: line %d: entry %s has parent %s, which is itself or a later entry (a parent cycle)", ErrNeedsFsck, what, d.Line, d.ID, p)
		}
	}
	return l, nil
}
