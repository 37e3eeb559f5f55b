package agents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"
)

// The registry: one row per agent whose logs panto reads, or recognises
// without reading them yet. Everything panto knows of an agent is in the
// agent's own file (claude.go, codex.go, pi.go, …) and reached through
// its row; the commands (replay, cost, import, follow, list, fsck, search)
// ask the registry, never the agent. Adding an agent is its own file, a
// Format below and a row in the table:
//
//	var gemini = &Agent{
//		Format: Gemini, Name: "gemini", Title: "Gemini CLI", Noun: "a Gemini CLI chat",
//		Env:    []string{"GEMINI_CLI_HOME"},
//		Looked: func(getenv func(string) string) []string { … },  // its default places
//		Line:   func(h *Head) bool { … },   // detection by a JSON Lines log's first object
//		Doc:    func(d *Doc) bool { … },    // detection by a whole-file JSON document's first keys
//		Magic:  func(b []byte) bool { … },  // detection by the file's first bytes (a database)
//		read:   (*converter).gemini,        // the conversion: header, then entries, by the §11 rules
//		Resume: func(id string) []string { return []string{"gemini", "--resume", id} },
//		prompt: …,                          // a line's first prompt, for titles
//	}
//
// A reader gets a converter (agents.go): the Source (path, bytes), the
// line reader with SPEC §11's rules (c.newLines, c.line), c.begin for the
// header (once: the agent's own id, cwd, first time), c.id for
// deterministic entry ids, c.emit for each entry (tool calls left open are
// answered there), c.stats for what it converted how. Its counting rules
// are how it fills each assistant Entry's Reply (one per billed request,
// the request's own key in Reply.Key so a log and its import count once).

// Agent is a row of the registry.
type Agent struct {
	Format Format
	Name   string   // the --from value, an import's origin.agent: "claude"
	Title  string   // the agent in a sentence: "Claude Code"
	Noun   string   // one of its logs in a sentence: "a Claude Code transcript"
	Env    []string // the environment variables its places honour
	// Looked returns the directories where it keeps its logs, whether they
	// exist or not (none without HOME and its variables).
	Looked func(getenv func(string) string) []string
	// Line reports whether a JSON Lines log whose first object is h's is
	// the agent's; Doc whether a log that is one JSON document (its first
	// line no complete object) is; Magic whether a file so beginning is
	// (a database). nil: it writes no such file.
	Line  func(h *Head) bool
	Doc   func(d *Doc) bool
	Magic func(b []byte) bool
	// Names reports whether a file found in a directory walk is one of its
	// logs by its path, when they are not all *.jsonl (a Gemini CLI chat
	// is chats/*.json): a walk takes *.jsonl and what a row's Names takes
	// (IsLogPath). A file named on the command line is read whatever its name.
	Names func(path string) bool
	// part reports whether a walk of root passes the file at path by as
	// part of a log read from another file the same walk takes (a page
	// of a paged Codex rollout before its last below root; root "": any
	// place): nil when every file is a log of its own.
	part func(path, root string) bool
	// early says the row's Line detector is asked before the others': its
	// logs' first line bears another agent's marks too (Gemini CLI's
	// "sessionId" is Claude Code's).
	early bool
	// subagents says that an Origin.Parent of the agent's names the
	// session whose sub-agent a log is (its cost is the parent's unless
	// --subagents), not the session it was forked from.
	subagents bool
	// Resume returns the agent's own command that takes session id up
	// again (SPEC §15), run in the session's cwd; nil when it has none.
	Resume func(id string) []string
	// read converts a log of the agent (nil: recognised, not read: a log
	// of it is refused with its Noun named).
	read func(c *converter) error
	// prompt returns the text of the first prompt a line holds, "" for
	// none, for titles; mark is in every line that holds one (a cheap test
	// before the line is parsed).
	prompt func(l gjson.Result) string
	mark   []byte
	// docList is the member of a whole-document log that lists its
	// messages (Gemini CLI's "messages"): titles are found there.
	docList string
}

// Reads reports whether panto reads the agent's logs (not only knows them).
func (a *Agent) Reads() bool { return a.read != nil }

// Format is the format of a session log: panto's, or one agent's.
type Format int

const (
	Unknown     Format = iota
	Panto              // a panto session, entry lines or message lines
	Claude             // a Claude Code transcript
	Codex              // a Codex rollout
	Pi                 // a pi session, version 1, 2 or 3
	Gemini             // a Gemini CLI chat: the whole-file JSON, or JSON Lines
	Copilot            // a GitHub Copilot CLI events.jsonl
	OpenCode           // OpenCode's database, storage/ tree or export
	Amp                // an Amp thread: recognised, not read
	Cursor             // a Cursor transcript: recognised, not read
	GeminiStats        // Gemini CLI's headless --output-format json: a run's totals, no session
)

// registry is the table, in the order logs are told (the rows marked
// early first): the first row whose detection says yes has the log.
// Formats with no row (Unknown, Panto) are panto's own.
var registry = []*Agent{claudeAgent, codexAgent, piAgent, geminiAgent, copilotAgent, openCodeAgent, ampAgent, cursorAgent, geminiStatsAgent}

// IsLogPath reports whether a directory walk takes the file at path for
// a log: *.jsonl, or what a row's Names takes; never a hidden file (a
// writer's temporary file).
func IsLogPath(path string) bool { return isLogPathIn(path, "") }

// LogPathIn is IsLogPath for a walk of root alone: a file that is part of
// a log read from another file is passed by only when that file is below
// root too (a walk of one day's directory of Codex sessions takes the
// last page of a thread it holds when the thread's later pages are filed
// under later days, and reads the whole thread from it; IsLogPath passed
// every page there by, and the thread was in no day's report but the
// last's).
func LogPathIn(root string) func(path string) bool {
	return func(path string) bool { return isLogPathIn(path, root) }
}

func isLogPathIn(path, root string) bool {
	name := filepath.Base(path)
	if strings.HasPrefix(name, ".") {
		return false
	}
	for _, a := range registry {
		if a.part != nil && a.part(path, root) {
			return false
		}
	}
	if strings.HasSuffix(name, ".jsonl") {
		return true
	}
	for _, a := range registry {
		if a.Names != nil && a.Names(path) {
			return true
		}
	}
	return false
}

// Agents returns the registry's rows, in order.
func Agents() []*Agent { return registry }

// Of returns f's row, nil for panto's formats.
func Of(f Format) *Agent {
	for _, a := range registry {
		if a.Format == f {
			return a
		}
	}
	return nil
}

// Named returns the row of the agent called name ("claude"), nil for none.
func Named(name string) *Agent {
	for _, a := range registry {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// readable returns the rows of the agents panto reads.
func readable() []*Agent {
	var as []*Agent
	for _, a := range registry {
		if a.Reads() {
			as = append(as, a)
		}
	}
	return as
}

func (f Format) String() string {
	switch f {
	case Unknown:
		return "unknown"
	case Panto:
		return "panto"
	}
	if a := Of(f); a != nil {
		return a.Name
	}
	return fmt.Sprintf("format%d", int(f))
}

// Name is the format said in a sentence: "a Claude Code transcript".
func (f Format) Name() string {
	switch f {
	case Unknown:
		return "in no known format"
	case Panto:
		return "a panto session"
	}
	if a := Of(f); a != nil {
		return a.Noun
	}
	return f.String()
}

// expected names the formats a log may be in, for errors.
func expected() string {
	names := []string{Panto.Name()}
	for _, a := range readable() {
		names = append(names, a.Noun)
	}
	return or(names)
}

// or joins words as "a, b or c".
func or(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// SubagentOf is the parent of a session whose origin is agent's and names
// parent, when the session is a sub-agent's (a Claude Code subagent
// transcript, a Gemini CLI sub-agent chat); "" else (a Codex fork is a
// session of its own).
func SubagentOf(agent, parent string) string {
	if a := Named(agent); a != nil && a.subagents {
		return parent
	}
	return ""
}

// Names returns the names of the agents panto reads, in the table's order
// (the values --from takes besides all and auto).
func Names() []string {
	var names []string
	for _, a := range readable() {
		names = append(names, a.Name)
	}
	return names
}

// ParseFormat reads a --from value: an agent's name (claude, codex, pi,
// …), or auto ("" and all too: every format, each file's told from its
// first lines).
func ParseFormat(s string) (Format, error) {
	switch s {
	case "", "auto", "all":
		return Unknown, nil
	}
	if a := Named(s); a != nil && a.Reads() {
		return a.Format, nil
	}
	return Unknown, fmt.Errorf("%q is not an agent: use %s", s, or(Names()))
}

// Places returns the directories where agent f keeps its logs (every
// agent's for Unknown), honouring each agent's own variables
// (CLAUDE_CONFIG_DIR, a comma-separated list too, CODEX_HOME,
// PI_CODING_AGENT_DIR, …), else the home defaults. Only those that exist
// are returned.
func Places(f Format, getenv func(string) string) []string {
	var found []string
	for _, d := range Looked(f, getenv) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			found = append(found, d)
		}
	}
	return found
}

// Looked returns the directories where agent f keeps its logs (every
// agent's for Unknown), whether they exist or not: Places is those that do.
func Looked(f Format, getenv func(string) string) []string {
	var dirs []string
	for _, a := range looked(f) {
		dirs = append(dirs, a.Looked(getenv)...)
	}
	return dirs
}

// looked returns the rows Looked asks: f's, or every agent's that panto
// reads and that has places.
func looked(f Format) []*Agent {
	var as []*Agent
	for _, a := range readable() {
		if a.Looked != nil && (f == Unknown || a.Format == f) {
			as = append(as, a)
		}
	}
	return as
}

// NoLogs says that no logs of f were found in their places: which places
// were looked in, and what to do (for a warning: "… found: looked in …:
// nothing to " + what, then the hint).
func NoLogs(f Format, getenv func(string) string, what string) string {
	var who, vars []string
	for _, a := range looked(f) {
		who = append(who, a.Title)
		vars = append(vars, a.Env...)
	}
	where := "no place to look in (HOME is not set)"
	if ds := Looked(f, getenv); len(ds) > 0 {
		where = "looked in " + strings.Join(ds, ", ")
	}
	return "no logs of " + or(who) + " found: " + where + ": nothing to " + what + " (give their directories, or set " + or(vars) + ")"
}

// home returns the directory named by the variable env, else $HOME/def
// ("" when neither is set).
func home(getenv func(string) string, env, def string) string {
	if d := getenv(env); d != "" {
		return d
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, def)
	}
	return ""
}

// PassedOverMax bounds the files PassedOver returns.
const PassedOverMax = 20

// PassedOver returns the regular files below dir that a walk did not take
// for logs (IsLogPath), hidden ones aside, at most PassedOverMax: for a
// directory where the walk took none, these are read as if named, so
// that each is said to be no log panto reads (an Amp thread, Gemini CLI's
// headless output, a database) and the command ends with exit 1, never
// "nothing there, $0, exit 0" (SPEC §16).
func PassedOver(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !IsLogPath(p) {
			out = append(out, p)
			if len(out) >= PassedOverMax {
				return filepath.SkipAll
			}
		}
		return nil
	})
	return out
}
