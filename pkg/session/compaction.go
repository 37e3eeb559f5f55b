package session

import (
	"fmt"
	"strconv"

	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/tidwall/gjson"
)

// The compaction entry (SPEC §13) and its rules live here, once: its
// shape, how its firstKeptEntryId is found on its path, and what the model
// is sent from it on. pkg/store (to append one), internal/replay (what is
// sent), internal/fsck (a firstKeptEntryId on no path), the agent and the
// commands ask this file.

// TypeCompaction is the type of a compaction entry: from it on, the model
// is sent its summary (SummaryMessage), then the entries of its path from
// its firstKeptEntryId on. The entry is of a type the message schema does
// not know (Classify says KindUnknown).
const TypeCompaction = "compaction"

// IsCompaction reports whether a classified line is a compaction entry.
func (l *Line) IsCompaction() bool { return l.Kind == KindUnknown && l.Type == TypeCompaction }

// SummaryIntro begins the message that stands for the compacted part of a
// conversation: the model is sent it, then the summary.
const SummaryIntro = "The conversation before this point was compacted into this summary:\n\n"

// SummaryMessage returns the message line the model is sent in place of
// the messages a compaction summarised: a user message with the summary.
func SummaryMessage(summary string) []byte {
	return TextMessage("user", SummaryIntro+summary)
}

// KeptFrom finds where the conversation a compaction keeps starts on its
// path: at is the compaction's position on the path, id(j) the id of the
// entry at position j < at. It returns the position of the entry
// firstKept names, and true; or, when firstKept is empty or names no
// entry before the compaction on its path, at+1 and false: nothing
// before the compaction is kept (the model is sent its summary and what
// follows it).
func KeptFrom(firstKept string, at int, id func(j int) string) (kept int, onPath bool) {
	if firstKept != "" {
		for j := range at {
			if id(j) == firstKept {
				return j, true
			}
		}
	}
	return at + 1, false
}

// CompactionFields are the members of a compaction entry after its
// timestamp, as JSON (`"summary":…,"firstKeptEntryId":…`): request, when
// not nil, holds the members that say what the summary cost
// (CompactionRequest), written after SPEC §13's fields so panto-cost
// counts that request too.
func CompactionFields(summary, firstKept string, tokensBefore int64, request []byte) []byte {
	f := append(rawjson.AppendString([]byte(`"summary":`), summary), `,"firstKeptEntryId":`...)
	f = rawjson.AppendString(f, firstKept)
	f = append(f, `,"tokensBefore":`...)
	f = strconv.AppendInt(f, max(0, tokensBefore), 10)
	if len(request) > 0 {
		f = append(append(f, ','), request...)
	}
	return f
}

// CompactionRequest returns the members of a compaction entry that say
// what its summary cost, from the reply (an assistant message line) that
// held it, or from a compaction line: its provider, model and usage (left
// out when unknown).
func CompactionRequest(reply []byte) []byte {
	r := gjson.GetManyBytes(reply, "provider", "model", "usage")
	if r[0].Type != gjson.String || r[1].Type != gjson.String {
		return nil
	}
	b := append([]byte(`"provider":`), r[0].Raw...)
	b = append(append(b, `,"model":`...), r[1].Raw...)
	if r[2].IsObject() {
		b = append(append(b, `,"usage":`...), r[2].Raw...)
	}
	return b
}

// CheckCompactionRequest validates the request a compaction line says it
// made (its usage, by SPEC §2's rules for a reply's): nil when it says
// none.
func CheckCompactionRequest(line []byte) error {
	req := CompactionRequest(line)
	if req == nil || !gjson.GetBytes(line, "usage").Exists() {
		return nil
	}
	msg := append(append([]byte(`{"role":"assistant","content":[],`), req...), '}')
	_, _, err := ReadMessage(msg)
	return err
}

// ParseCompaction reads a compaction line, as it travels on a pipe (the
// entry without id, parentId and timestamp), and returns its members after
// the timestamp (CompactionFields).
func ParseCompaction(line []byte) ([]byte, error) {
	if !gjson.ValidBytes(line) {
		return nil, fmt.Errorf("%w: not a JSON object", ErrInvalidMsg)
	}
	r := gjson.GetManyBytes(line, "summary", "firstKeptEntryId", "tokensBefore", "provider", "usage")
	if r[0].Type != gjson.String || r[1].Type != gjson.String || r[1].Str == "" || r[2].Type != gjson.Number || r[2].Int() < 0 {
		return nil, fmt.Errorf("%w: a compaction needs a string summary, a firstKeptEntryId and a whole tokensBefore", ErrInvalidMsg)
	}
	request := CompactionRequest(line)
	if r[3].Exists() && request == nil || r[4].Exists() && !r[4].IsObject() {
		return nil, fmt.Errorf("%w: a compaction's provider and model are strings, its usage an object", ErrInvalidMsg)
	}
	if err := CheckCompactionRequest(line); err != nil {
		return nil, fmt.Errorf("compaction: %w", err)
	}
	return CompactionFields(r[0].Str, r[1].Str, r[2].Int(), request), nil
}
