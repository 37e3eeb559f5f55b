package agents

import (
	"path/filepath"
	"regexp"
)

// GitHub Copilot CLI keeps a session in
// ${COPILOT_CONFIG_DIR:-~/.copilot}/session-state/<id>/events.jsonl: one
// event a line, {type, data, id, timestamp, parentId} (and agentId inside
// a sub-agent) (reference/more-agents.md §3).

var copilotAgent = &Agent{
	Format: Copilot, Name: "copilot", Title: "Copilot CLI", Noun: "a GitHub Copilot CLI events.jsonl",
	Env: []string{"COPILOT_CONFIG_DIR"},
	Looked: func(getenv func(string) string) []string {
		if d := home(getenv, "COPILOT_CONFIG_DIR", ".copilot"); d != "" {
			return []string{filepath.Join(d, "session-state")}
		}
		return nil
	},
	Line: func(h *Head) bool {
		return copilotType.MatchString(h.Type) && h.Data.IsObject() && h.ID != "" && h.Get("timestamp").Exists()
	},
	Resume: func(id string) []string { return []string{"copilot", "--resume", id} },
}

var copilotType = regexp.MustCompile(`^(session|user|assistant|tool|subagent|hook|system|permission|skill|abort)\.[a-z_.]+$`)
