// Package agent is seed 003's agent in Go (SPEC §13): an Agent owns one
// conversation and the session it is kept in, and writes every message to
// its store as the message enters the conversation. An embedder gets
// persistence for free: it submits prompts and steps, and a crash at any
// point leaves a session that resumes where it stopped, told as it was.
//
// store.Open("", getenv), store.Open("null:", getenv) and
// store.Open("postgres://…", getenv) work with this package imported, no
// blank imports needed. One store may serve many agents at once; an Agent
// itself is not safe for concurrent use.
//
// What persists when:
//
//   - Submit writes the prompt before any request is sent. The exception
//     is SPEC §4's: a session exists from its first reply on, so a new
//     session's first prompt (and its system prompt) is held in memory and
//     written in one batch with the first reply. The null store keeps
//     nothing at all; an agent on it keeps its conversation in memory.
//   - Step writes each reply as it arrives. When a reply asks for tools it
//     writes the round's mark (an entry of type "toolRound" naming the
//     calls) before any tool runs, runs them, and writes all their results
//     as one entry, then asks again, until a reply asks for no tool. When
//     Step returns, with or without an error, every message of the
//     conversation is in the store, but for what it holds: a new session's
//     held entries (its first request failed), or a round's results the
//     store refused (they are written with the next entry).
//   - AddSystem writes a system entry as Submit writes a prompt.
//   - Compact writes one compaction entry; from then on the conversation
//     sent is its summary, then the entries it keeps.
//   - New writes nothing. Resuming with a System that differs from the
//     session's last system prompt holds a new system entry, written with
//     the next entry, or after the results of pending calls (never
//     between a call and its result).
//
// Every write expects the leaf the agent last saw, so a second writer of
// the same session makes the next write fail (store.ErrLeafMoved) rather
// than interleave with it. Nothing is ever retried by itself.
//
// # Crash, restart, retry: a guide for a service
//
// Names. ID is the session's id from New on, before anything is written:
// store it (with the user's request) before the first Step, and resume by
// it: Config.Session takes an id or a unique prefix of one on every store
// (and a file path on the file store); Name is the full name it resolved
// to. The session exists in the store from its first reply: a crash
// before it leaves nothing to resume (New on the id fails with
// store.ErrNoSuchSession: start again).
//
// After a crash, New on the session rebuilds the conversation, and says
// what was cut off:
//
//   - Dangling: a prompt written that got no reply (the crash came while
//     the request was on the wire). Submit its text to send it as it is
//     (the same entry), or another text (a sibling: the old prompt stays
//     off the conversation). A service that retries the user's request
//     should compare with Dangling first, or the prompt is there twice.
//   - Pending: calls of the last reply that got no result. Each says
//     whether its round started (Started: the tool may have run, its
//     result lost) or not (zero: it never ran). Step refuses to go on
//     (ErrPending) until the embedder decides: RunPending runs them again
//     (right for a read, wrong for a payment), ResolvePending gives their
//     results, or tells the model they were lost (Lost's text), and Submit
//     answers them as lost with the next prompt.
//   - Tool results with no reply after them: Step sends them (nothing is
//     dangling).
//   - A torn last write (files): cut by the next write, saved aside.
//
// What is guaranteed: an entry the store acknowledged is kept; a tool a
// round's mark names may have run, and one it does not name never ran;
// nothing runs twice unless the embedder asks (RunPending); the session
// stays one panto-fsck calls clean and every provider accepts. What is
// not: a tool's effect and the write of its result are not one step, so a
// crash between them loses the result (told as lost, never as not run),
// and a service that retries a whole request after a crash can run a tool
// again itself.
//
// Restarts of the store. A call that meets a database that went away (a
// PostgreSQL restart, a proxy that cut the connection) fails with an
// error that is store.ErrUnavailable; the agent is unchanged by a failed
// write, and the same call again works once the store is back (the
// database store connects again by itself). A round whose results could not be
// written holds them: Step again writes them and goes on, without running
// the tools again. store.ErrLeafMoved means another writer appended: make
// a new Agent with New to see what it wrote.
//
// A session's name is the store's: a file path for the file store, an id
// for a database. A service that lets its users pick a session must map
// their words to a name itself and never pass them through as
// Config.Session: with the file store a path is opened and written.
package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/internal/replay"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/provider"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"

	// store.Open knows the built-in stores without blank imports (SPEC
	// §13): an embedder of this package can open any of them.
	_ "github.com/panto-dev/panto/pkg/filestore"
	_ "github.com/panto-dev/panto/pkg/nullstore"
	_ "github.com/panto-dev/panto/pkg/pgstore"
	"github.com/tidwall/gjson"
)

// Config is what an Agent is made of.
type Config struct {
	Store    store.Store     // files, null: or a database (store.Open)
	Session  string          // the session's name in Store; "" starts a new session of Cwd
	Cwd      string          // the header's cwd of a new session
	Provider provider.Config // the model a request goes to (its stamp is written on each prompt)
	System   string          // the system prompt; "" for none
	Tools    []Tool          // the tools the model may call
}

// Tool is a tool the model may call: its description, and the function
// that runs it. Run gets the raw JSON text of the arguments; its output,
// or its error, is the result the model is sent.
type Tool struct {
	Spec provider.Tool
	Run  func(ctx context.Context, input string) (output string, err error)
}

// Prompt is a user prompt that got no reply.
type Prompt struct{ ID, ParentID, Text string }

// ErrNothingToCompact is Compact's error for a conversation that has
// nothing before its last prompt to summarise.
var ErrNothingToCompact = errors.New("agent: nothing to compact: the conversation has nothing before its last prompt")

// ErrNothingToSend is Step's error for a conversation that does not end
// with a user message (Submit a prompt first).
var ErrNothingToSend = errors.New("agent: nothing to send: the conversation does not end with a prompt (Submit one)")

// ErrPending is Step's error when the last reply's tool calls have no
// result (Pending): a session resumed after a crash in a tool round, or a
// round whose start could not be written. Step neither runs them again nor
// tells the model they did not run: RunPending runs them, ResolvePending
// gives their results (or says they were lost), and Submit answers them as
// lost with the next prompt.
var ErrPending = errors.New("agent: the last reply's tool calls have no result: RunPending runs them again, ResolvePending answers them")

// Agent owns a conversation and the session it is persisted in.
type Agent struct {
	cfg      Config
	name     string // the session's name in the store
	id       string // the session's id
	exists   bool   // the session is in the store
	conv     []provider.Message
	ids      []string // the entry id of each message of conv; "" for a summary, or a held message
	leaf     string   // the session's leaf as the agent last saw it ("" for none)
	parent   string   // the parent of the next entry when it is not leaf (after a dangling prompt)
	root     bool     // the next entry is a root: a sibling of a dangling root prompt
	held     []held   // entries not written yet, written before the next ones
	dangling *Prompt
	pending  []provider.ToolCall // calls of the last reply with no result
	after    []store.Msg         // system entries to write after the pending calls' results
}

// held is an entry waiting to be written, and where it is in conv (-1 for
// none).
type held struct {
	msg store.Msg
	at  int
}

// New makes an agent. With cfg.Session set it resumes that session: the
// conversation is the session's path from its root to its leaf as the
// model is sent it (after a compaction: the summary, then the entries kept),
// without a trailing prompt that got no reply: Dangling returns that one,
// and the agent never sends it by itself.
func New(ctx context.Context, cfg Config) (*Agent, error) {
	if cfg.Store == nil {
		return nil, errors.New("agent: Config.Store is nil: give one (store.Open(\"null:\", …) keeps nothing)")
	}
	if cfg.Provider.Provider == "" {
		return nil, errors.New("agent: Config.Provider.Provider is empty: give anthropic, openai or offline")
	}
	if cfg.Provider.Model == "" {
		if cfg.Provider.Provider != provider.Offline {
			return nil, errors.New("agent: Config.Provider.Model is empty: give the model")
		}
		cfg.Provider.Model = provider.OfflineModel
	}
	cfg.Provider.Tools = nil
	for _, t := range cfg.Tools {
		cfg.Provider.Tools = append(cfg.Provider.Tools, t.Spec)
	}
	a := &Agent{cfg: cfg}
	if cfg.Session == "" {
		name, err := cfg.Store.NewName(cfg.Cwd)
		if err != nil {
			return nil, err
		}
		a.name, a.id = name, idOf(name)
		if cfg.System != "" {
			a.hold(systemMsg(cfg.System), true)
		}
		return a, nil
	}
	name, err := resolve(ctx, cfg.Store, cfg.Session)
	if err != nil {
		return nil, err
	}
	a.name = name
	if err := a.load(ctx); err != nil {
		return nil, err
	}
	a.exists = true
	if cfg.System != "" && cfg.System != a.lastSystem() {
		m := systemMsg(cfg.System)
		if len(a.pending) > 0 {
			// Between a tool call and its result no provider takes a
			// system message: it goes after the results.
			a.after = append(a.after, m)
		} else {
			a.hold(m, true)
		}
	}
	return a, nil
}

// resolve is the name of the session that session names in st: a file
// path as it is (the file store), else the session whose id is session or
// starts with it, wherever its cwd.
func resolve(ctx context.Context, st store.Store, session string) (string, error) {
	if strings.ContainsRune(session, '/') || strings.HasSuffix(session, ".jsonl") {
		return session, nil
	}
	return st.Resolve(ctx, "", true, session)
}

// idOf is the session id a new session's name holds: a file's name, or
// the name itself.
func idOf(name string) string {
	if id := catalog.IDFromPath(name); id != "" {
		return id
	}
	return name
}

// load rebuilds the conversation from the store.
func (a *Agent) load(ctx context.Context) error {
	r, err := a.cfg.Store.Open(ctx, a.name)
	if err != nil {
		return err
	}
	defer r.Close()
	s, err := replay.Open(r, r.Size())
	if err != nil {
		return fmt.Errorf("agent: read %s: %w", a.name, err)
	}
	if !s.Log.HeaderOK {
		// Nothing to resume, and nothing Submit could append to.
		return fmt.Errorf("agent: %s is no panto session: its first line is not a session header", a.name)
	}
	if err := appendable(r, s.Log, a.name); err != nil {
		return err
	}
	a.id = s.Log.Header.ID
	leaf := s.Log.Leaf()
	if leaf < 0 {
		return nil
	}
	a.leaf = s.Log.ID(leaf)
	path := s.Log.Path(leaf)
	err = s.EachSent(path, func(i int32, msg []byte) error {
		id := ""
		if i >= 0 {
			id = s.Log.ID(i)
		}
		a.conv = append(a.conv, provider.ParseMessage(msg))
		a.ids = append(a.ids, id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("agent: read %s: %w", a.name, err)
	}
	if n := len(a.conv); n > 0 && a.ids[n-1] == a.leaf && a.conv[n-1].Role == "user" && text(a.conv[n-1]) != "" {
		p := &Prompt{ID: a.ids[n-1], Text: text(a.conv[n-1])}
		if pi := s.Log.Nodes[s.Log.Lookup(p.ID)].Parent; pi >= 0 {
			p.ParentID = s.Log.ID(pi)
		}
		a.dangling = p
		a.parent, a.root = p.ParentID, p.ParentID == ""
		a.conv, a.ids = a.conv[:n-1], a.ids[:n-1]
	}
	if uses := a.unanswered(); len(uses) > 0 {
		started, err := s.Started(path)
		if err != nil {
			return fmt.Errorf("agent: read %s: %w", a.name, err)
		}
		for _, u := range uses {
			c := call(u)
			if t, ok := started[u.ID]; ok {
				c.Started, _ = time.Parse(session.TimeFormat, t)
				if c.Started.IsZero() {
					c.Started = time.Unix(0, 0).UTC() // a mark with a bad timestamp: started, time unknown
				}
			}
			a.pending = append(a.pending, c)
		}
	}
	return nil
}

// appendable refuses a session no write could go on (SPEC §13): a newer
// format version (or another agent's log that calls itself one), a second
// header, or a line that is not JSON before its end (a torn tail is cut
// by the next write).
func appendable(r store.Reader, l *scan.Log, name string) error {
	switch {
	case l.Header.Version > session.Version:
		return fmt.Errorf("%w: %s is format version %d (a newer panto's, or another agent's log); this panto writes version %d: it cannot be resumed here", store.ErrNewerVersion, name, l.Header.Version, session.Version)
	case len(l.Headers) > 0:
		return fmt.Errorf("%w: %s: a second session header at line %d: run panto-fsck", store.ErrNeedsFsck, name, l.Headers[0].Line)
	case l.Stopped == nil:
		return nil
	}
	// The read stopped at a line that is not JSON: damage, unless
	// nothing good follows it (a torn tail).
	all, err := scan.Scan(io.NewSectionReader(r, 0, r.Size()), scan.ScanOptions{})
	if err != nil {
		return fmt.Errorf("agent: read %s: %w", name, err)
	}
	if d := all.Damage(); d.Verdict == scan.Damaged && len(all.Headers) > 0 {
		return fmt.Errorf("%w: %s: a second session header at line %d: run panto-fsck", store.ErrNeedsFsck, name, d.At.Line)
	} else if d.Verdict == scan.Damaged {
		return fmt.Errorf("%w: %s: line %d is not valid JSON, and entries follow it: run panto-fsck", store.ErrNeedsFsck, name, d.At.Line)
	}
	return nil
}

// Name is the session's name in the store ("" until it exists).
func (a *Agent) Name() string {
	if !a.exists {
		return ""
	}
	return a.name
}

// ID is the session's id, from New on: a new session's id is chosen
// then, though the session exists only from its first reply (SPEC §4).
func (a *Agent) ID() string { return a.id }

// Pending is the tool calls of the last reply that have no result: on
// resume after a crash in a tool round, or after a Step whose round could
// not start. A call's Started is when its round began (it may have run,
// its result lost), or zero when it never started. Step refuses to go on
// past them (ErrPending); RunPending runs them, ResolvePending answers
// them, and Submit answers them as lost with its prompt.
func (a *Agent) Pending() []provider.ToolCall { return slices.Clone(a.pending) }

// RunPending runs the pending calls (Pending) again, as Step runs a
// round: a mark, the tools, their results as one entry. Step then sends
// the results.
func (a *Agent) RunPending(ctx context.Context) error {
	if len(a.pending) == 0 {
		return nil
	}
	return a.round(ctx, a.pending)
}

// ResolvePending answers the pending calls (Pending) without running
// them, in one entry: results[id] is the result of the call id; a call
// results does not name gets Lost's text. Step then sends the results.
func (a *Agent) ResolvePending(ctx context.Context, results map[string]string) error {
	known := map[string]bool{}
	for _, c := range a.pending {
		known[c.ID] = true
	}
	for id := range results {
		if !known[id] {
			return fmt.Errorf("agent: no pending tool call has the id %q", id)
		}
	}
	if len(a.pending) == 0 {
		return nil
	}
	b := []byte(`{"role":"user","content":[`)
	for _, c := range a.pending {
		r, ok := results[c.ID]
		if !ok {
			r = Lost(c)
		}
		b = appendResult(b, c.ID, r)
	}
	if err := a.add(ctx, store.Msg{Raw: append(b, "]}"...), Role: "user"}); err != nil {
		return err
	}
	a.pending = nil
	return nil
}

// Lost is the result the model is told for a call whose result is not
// known: that it started and may have run, or that it never started.
func Lost(c provider.ToolCall) string {
	if c.Started.IsZero() {
		return "Not run: this tool call never started."
	}
	return fmt.Sprintf("Started at %s; its result was lost: it may have run.", session.Timestamp(c.Started))
}

// Conversation is the live conversation: what the next request sends.
func (a *Agent) Conversation() []provider.Message { return slices.Clone(a.conv) }

// Dangling is, on resume, the prompt that got no reply (the session's last
// entry, a user message with text), or nil; nil again once a reply
// answered a prompt. It is not part of the conversation: Submit its text
// to send it as it is (the same entry: nothing is written twice), or
// another text to put a new prompt beside it (a sibling in the session's
// tree, a second root when it is the first entry). Tool results alone are
// no prompt: they stay the conversation's end, and Step sends them again.
func (a *Agent) Dangling() *Prompt { return a.dangling }

// Submit adds a user prompt to the conversation, written before any
// request (a new session's first prompt: with its reply). Pending tool
// calls (a session resumed after a crash in a tool round) are answered
// in the same entry with what is known of them (Lost), so the
// conversation stays one the providers accept.
func (a *Agent) Submit(ctx context.Context, text string) error {
	if d := a.dangling; d != nil && text == d.Text && a.leaf == d.ID && len(a.held) == 0 {
		// The dangling prompt sent as it is: it is already written.
		a.conv = append(a.conv, provider.Message{Role: "user", Blocks: []provider.Block{{Type: "text", Text: text}}})
		a.ids = append(a.ids, d.ID)
		a.parent, a.root = "", false
		return nil
	}
	var results []byte
	for _, c := range a.pending {
		results = appendResult(results, c.ID, Lost(c))
	}
	b := []byte(`{"role":"user","content":[`)
	if results != nil {
		b = append(append(b, results...), ',')
	}
	b = append(b, `{"type":"text","text":`...)
	b = rawjson.AppendString(b, text)
	b = append(b, "}]}"...)
	if err := a.add(ctx, store.Msg{Raw: b, Role: "user"}); err != nil {
		return err
	}
	a.pending = nil
	return nil
}

// AddSystem adds a system message to the conversation, written as Submit
// writes a prompt; while tool calls are pending (Pending) it waits for
// their results and is written after them, never between a call and its
// result.
func (a *Agent) AddSystem(ctx context.Context, text string) error {
	if len(a.pending) > 0 {
		a.after = append(a.after, systemMsg(text))
		return nil
	}
	return a.add(ctx, systemMsg(text))
}

// Step sends the conversation and appends the reply; while the reply asks
// for tools it runs them (each tool's output, or its error, the result),
// appends all their results as one entry and asks again. It returns the
// last reply. Every message that entered the conversation is in the store
// when Step returns, also with an error.
//
// A round begins with a mark written before its tools run (SPEC §13), so
// that a crash in it is told as it was: calls that started and may have
// run, not calls that never ran. When the results cannot be written (the
// store failed while the tools ran), they are held: written with the
// next entry, and sent by the next Step.
func (a *Agent) Step(ctx context.Context) (*provider.Reply, error) {
	if len(a.pending) > 0 {
		return nil, ErrPending
	}
	if !a.sendable() {
		return nil, ErrNothingToSend
	}
	for {
		reply, err := provider.Turn(ctx, a.cfg.Provider, a.conv)
		if err != nil {
			return nil, err
		}
		if err := a.add(context.WithoutCancel(ctx), store.Msg{Raw: reply.JSON(), Role: "assistant"}); err != nil {
			return reply, err
		}
		a.dangling = nil
		var calls []provider.ToolCall
		for _, u := range toolUses(a.conv[len(a.conv)-1]) {
			calls = append(calls, call(u))
		}
		if len(calls) == 0 {
			return reply, nil
		}
		if reply.StopReason != "toolUse" {
			a.pending = calls // cut off (a length stop): never started
			return reply, nil
		}
		if err := a.round(ctx, calls); err != nil {
			return reply, err
		}
		if err := ctx.Err(); err != nil {
			return reply, err
		}
	}
}

// round runs calls, the last reply's: it writes the round's mark, runs
// each call and writes all their results as one entry. A mark that cannot
// be written leaves the calls pending, never started; results that cannot
// be written are held (the mark says they started).
func (a *Agent) round(ctx context.Context, calls []provider.ToolCall) error {
	ids := make([]string, len(calls))
	for k, c := range calls {
		ids[k] = c.ID
	}
	if _, err := a.write(context.WithoutCancel(ctx), []store.Msg{store.ToolRound(ids)}); err != nil {
		a.pending = calls
		return err
	}
	a.pending = nil
	b := []byte(`{"role":"user","content":[`)
	for _, c := range calls {
		b = appendResult(b, c.ID, a.run(ctx, c))
	}
	m := store.Msg{Raw: append(b, "]}"...), Role: "user"}
	if err := a.add(context.WithoutCancel(ctx), m); err != nil {
		a.hold(m, true)
		for _, m := range a.after {
			a.hold(m, true)
		}
		a.after = nil
		return err
	}
	return nil
}

// sendable reports whether the conversation ends with a user message (a
// prompt, or tool results), system messages after it aside.
func (a *Agent) sendable() bool {
	for k := len(a.conv) - 1; k >= 0; k-- {
		switch a.conv[k].Role {
		case "system":
			continue
		case "user":
			return true
		}
		return false
	}
	return false
}

// run runs the tool a toolUse block asks for and returns the result the
// model is sent.
func (a *Agent) run(ctx context.Context, u provider.ToolCall) string {
	for _, t := range a.cfg.Tools {
		if t.Spec.Name != u.Name {
			continue
		}
		if t.Run == nil {
			return fmt.Sprintf("The tool %s cannot run here.", u.Name)
		}
		out, err := runTool(ctx, t, string(u.Input))
		if err != nil {
			if out != "" {
				out += "\n"
			}
			return out + "Error: " + err.Error()
		}
		return out
	}
	return fmt.Sprintf("There is no tool named %s.", u.Name)
}

// runTool runs t; a panic in it is its error (the process and the
// round's result go on: it took the process down, the result lost).
func runTool(ctx context.Context, t Tool, input string) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("the tool panicked: %v", p)
		}
	}()
	return t.Run(ctx, input)
}

// Compact asks the model for a summary of the conversation before its last
// prompt (instructions, when given, say what the summary must keep) and
// appends a compaction entry: from then on the conversation sent is the
// system prompts, the summary, then the entries from that last prompt on.
func (a *Agent) Compact(ctx context.Context, instructions string) error {
	s, err := Summarize(ctx, a.cfg.Provider, a.conv, instructions)
	if err != nil {
		return err
	}
	kept := a.ids[s.Keep]
	if kept == "" {
		return ErrNothingToCompact // the prompt is not written yet: a new session
	}
	if _, err := a.write(ctx, []store.Msg{store.Compaction(s.Summary, kept, s.TokensBefore, store.CompactionRequest(s.Reply.JSON()))}); err != nil {
		return err
	}
	var conv []provider.Message
	var ids []string
	for k, m := range a.conv[:s.Keep] {
		if m.Role == "system" {
			conv, ids = append(conv, m), append(ids, a.ids[k])
		}
	}
	conv = append(conv, provider.ParseMessage(replay.SummaryMessage(s.Summary)))
	ids = append(ids, "")
	a.conv = append(conv, a.conv[s.Keep:]...)
	a.ids = append(ids, a.ids[s.Keep:]...)
	return nil
}

// Summary is what Summarize learned of a conversation.
type Summary struct {
	Summary      string          // the model's summary of conv[:Keep]
	Keep         int             // the first message kept: the last prompt
	TokensBefore int64           // the conversation's size in tokens before the compaction (partly estimated)
	Reply        *provider.Reply // the reply that holds the summary
}

// SummaryInstructions is what the model is asked for a summary; the
// instructions of a compaction follow it.
const SummaryInstructions = "Summarise the conversation so far for yourself, to continue it from the summary alone: the goal, what was decided and done, what is still open, and the facts, names, paths and numbers that matter. Write only the summary."

// Summarize asks the model of cfg for a summary of conv before its last
// prompt (a user message that is not tool results), with instructions
// after SummaryInstructions. It is Compact's request, for a program that
// keeps its conversation itself (panto-turn --compact).
func Summarize(ctx context.Context, cfg provider.Config, conv []provider.Message, instructions string) (*Summary, error) {
	keep := -1
	for k := len(conv) - 1; k >= 0; k-- {
		if isPrompt(conv[k]) {
			keep = k
			break
		}
	}
	before := 0
	for _, m := range conv[:max(keep, 0)] {
		if m.Role != "system" {
			before++
		}
	}
	if keep < 0 || before == 0 {
		return nil, ErrNothingToCompact
	}
	ask := SummaryInstructions
	if instructions = strings.TrimSpace(instructions); instructions != "" {
		ask += "\n\n" + instructions
	}
	req := append(slices.Clone(conv[:keep]), provider.Message{Role: "user", Blocks: []provider.Block{{Type: "text", Text: ask}}})
	reply, err := provider.Turn(ctx, cfg, req)
	if err != nil {
		return nil, err
	}
	var parts []string
	for _, b := range reply.Blocks {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			parts = append(parts, b.Text)
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("agent: the model wrote no summary (stop reason %s)", reply.StopReason)
	}
	// The request's prompt, as the provider counted it, stands for what is
	// summarised; the kept messages are estimated.
	tokens := estimate(conv)
	if u := reply.Usage; u != nil {
		tokens = max(0, u.Input+u.CacheRead+u.CacheWrite-estimate(req[keep:])) + estimate(conv[keep:])
	}
	return &Summary{Summary: strings.Join(parts, "\n"), Keep: keep, TokensBefore: tokens, Reply: reply}, nil
}

// estimate is the size of msgs in tokens, at about four bytes a token.
func estimate(msgs []provider.Message) int64 {
	var n int64
	for _, m := range msgs {
		for _, b := range m.Blocks {
			n += int64(len(b.Text)+len(b.Input)+len(b.Signature)+len(b.Data)+len(b.ID)+len(b.Name)+3) / 4
		}
	}
	return n
}

// add writes m (or holds it, in a new session without a reply yet) and
// adds it to the conversation.
//
// The results of pending calls take with them a system entry that waits
// for them (a System changed on resume in a tool round).
func (a *Agent) add(ctx context.Context, m store.Msg) error {
	if !a.exists && !store.HasReply([]store.Msg{m}) {
		a.hold(m, true)
		return nil
	}
	msgs := []store.Msg{m}
	if len(a.after) > 0 && m.Role == "user" && bytes.Contains(m.Raw, []byte(`"type":"toolResult"`)) {
		msgs = append(msgs, a.after...)
	}
	ids, err := a.write(ctx, msgs)
	if err != nil {
		return err
	}
	for k, m := range msgs {
		a.conv = append(a.conv, provider.ParseMessage(m.Raw))
		a.ids = append(a.ids, ids[k])
	}
	if len(msgs) > 1 {
		a.after = nil // written
	}
	return nil
}

// hold keeps m to be written before the next entries; inConv adds it to
// the conversation now.
func (a *Agent) hold(m store.Msg, inConv bool) {
	at := -1
	if inConv {
		at = len(a.conv)
		a.conv = append(a.conv, provider.ParseMessage(m.Raw))
		a.ids = append(a.ids, "")
	}
	a.held = append(a.held, held{m, at})
}

// write appends the held entries and msgs as one batch, expecting the leaf
// the agent saw, and returns the ids of msgs. The held entries are then
// written (their ids in ids), or still held on an error.
func (a *Agent) write(ctx context.Context, msgs []store.Msg) ([]string, error) {
	batch := make([]store.Msg, 0, len(a.held)+len(msgs))
	for _, h := range a.held {
		batch = append(batch, h.msg)
	}
	batch = append(batch, msgs...)
	o := store.AppendOptions{Provider: a.cfg.Provider.Provider, Model: a.cfg.Provider.Model, Cwd: a.cfg.Cwd, Parent: a.parent, Root: a.root}
	leaf := a.leaf
	o.ExpectLeaf = &leaf
	res, err := a.cfg.Store.Append(ctx, a.name, batch, o)
	if err != nil {
		return nil, err
	}
	ids := entryIDs(res.Lines)
	if len(ids) != len(batch) {
		return nil, fmt.Errorf("agent: the store wrote %d entries of a batch of %d", len(ids), len(batch))
	}
	for k, h := range a.held {
		if h.at >= 0 {
			a.ids[h.at] = ids[k]
		}
	}
	a.held = nil
	a.exists = true
	a.leaf, a.parent, a.root = ids[len(ids)-1], "", false
	return ids[len(ids)-len(msgs):], nil
}

// entryIDs returns the id of each entry line of lines.
func entryIDs(lines []byte) []string {
	var ids []string
	for line := range strings.Lines(string(lines)) {
		ids = append(ids, gjson.Get(line, "id").Str)
	}
	return ids
}

// lastSystem is the text of the conversation's last system message.
func (a *Agent) lastSystem() string {
	for k := len(a.conv) - 1; k >= 0; k-- {
		if a.conv[k].Role == "system" {
			return text(a.conv[k])
		}
	}
	return ""
}

// unanswered returns the tool calls of the conversation's last message
// when it is a reply: calls no result answers.
func (a *Agent) unanswered() []provider.Block {
	if n := len(a.conv); n > 0 && a.conv[n-1].Role == "assistant" {
		return toolUses(a.conv[n-1])
	}
	return nil
}

// call is a toolUse block as a ToolCall.
func call(u provider.Block) provider.ToolCall {
	return provider.ToolCall{ID: u.ID, Name: u.Name, Input: u.Input}
}

func toolUses(m provider.Message) []provider.Block {
	var uses []provider.Block
	for _, b := range m.Blocks {
		if b.Type == "toolUse" {
			uses = append(uses, b)
		}
	}
	return uses
}

// isPrompt reports whether m is a user prompt: a user message with no
// tool results.
func isPrompt(m provider.Message) bool {
	if m.Role != "user" {
		return false
	}
	for _, b := range m.Blocks {
		if b.Type == "toolResult" {
			return false
		}
	}
	return true
}

func text(m provider.Message) string {
	var parts []string
	for _, b := range m.Blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func systemMsg(text string) store.Msg {
	return store.Msg{Raw: session.TextMessage("system", text), Role: "system"}
}

func appendResult(b []byte, id, content string) []byte {
	if len(b) > 0 && b[len(b)-1] == '}' {
		b = append(b, ',')
	}
	b = append(b, `{"type":"toolResult","toolUseId":`...)
	b = rawjson.AppendString(b, id)
	b = append(b, `,"content":`...)
	b = rawjson.AppendString(b, content)
	return append(b, '}')
}
