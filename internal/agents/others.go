package agents

import (
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"
)

// The agents whose logs panto recognises and does not read: a log of one
// is refused with its name (SPEC §16), never read as nothing. Their
// formats are in reference/more-agents.md §5.

// ampAgent: an Amp thread, one JSON document per thread
// (~/.local/share/amp/threads/T-<uuid>.json): {v, id, created, messages,
// usageLedger?, …}.
var ampAgent = &Agent{
	Format: Amp, Name: "amp", Title: "Amp", Noun: "an Amp thread",
	Names: func(path string) bool {
		name := filepath.Base(path)
		return strings.HasPrefix(name, "T-") && strings.HasSuffix(name, ".json")
	},
	Doc: func(d *Doc) bool {
		return d.Has("usageLedger") || d.Has("v") && d.Has("messages") && strings.HasPrefix(d.Get("id").Str, "T-")
	},
}

// cursorAgent: a Cursor CLI transcript (agent-transcripts/**/*.jsonl):
// {"role", "message":{"content":[…]}} lines with no time and no usage.
var cursorAgent = &Agent{
	Format: Cursor, Name: "cursor", Title: "Cursor", Noun: "a Cursor agent transcript",
	Line: func(h *Head) bool {
		return h.Type == "" && h.Role.Type == gjson.String && h.Message.IsObject() && !h.Message.Get("usage").Exists() && !h.Get("timestamp").Exists()
	},
}

// geminiStatsAgent: what `gemini -p … --output-format json` prints, a
// run's reply and its token totals ({session_id?, response, stats}): no
// session log (its chat file, if kept, is).
var geminiStatsAgent = &Agent{
	Format: GeminiStats, Name: "gemini-stats", Title: "Gemini CLI", Noun: "a Gemini CLI headless output (a run's totals, no session)",
	Doc: func(d *Doc) bool {
		return d.Has("response") && (d.Has("stats") || len(d.Keys) <= 2)
	},
}
