package replay

import (
	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/pkg/session"
)

// SummaryIntro begins the message that stands for the compacted part of a
// conversation (session.SummaryIntro).
const SummaryIntro = session.SummaryIntro

// SummaryMessage returns the message line the model is sent in place of
// the messages a compaction summarised (session.SummaryMessage).
func SummaryMessage(summary string) []byte { return session.SummaryMessage(summary) }

// Compaction is a compaction entry (SPEC §13): from it on, the model is
// sent its summary and then the entries from FirstKeptEntryID on.
type Compaction struct {
	Node             int32  `json:"-"`
	ID               string `json:"id"`
	Summary          string `json:"-"`
	FirstKeptEntryID string `json:"firstKeptEntryId"`
	TokensBefore     int64  `json:"tokensBefore"`
	// Kept is the position in the path of the first kept entry; when
	// FirstKeptEntryID names no earlier entry of the path (or is empty),
	// the position after the compaction entry: nothing before it is kept.
	Kept int `json:"-"`
	// KeptOnPath says that FirstKeptEntryID names an earlier entry of the path.
	KeptOnPath bool `json:"keptOnPath"`
}

// LastCompaction returns the last compaction entry of path, or nil when
// the path has none. It reads back no line in a session never compacted.
func (s *Session) LastCompaction(path []int32) (*Compaction, error) {
	if s.Log.Unknown[session.TypeCompaction] == 0 {
		return nil, nil
	}
	for k := len(path) - 1; k >= 0; k-- {
		c, err := s.compactionAt(path[k])
		if err != nil {
			return nil, err
		}
		if c == nil {
			continue
		}
		c.Kept, c.KeptOnPath = session.KeptFrom(c.FirstKeptEntryID, k, func(j int) string { return s.Log.ID(path[j]) })
		return c, nil
	}
	return nil, nil
}

// compactionAt returns node i as a compaction entry, or nil when it is
// none (Kept and KeptOnPath unset: they belong to a path).
func (s *Session) compactionAt(i int32) (*Compaction, error) {
	if s.Log.Nodes[i].Kind != session.KindUnknown {
		return nil, nil
	}
	line, err := s.Line(i)
	if err != nil || rawjson.Str(session.Field(line, "type")) != session.TypeCompaction {
		return nil, err
	}
	c := &Compaction{Node: i, ID: s.Log.ID(i),
		Summary:          rawjson.Str(session.Field(line, "summary")),
		FirstKeptEntryID: rawjson.Str(session.Field(line, "firstKeptEntryId")),
	}
	c.TokensBefore, _ = rawjson.Int(session.Field(line, "tokensBefore"))
	return c, nil
}

// Sent splits path into what the model is sent of it (SPEC §13). Without
// a compaction: every message of the path, in pre. With one (the last of
// the path): the system messages before its first kept entry in pre, then
// its summary (c), then the messages from the first kept entry on in post.
func (s *Session) Sent(path []int32) (pre []int32, c *Compaction, post []int32, err error) {
	if c, err = s.LastCompaction(path); err != nil {
		return nil, nil, nil, err
	}
	kept := len(path)
	if c != nil {
		kept = c.Kept
	}
	for k, i := range path {
		n := &s.Log.Nodes[i]
		switch {
		case n.Kind != session.KindMessage:
		case k >= kept:
			post = append(post, i)
		case c == nil || n.Role == session.System:
			pre = append(pre, i)
		}
	}
	return pre, c, post, nil
}

// EachSent calls fn with each message line the model is sent of path, in
// order (see Sent): i is the message's node, or -1 for a summary.
func (s *Session) EachSent(path []int32, fn func(i int32, msg []byte) error) error {
	pre, c, post, err := s.Sent(path)
	if err != nil {
		return err
	}
	each := func(nodes []int32) error {
		return s.EachLine(nodes, func(i int32, line []byte) error { return fn(i, s.Log.Nodes[i].Message(line)) })
	}
	if err := each(pre); err != nil || c == nil {
		return err
	}
	if err := fn(-1, SummaryMessage(c.Summary)); err != nil {
		return err
	}
	return each(post)
}
