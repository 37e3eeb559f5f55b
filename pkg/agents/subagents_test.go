package agents

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
