package agents

import (
	"strings"
	"testing"
)

// TestRegistry holds the table to what the commands rely on: one row per
// format and per name, each told by content (a Gemini CLI chat's first
// line, which has Claude Code's sessionId, is Gemini's), each agent's
// places from its own variable.
func TestRegistry(t *testing.T) {
	names, formats := map[string]bool{}, map[Format]bool{}
	for _, a := range Agents() {
		if names[a.Name] || formats[a.Format] {
			t.Errorf("%s: a second row for its name or format", a.Name)
		}
		names[a.Name], formats[a.Format] = true, true
		if a.Format.String() != a.Name || a.Format.Name() != a.Noun || Of(a.Format) != a || Named(a.Name) != a {
			t.Errorf("%s: the row is not found by its format and name", a.Name)
		}
		if a.Line == nil && a.Doc == nil && a.Magic == nil {
			t.Errorf("%s: no way to tell its logs", a.Name)
		}
		if a.Reads() && (a.Looked == nil || len(a.Env) == 0) {
			t.Errorf("%s: read, with no default place", a.Name)
		}
	}
	for _, c := range []struct {
		line string
		want Format
	}{
		{`{"sessionId":"faff42ab-6ea5-4f78-b8c4-f7dd6272af08","projectHash":"7e89","startTime":"2026-01-10T02:08:26.108Z","lastUpdated":"2026-01-10T02:08:26.108Z","kind":"main"}`, Gemini},
		{`{"type":"session.start","data":{"sessionId":"s"},"id":"7354df27-b628-454b-8c94-7bb349e781dd","timestamp":"2026-02-16T13:34:54.023Z","parentId":null}`, Copilot},
		{`{"role":"user","message":{"content":[{"type":"text","text":"hi"}]}}`, Cursor},
		{`{"parentUuid":null,"sessionId":"s","type":"user"}`, Claude},
	} {
		if got := Detect([]byte(c.line)); got != c.want {
			t.Errorf("Detect(%s) = %v, want %v", c.line, got, c.want)
		}
	}
	for _, c := range []struct {
		doc  string
		want Format
	}{
		{"{\n  \"sessionId\": \"faff42ab\",\n  \"projectHash\": \"7e89\",\n  \"messages\": [\n    {\"id\": \"x\", \"type\": \"user\"", Gemini},
		{"{\n  \"session_id\": \"a9\",\n  \"response\": \"" + strings.Repeat("x", headLook) + "\"", GeminiStats},
		{"{\"v\":3,\"id\":\"T-5d2c8a1e\",\"created\":1,\"messages\":[]}", Amp},
		{"{\"usageLedger\":{}}", Amp},
		{"{\"name\":\"pkg\",\"version\":\"1.0.0\"}", Unknown},
		{"[1,2]", Unknown},
	} {
		if got := wholeFormat([]byte(c.doc)); got != c.want {
			t.Errorf("wholeFormat(%.60q) = %v, want %v", c.doc, got, c.want)
		}
	}
	env := map[string]string{"HOME": "/h", "GEMINI_CLI_HOME": "/g", "COPILOT_CONFIG_DIR": "/c", "CODEX_HOME": "/x"}
	getenv := func(k string) string { return env[k] }
	for f, want := range map[Format]string{Gemini: "/g/.gemini/tmp", Copilot: "/c/session-state", Codex: "/x/sessions /x/archived_sessions",
		Pi: "/h/.pi/agent/sessions", Claude: "/h/.config/claude/projects /h/.claude/projects"} {
		if got := strings.Join(Of(f).Looked(getenv), " "); got != want {
			t.Errorf("%v looked in %q, want %q", f, got, want)
		}
	}
	if _, err := ParseFormat("amp"); err == nil || !strings.Contains(err.Error(), "use claude, codex") {
		t.Errorf("--from amp: %v; want refused, naming the agents read", err)
	}
	for path, want := range map[string]bool{"/h/.gemini/tmp/p/chats/session-1.json": true, "/h/.gemini/tmp/p/chats/abc/def.json": true,
		"/h/.gemini/tmp/p/logs.json": false, "/p/package.json": false, "/p/x.jsonl": true, "/p/.x.jsonl": false, "/a/threads/T-1.json": true} {
		if IsLogPath(path) != want {
			t.Errorf("IsLogPath(%s) = %v", path, !want)
		}
	}
}
