// Package agent is seed 003's agent in Go (SPEC §13): an Agent owns one
// conversation and the session it is kept in, and writes every message to
// its store as the message enters the conversation. An embedder gets
// persistence for free: it submits prompts and steps, and a crash at any
// point leaves a session that resumes where it stopped.
//
// What persists when:
//
//   - Submit writes the prompt before any request is sent. The exception
//     is SPEC §4's: a session exists from its first reply on, so a new
//     session's first prompt (and its system prompt) is held in memory and
//     written in one batch with the first reply. The null store keeps
//     nothing at all; an agent on it keeps its conversation in memory.
//   - Step writes each reply as it arrives, then runs the tools it asks for
//     and writes all their results as one entry, then asks again, until a
//     reply asks for no tool. When Step returns, with or without an error,
//     every message of the conversation is in the store (but a new
//     session's held entries, when its first request failed): a request
//     that fails after a tool round leaves the tool results written, and
//     Step sends the conversation again when called again.
//   - AddSystem writes a system entry as Submit writes a prompt.
//   - Compact writes one compaction entry; from then on the conversation
//     sent is its summary, then the entries it keeps.
//   - New writes nothing. Resuming with a System that differs from the
//     session's last system prompt holds a new system entry, written with
//     the next entry.
//
// Every write expects the leaf the agent last saw, so a second writer of
// the same session makes the next write fail (store.ErrLeafMoved) rather
// than interleave with it. Nothing is ever retried by itself.
//
// An Agent is not safe for concurrent use.
//
// A session's name is the store's: a file path for the file store, an id
// (or a unique prefix of one) for a database. A service that lets its
// users pick a session must map their words to a name itself and never
// pass them through as Config.Session: with the file store that is a path
// the agent will open and write.
package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/panto-dev/panto/pkg/provider"
	"github.com/panto-dev/panto/pkg/rawjson"
	"github.com/panto-dev/panto/pkg/replay"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
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

// Agent owns a conversation and the session it is persisted in.
type Agent struct {
	cfg      Config
	name     string // the session's name in the store
	exists   bool   // the session is in the store
	conv     []provider.Message
	ids      []string // the entry id of each message of conv; "" for a summary, or a held message
	leaf     string   // the session's leaf as the agent last saw it ("" for none)
	parent   string   // the parent of the next entry when it is not leaf (after a dangling prompt)
	held     []held   // entries not written yet, written before the next ones
	dangling *Prompt
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
		a.name = name
		if cfg.System != "" {
			a.hold(systemMsg(cfg.System), true)
		}
		return a, nil
	}
	a.name = cfg.Session
	if err := a.load(ctx); err != nil {
		return nil, err
	}
	a.exists = true
	if cfg.System != "" && cfg.System != a.lastSystem() {
		a.hold(systemMsg(cfg.System), true)
	}
	return a, nil
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
	leaf := s.Log.Leaf()
	if leaf < 0 {
		return nil
	}
	a.leaf = s.Log.ID(leaf)
	err = s.EachSent(s.Log.Path(leaf), func(i int32, msg []byte) error {
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
		a.parent = p.ParentID
		a.conv, a.ids = a.conv[:n-1], a.ids[:n-1]
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

// Conversation is the live conversation: what the next request sends.
func (a *Agent) Conversation() []provider.Message { return slices.Clone(a.conv) }

// Dangling is, on resume, the prompt that got no reply (the session's last
// entry, a user message with text), or nil. It is not part of the
// conversation: to send it again, Submit its text (the new prompt is a
// sibling of it in the session's tree). Tool results alone are no prompt:
// they stay the conversation's end, and Step sends them again.
func (a *Agent) Dangling() *Prompt { return a.dangling }

// Submit adds a user prompt to the conversation, written before any
// request (a new session's first prompt: with its reply). Tool calls of
// the last reply that never ran (a session resumed after a crash) are
// answered in the same entry as not run, so the conversation stays one
// the providers accept.
func (a *Agent) Submit(ctx context.Context, text string) error {
	var results []byte
	if pend := a.pending(); len(pend) > 0 {
		for _, u := range pend {
			results = appendResult(results, u.ID, "Not run: the session was interrupted before this tool ran.")
		}
	}
	b := []byte(`{"role":"user","content":[`)
	if results != nil {
		b = append(append(b, results...), ',')
	}
	b = append(b, `{"type":"text","text":`...)
	b = rawjson.AppendString(b, text)
	b = append(b, "}]}"...)
	return a.add(ctx, store.Msg{Raw: b, Role: "user"})
}

// AddSystem adds a system message to the conversation, written as Submit
// writes a prompt.
func (a *Agent) AddSystem(ctx context.Context, text string) error {
	return a.add(ctx, systemMsg(text))
}

// Step sends the conversation and appends the reply; while the reply asks
// for tools it runs them (each tool's output, or its error, the result),
// appends all their results as one entry and asks again. It returns the
// last reply. Every message that entered the conversation is in the store
// when Step returns, also with an error.
func (a *Agent) Step(ctx context.Context) (*provider.Reply, error) {
	if n := len(a.conv); n == 0 || a.conv[n-1].Role != "user" {
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
		uses := toolUses(a.conv[len(a.conv)-1])
		if len(uses) == 0 || reply.StopReason != "toolUse" {
			return reply, nil
		}
		b := []byte(`{"role":"user","content":[`)
		for _, u := range uses {
			b = appendResult(b, u.ID, a.run(ctx, u))
		}
		b = append(b, "]}"...)
		if err := a.add(context.WithoutCancel(ctx), store.Msg{Raw: b, Role: "user"}); err != nil {
			return reply, err
		}
		if err := ctx.Err(); err != nil {
			return reply, err
		}
	}
}

// run runs the tool a toolUse block asks for and returns the result the
// model is sent.
func (a *Agent) run(ctx context.Context, u provider.Block) string {
	for _, t := range a.cfg.Tools {
		if t.Spec.Name != u.Name {
			continue
		}
		if t.Run == nil {
			return fmt.Sprintf("The tool %s cannot run here.", u.Name)
		}
		out, err := t.Run(ctx, string(u.Input))
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
func (a *Agent) add(ctx context.Context, m store.Msg) error {
	if !a.exists && !store.HasReply([]store.Msg{m}) {
		a.hold(m, true)
		return nil
	}
	ids, err := a.write(ctx, []store.Msg{m})
	if err != nil {
		return err
	}
	a.conv = append(a.conv, provider.ParseMessage(m.Raw))
	a.ids = append(a.ids, ids[0])
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
	o := store.AppendOptions{Provider: a.cfg.Provider.Provider, Model: a.cfg.Provider.Model, Cwd: a.cfg.Cwd, Parent: a.parent}
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
	a.leaf, a.parent = ids[len(ids)-1], ""
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

// pending returns the tool calls of the conversation's last message when
// it is a reply: calls no result answers.
func (a *Agent) pending() []provider.Block {
	if n := len(a.conv); n > 0 && a.conv[n-1].Role == "assistant" {
		return toolUses(a.conv[n-1])
	}
	return nil
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
