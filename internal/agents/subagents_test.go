package agents

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestClaudeSubagents: each Task call is tied to its subagent by what the
// log says: the agent id of its result names a subagents/ file; else the
// progress lines of the call; else a file or a sidechain whose first
// prompt is the call's. A call none of these finds has none, and a file
// with no tie is not taken.
func TestClaudeSubagents(t *testing.T) {
	const dir = "testdata/subagents/p"
	const sid = "0a9a8045-53e9-44b1-83fb-aafc6e1f4f0b"
	main, err := os.ReadFile(filepath.Join(dir, sid+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ call, agent, from, has string } // has "": no log
	tmp := t.TempDir()
	// A session with no agentId in its results (an older Claude Code): the
	// file is found by its prompt.
	noIDs := bytes.ReplaceAll(main, []byte(`"agentId":"a1"`), []byte(`"agentId":""`))
	// A call whose prompt no sidechain has: no subagent.
	otherPrompt := bytes.Replace(main, []byte(`"prompt":"Check the docs"`), []byte(`"prompt":"Check the site"`), 1)
	for _, c := range []struct {
		name string
		path string // "" for stdin: no subagents/ directory to look in
		log  []byte
		want []want
	}{
		{"each rule", filepath.Join(dir, sid+".jsonl"), main, []want{
			{"toolu_F", "a1", filepath.Join(dir, sid, "subagents", "agent-a1.jsonl"), "Found 3 tests"},
			{"toolu_P", "p1", "the session's progress lines", "There are **42** lines."},
			{"toolu_S", "", "the session's sidechain lines", "The docs are fine."},
		}},
		{"a file tied by its prompt", filepath.Join(dir, sid+".jsonl"), noIDs, []want{
			{"toolu_F", "a1", filepath.Join(dir, sid, "subagents", "agent-a1.jsonl"), "Found 3 tests"},
			{"toolu_P", "p1", "the session's progress lines", "42"},
			{"toolu_S", "", "the session's sidechain lines", "The docs are fine."},
		}},
		{"stdin: no directory", "-", main, []want{
			{"toolu_F", "a1", "", ""}, // named by its result, nowhere: no log
			{"toolu_P", "p1", "the session's progress lines", "42"},
			{"toolu_S", "", "the session's sidechain lines", "The docs are fine."},
		}},
		{"no prompt matches", filepath.Join(dir, sid+".jsonl"), otherPrompt, []want{
			{"toolu_F", "a1", filepath.Join(dir, sid, "subagents", "agent-a1.jsonl"), "Found 3 tests"},
			{"toolu_P", "p1", "the session's progress lines", "42"},
		}},
		{"the file named is not there", filepath.Join(tmp, sid+".jsonl"), main, []want{
			{"toolu_F", "a1", filepath.Join(tmp, sid, "subagents", "agent-a1.jsonl"), ""},
			{"toolu_P", "p1", "the session's progress lines", "42"},
			{"toolu_S", "", "the session's sidechain lines", "The docs are fine."},
		}},
		{"no Task call", filepath.Join(dir, sid+".jsonl"), bytes.ReplaceAll(main, []byte(`"name":"Task"`), []byte(`"name":"Bash"`)), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			subs, err := ClaudeSubagents(Source{Path: c.path, R: bytes.NewReader(c.log), Size: int64(len(c.log))})
			if err != nil {
				t.Fatal(err)
			}
			if len(subs) != len(c.want) {
				t.Fatalf("%d subagents, want %d", len(subs), len(c.want))
			}
			for i, w := range c.want {
				s := subs[i]
				log, err := s.Read()
				if err != nil {
					t.Fatal(err)
				}
				if s.ToolUseID != w.call || s.AgentID != w.agent || s.From != w.from || !strings.Contains(string(log), w.has) || (w.has == "") != !s.Found || s.Found != (log != nil) {
					t.Errorf("subagent %d: %s %q %q found %v (log has %q: %v), want %+v", i, s.ToolUseID, s.AgentID, s.From, s.Found, w.has, strings.Contains(string(log), w.has), w)
				}
				if bytes.Contains(log, []byte("Something else")) {
					t.Errorf("subagent %d is the file no call names (agent-zz)", i)
				}
				// Each line of a transcript read from the session's lines is
				// one JSON object, as in a file.
				for _, l := range bytes.Split(bytes.TrimSuffix(log, []byte("\n")), []byte("\n")) {
					if s.Found && !isObject(l) {
						t.Errorf("subagent %d: line %q is no JSON object", i, l)
					}
				}
			}
		})
	}
}

// taskSession writes a Claude Code session of n Task calls whose results
// name no agent, and n subagents/ files, each holding one call's prompt,
// named in the reverse order of the calls (hostile #12's shape); it
// returns the session's path.
func taskSession(t testing.TB, dir string, n int) string {
	const sid = "1a9a8045-53e9-44b1-83fb-aafc6e1f4f0b"
	sub := filepath.Join(dir, sid, "subagents")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	u := func(k int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", k) }
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	line(`{"type":"user","uuid":"%s","parentUuid":null,"sessionId":"%s","cwd":"/p","timestamp":"2026-02-10T10:00:00.000Z","message":{"role":"user","content":"go"}}`, u(1), sid)
	p := u(1)
	for i := 0; i < n; i++ {
		a, r := u(10+2*i), u(11+2*i)
		line(`{"type":"assistant","uuid":"%s","parentUuid":"%s","sessionId":"%s","cwd":"/p","timestamp":"2026-02-10T10:00:01.000Z","requestId":"r%d","message":{"id":"m%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t%d","name":"Task","input":{"prompt":"task number %d"}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}}`, a, p, sid, i, i, i, i)
		line(`{"type":"user","uuid":"%s","parentUuid":"%s","sessionId":"%s","cwd":"/p","timestamp":"2026-02-10T10:00:02.000Z","message":{"role":"user","content":[{"tool_use_id":"t%d","type":"tool_result","content":"ok"}]}}`, r, a, sid, i)
		p = r
		f := fmt.Sprintf(`{"type":"user","uuid":"%s","parentUuid":null,"isSidechain":true,"sessionId":"%s","cwd":"/p","timestamp":"2026-02-10T10:00:01.500Z","message":{"role":"user","content":"task number %d"}}`+"\n", u(1_000_000+i), sid, i)
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("agent-%06d.jsonl", n-1-i)), []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, sid+".jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSubagentsByPromptLinear is hostile #12: each call tied by its prompt
// reopened every subagents/ file not taken yet (n calls: n²/2 opens, 1,000
// calls 68 s). Each file's prompt is now read once.
func TestSubagentsByPromptLinear(t *testing.T) {
	const n = 300
	path := taskSession(t, t.TempDir(), n)
	opens := 0
	defer func(f func(string) (*os.File, error)) { openFile = f }(openFile)
	open := openFile
	openFile = func(p string) (*os.File, error) { opens++; return open(p) }
	log, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	subs, err := ClaudeSubagents(Source{Path: path, R: bytes.NewReader(log), Size: int64(len(log))})
	if err != nil {
		t.Fatal(err)
	}
	if len(subs) != n {
		t.Fatalf("%d subagents, want %d", len(subs), n)
	}
	for i, s := range subs {
		if want := fmt.Sprintf("agent-%06d.jsonl", n-1-i); filepath.Base(s.From) != want {
			t.Fatalf("call %d tied to %s, want %s", i, s.From, want)
		}
	}
	if opens > n {
		t.Errorf("%d opens of the subagents' files for %d calls tied by prompt: each file's prompt is read once", opens, n)
	}
}

// TestSubagentsFIFO is hostile #5: a FIFO in subagents/, named by a
// result's agent id or a candidate for a prompt, was opened and waited on
// for ever. It is left out, and said.
func TestSubagentsFIFO(t *testing.T) {
	dir := t.TempDir()
	path := taskSession(t, dir, 3)
	sub := filepath.Join(strings.TrimSuffix(path, ".jsonl"), "subagents")
	fifo := filepath.Join(sub, "agent-zz.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	// A result names the FIFO's agent.
	log, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	log = bytes.Replace(log, []byte(`"content":"ok"}]}}`), []byte(`"content":"ok"}]},"toolUseResult":{"agentId":"zz"}}`), 1)
	done := make(chan struct{})
	var subs []Subagent
	var skipped []string
	go func() {
		defer close(done)
		subs, skipped, err = ClaudeSubagentsSkipped(Source{Path: path, R: bytes.NewReader(log), Size: int64(len(log))})
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		w, _ := os.OpenFile(fifo, os.O_WRONLY, 0) // let the reader go
		w.Close()
		t.Fatal("waited on the FIFO")
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 1 || skipped[0] != fifo {
		t.Errorf("skipped %q, want the FIFO", skipped)
	}
	if len(subs) != 3 || !subs[0].Found || !subs[1].Found || !subs[2].Found || strings.Contains(subs[0].From, "zz") {
		t.Errorf("subagents %+v: want each call tied by its prompt to its file, not the FIFO", subs)
	}
}
