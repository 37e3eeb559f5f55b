package agents

import (
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"
)

// Gemini CLI keeps a chat per session under
// ~/.gemini/tmp/<project>/chats/ (GEMINI_CLI_HOME replaces the home
// directory): session-<time>-<id8>.json, one JSON object rewritten whole
// (v0.4 – v0.38), and from v0.39 session-<time>-<id8>.jsonl, a first line
// {sessionId, projectHash, startTime, lastUpdated, kind} then message
// records appended, a record re-appended with the same id each time its
// message changes (reference/more-agents.md §1).

var geminiAgent = &Agent{
	Format: Gemini, Name: "gemini", Title: "Gemini CLI", Noun: "a Gemini CLI chat",
	Env: []string{"GEMINI_CLI_HOME"},
	Looked: func(getenv func(string) string) []string {
		if d := home(getenv, "GEMINI_CLI_HOME", ""); d != "" {
			return []string{filepath.Join(d, ".gemini", "tmp")}
		}
		return nil
	},
	// Its JSON Lines first line has Claude Code's "sessionId" too: told
	// by its "projectHash" first.
	early: true,
	Line: func(h *Head) bool {
		return h.SessionID.Type == gjson.String && h.Get("projectHash").Type == gjson.String
	},
	Doc: func(d *Doc) bool {
		return d.Get("sessionId").Type == gjson.String && (d.Has("messages") || d.Has("projectHash"))
	},
	Names: func(path string) bool {
		// chats/session-*.json, and a sub-agent's chats/<parent>/<id>.json
		dir := filepath.Dir(path)
		return strings.HasSuffix(path, ".json") && (filepath.Base(dir) == "chats" || filepath.Base(filepath.Dir(dir)) == "chats")
	},
	Resume: func(id string) []string { return []string{"gemini", "--resume", id} },
}
