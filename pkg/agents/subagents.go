package agents

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/panto-dev/panto/pkg/scan"
	"github.com/tidwall/gjson"
)

// A Subagent is a conversation that a tool call of a Claude Code session
// started (a Task or Agent call), as Claude Code's own lines: a page shows
// it under the call.
type Subagent struct {
	ToolUseID string // the call that started it
	AgentID   string // Claude Code's id of the subagent, when the log says it
	From      string // where it was read: its subagents/ file, or the session's progress or sidechain lines
	// Found says whether its transcript is there to Read; when it is
	// not, From is the file it would be in.
	Found bool
	read  func() ([]byte, error)
}

// Read returns the subagent's transcript, lines of Claude Code's format,
// read now (from its file, or from the session's lines it is in): a
// session's subagents are not all held at once.
func (s Subagent) Read() ([]byte, error) {
	if s.read == nil {
		return nil, nil
	}
	return s.read()
}

// lines are pieces of a session's bytes, each a line of a subagent's
// transcript once a newline is put after it.
type lines struct {
	r      io.ReaderAt
	pieces []span
	n      int
}

func (l *lines) add(off int64, n int) {
	if l.n+n < maxSubagentLog {
		l.pieces = append(l.pieces, span{off, n})
		l.n += n + 1
	}
}

func (l *lines) read() ([]byte, error) {
	b := make([]byte, 0, l.n)
	for _, p := range l.pieces {
		b = b[:len(b)+p.n]
		if _, err := l.r.ReadAt(b[len(b)-p.n:], p.off); err != nil {
			return nil, err
		}
		b = append(b, '\n')
	}
	return b, nil
}

// subagentTools are the names of Claude Code's tool that starts a
// subagent (Task, renamed Agent).
var subagentTools = map[string]bool{"Task": true, "Agent": true}

// maxSubagentLog bounds what is read of one subagent's transcript.
const maxSubagentLog = 256 << 20

// ClaudeSubagents finds the subagent conversations of a Claude Code
// transcript, by what the log says, for each Task (or Agent) call in
// order:
//
//  1. the agent id of its result (the result line's toolUseResult.agentId,
//     or the agentId of the progress lines of the call) names a file
//     subagents/agent-ID.jsonl in the directory named after the session,
//     beside its file: that file;
//  2. else the progress lines whose parentToolUseID is the call (Claude
//     Code 2 records the subagent's messages there): their messages;
//  3. else a subagents/ file, or a sidechain of this file (lines with
//     "isSidechain":true, from a root with no parent), not taken yet whose
//     first prompt is the call's prompt.
//
// A call none of these finds has no subagent; when its result names an
// agent all the same, it is returned with no Log, and From the file it
// would be in ("" when the session was read from stdin).
func ClaudeSubagents(src Source) ([]Subagent, error) {
	type call struct{ id, prompt string }
	type chain struct {
		prompt string
		log    lines
		used   bool
	}
	var (
		calls     []call
		seen      = map[string]bool{}   // the calls met
		agentOf   = map[string]string{} // call id → agent id
		progress  = map[string]*lines{} // call id → the subagent's lines, in the progress lines' data
		chains    []*chain
		chainOf   = map[string]*chain{} // a sidechain line's uuid → its chain
		sessionID string
	)
	lr := scan.NewReader(io.NewSectionReader(src.R, 0, src.Size), 0)
	for {
		raw, off, _, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		// Most lines are none of these, and are not parsed.
		first := sessionID == "" && bytes.Contains(raw, []byte(`"sessionId"`))
		sidechain := bytes.Contains(raw, []byte(`"isSidechain":true`))
		task := bytes.Contains(raw, []byte(`"tool_use"`)) && (bytes.Contains(raw, []byte(`"Task"`)) || bytes.Contains(raw, []byte(`"Agent"`)))
		result := bytes.Contains(raw, []byte(`"toolUseResult"`)) && bytes.Contains(raw, []byte(`"agentId"`))
		prog := bytes.Contains(raw, []byte(`"agent_progress"`))
		if !first && !sidechain && !task && !result && !prog || !gjson.ValidBytes(raw) {
			continue
		}
		if first {
			sessionID = gjson.GetBytes(raw, "sessionId").Str
		}
		if !sidechain && task {
			gjson.GetBytes(raw, "message.content").ForEach(func(_, b gjson.Result) bool {
				if id := b.Get("id").Str; b.Get("type").Str == "tool_use" && subagentTools[b.Get("name").Str] && !seen[id] {
					seen[id] = true // a response's copies repeat its calls
					calls = append(calls, call{id, b.Get("input.prompt").Str})
				}
				return true
			})
		}
		if result {
			if a := gjson.GetBytes(raw, "toolUseResult.agentId").Str; a != "" {
				gjson.GetBytes(raw, "message.content").ForEach(func(_, b gjson.Result) bool {
					if b.Get("type").Str == "tool_result" {
						agentOf[b.Get("tool_use_id").Str] = a
					}
					return true
				})
			}
		}
		if prog {
			l := gjson.ParseBytes(raw)
			d := l.Get("data")
			if tid := l.Get("parentToolUseID").Str; d.Get("type").Str == "agent_progress" && tid != "" {
				if m := gjson.GetBytes(raw, "data.message"); m.IsObject() && m.Index > 0 && m.Index+len(m.Raw) <= len(raw) && string(raw[m.Index:m.Index+len(m.Raw)]) == m.Raw {
					if progress[tid] == nil {
						progress[tid] = &lines{r: src.R}
					}
					progress[tid].add(off+int64(m.Index), len(m.Raw))
				}
				if a := d.Get("agentId").Str; a != "" && agentOf[tid] == "" {
					agentOf[tid] = a
				}
			}
		}
		if sidechain {
			l := gjson.ParseBytes(raw)
			c := chainOf[l.Get("parentUuid").Str]
			if c == nil || l.Get("parentUuid").Type != gjson.String {
				c = &chain{}
				chains = append(chains, c)
			}
			if c.prompt == "" && l.Get("type").Str == "user" {
				c.prompt = promptOf(l.Get("message.content"))
			}
			c.log.r = src.R
			c.log.add(off, len(raw))
			if u := l.Get("uuid").Str; u != "" {
				chainOf[u] = c
			}
		}
	}
	if len(calls) == 0 {
		return nil, nil
	}
	files := subagentFiles(src.Path, sessionID)
	var out []Subagent
	for _, c := range calls {
		s := Subagent{ToolUseID: c.id, AgentID: agentOf[c.id]}
		if f := files[s.AgentID]; s.AgentID != "" && f != nil && !f.used {
			s.From, s.read, f.used = f.path, f.log, true
		} else if p := progress[c.id]; p != nil {
			s.From, s.read = "the session's progress lines", p.read
		} else if c.prompt != "" {
			for _, a := range slices.Sorted(maps.Keys(files)) {
				if f := files[a]; !f.used && f.prompt() == c.prompt {
					s.From, s.read, f.used = f.path, f.log, true
					if s.AgentID == "" {
						s.AgentID = f.agent
					}
					break
				}
			}
			for _, ch := range chains {
				if s.read == nil && !ch.used && ch.prompt == c.prompt {
					s.From, s.read, ch.used = "the session's sidechain lines", ch.log.read, true
				}
			}
		}
		s.Found = s.read != nil
		if !s.Found && s.AgentID != "" {
			s.From = subagentPath(src.Path, s.AgentID)
		}
		if s.Found || s.AgentID != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// subagentFile is a subagents/agent-ID.jsonl file.
type subagentFile struct {
	path, agent string
	used        bool
}

// log reads the file, a regular one, to at most maxSubagentLog bytes.
func (f *subagentFile) log() ([]byte, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", f.path)
	}
	return io.ReadAll(io.LimitReader(fh, maxSubagentLog))
}

// prompt is the first user prompt of the file, read to its first user
// line only.
func (f *subagentFile) prompt() string {
	fh, err := os.Open(f.path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	lr := scan.NewReader(fh, 0)
	for {
		raw, _, _, err := lr.Next()
		if err != nil {
			return ""
		}
		if l := gjson.ParseBytes(raw); l.Get("type").Str == "user" {
			return promptOf(l.Get("message.content"))
		}
	}
}

// subagentPath is where the transcript of agent a of the session at path
// would be: "" for stdin.
func subagentPath(path, a string) string {
	if path == "" || path == "-" {
		return ""
	}
	return filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents", "agent-"+a+".jsonl")
}

// subagentFiles lists the subagents/ files of the session at path: in the
// directory named after the file (Claude Code names it after the session
// id, which is the file's name), by agent id.
func subagentFiles(path, sessionID string) map[string]*subagentFile {
	if path == "" || path == "-" {
		return nil
	}
	dir, base := filepath.Dir(path), strings.TrimSuffix(filepath.Base(path), ".jsonl")
	out := map[string]*subagentFile{}
	for _, name := range []string{base, sessionID} {
		if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
			continue
		}
		sub := filepath.Join(dir, name, "subagents")
		des, _ := os.ReadDir(sub) // its names as they are: no glob to escape
		for _, de := range des {
			n := de.Name()
			if !strings.HasPrefix(n, "agent-") || !strings.HasSuffix(n, ".jsonl") {
				continue
			}
			if a := strings.TrimSuffix(strings.TrimPrefix(n, "agent-"), ".jsonl"); out[a] == nil {
				out[a] = &subagentFile{path: filepath.Join(sub, n), agent: a}
			}
		}
	}
	return out
}

// promptOf is a message's text: a string, or its first text block.
func promptOf(content gjson.Result) string {
	if content.Type == gjson.String {
		return content.Str
	}
	t := ""
	content.ForEach(func(_, b gjson.Result) bool {
		if b.Get("type").Str == "text" {
			t = b.Get("text").Str
			return false
		}
		return true
	})
	return t
}
