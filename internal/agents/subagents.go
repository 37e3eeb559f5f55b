package agents

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

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
	subs, _, err := ClaudeSubagentsSkipped(src)
	return subs, err
}

// ClaudeSubagentsSkipped is ClaudeSubagents, and also says which files of
// the session's subagents/ directory were left out as no regular file (a
// FIFO named agent-X.jsonl is never opened: it would wait for a writer).
func ClaudeSubagentsSkipped(src Source) ([]Subagent, []string, error) {
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
			return nil, nil, err
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
		return nil, nil, nil
	}
	files, skipped := subagentFiles(src.Path, sessionID)
	// The files by their first prompt, each read once, when a call is
	// first tied by its prompt (each list in the order of the agent ids;
	// next[p] is where its first file not taken yet may be).
	var byPrompt map[string][]*subagentFile
	next := map[string]int{}
	var out []Subagent
	for _, c := range calls {
		s := Subagent{ToolUseID: c.id, AgentID: agentOf[c.id]}
		if f := files[s.AgentID]; s.AgentID != "" && f != nil && !f.used {
			s.From, s.read, f.used = f.path, f.log, true
		} else if p := progress[c.id]; p != nil {
			s.From, s.read = "the session's progress lines", p.read
		} else if c.prompt != "" {
			if byPrompt == nil {
				byPrompt = map[string][]*subagentFile{}
				for _, a := range slices.Sorted(maps.Keys(files)) {
					if p := files[a].prompt(); p != "" {
						byPrompt[p] = append(byPrompt[p], files[a])
					}
				}
			}
			list := byPrompt[c.prompt]
			i := next[c.prompt]
			for i < len(list) && list[i].used {
				i++
			}
			next[c.prompt] = i
			if i < len(list) {
				f := list[i]
				s.From, s.read, f.used = f.path, f.log, true
				if s.AgentID == "" {
					s.AgentID = f.agent
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
	return out, skipped, nil
}

// subagentFile is a subagents/agent-ID.jsonl file.
type subagentFile struct {
	path, agent string
	used        bool
}

// openFile opens a subagent's file without waiting (a test counts the
// opens through it).
var openFile = func(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// open opens the file, a regular one: it is opened without waiting (a
// FIFO put in its place since it was listed opens at once, and is refused).
func (f *subagentFile) open() (*os.File, error) {
	fh, err := openFile(f.path)
	if err != nil {
		return nil, err
	}
	if fi, err := fh.Stat(); err != nil || !fi.Mode().IsRegular() {
		fh.Close()
		return nil, fmt.Errorf("%s: not a regular file", f.path)
	}
	return fh, nil
}

// log reads the file, a regular one, to at most maxSubagentLog bytes.
func (f *subagentFile) log() ([]byte, error) {
	fh, err := f.open()
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return io.ReadAll(io.LimitReader(fh, maxSubagentLog))
}

// prompt is the first user prompt of the file, read to its first user
// line only.
func (f *subagentFile) prompt() string {
	fh, err := f.open()
	if err != nil {
		return ""
	}
	defer fh.Close()
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
// id, which is the file's name), by agent id; and the paths of those that
// are no regular file (followed through links), left out.
func subagentFiles(path, sessionID string) (map[string]*subagentFile, []string) {
	if path == "" || path == "-" {
		return nil, nil
	}
	var skipped []string
	dir, base := filepath.Dir(path), strings.TrimSuffix(filepath.Base(path), ".jsonl")
	out := map[string]*subagentFile{}
	for i, name := range []string{base, sessionID} {
		if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." || i == 1 && name == base {
			continue
		}
		sub := filepath.Join(dir, name, "subagents")
		des, _ := os.ReadDir(sub) // its names as they are: no glob to escape
		for _, de := range des {
			n := de.Name()
			if !strings.HasPrefix(n, "agent-") || !strings.HasSuffix(n, ".jsonl") {
				continue
			}
			a := strings.TrimSuffix(strings.TrimPrefix(n, "agent-"), ".jsonl")
			if out[a] != nil {
				continue
			}
			p := filepath.Join(sub, n)
			if t := de.Type(); t&fs.ModeSymlink != 0 {
				if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
					if err == nil { // a dangling link is not there, as a file not there
						skipped = append(skipped, p)
					}
					continue
				}
			} else if !t.IsRegular() {
				skipped = append(skipped, p)
				continue
			}
			out[a] = &subagentFile{path: p, agent: a}
		}
	}
	return out, skipped
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
