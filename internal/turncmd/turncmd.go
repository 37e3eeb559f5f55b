// Package turncmd is panto-turn: one streamed provider turn, conversation
// (message lines) in, one assistant message line out.
package turncmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/internal/tty"
	"github.com/panto-dev/panto/pkg/agent"
	"github.com/panto-dev/panto/pkg/provider"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

const name = "panto-turn"

type grammar struct {
	Version      cli.VersionFlag `help:"Print the version and exit."`
	Provider     string          `enum:"anthropic,openai,offline," default:"" help:"anthropic, openai (and compatible servers) or offline (default: PANTO_API_STYLE, else the provider whose key is set)."`
	Model        string          `help:"Model (default: ANTHROPIC_MODEL or OPENAI_MODEL)."`
	BaseURL      string          `name:"base-url" help:"API base URL (default: ANTHROPIC_BASE_URL or OPENAI_BASE_URL)." placeholder:"URL"`
	MaxTokens    int             `name:"max-tokens" help:"Most output tokens (default: ANTHROPIC_MAX_TOKENS or 8192 for Anthropic; unset for OpenAI)." placeholder:"N"`
	Reasoning    string          `help:"Reasoning: off, low, medium, high (Anthropic also adaptive or a token budget; OpenAI passes it as reasoning_effort). Default: OPENAI_REASONING for OpenAI." placeholder:"LEVEL"`
	Tools        string          `type:"existingfile" help:"JSON array of {name, description, input_schema} offered to the model." placeholder:"FILE"`
	Stream       string          `enum:"auto,stderr,off" default:"auto" help:"Show the reply as it arrives on stderr: auto (when stderr is a terminal), stderr, off."`
	Timeout      time.Duration   `default:"10m" help:"Give up on the turn after this long."`
	Retries      int             `default:"2" help:"Retries of a failed request before any output (408, 409, 429, 5xx, connection errors)."`
	Partial      bool            `help:"On a broken stream, print what arrived with stopReason \"error\" (exit 1) instead of nothing (exit 3)."`
	User         string          `help:"Add this user prompt after the conversation read from stdin (stdin is not read when it is a terminal)." placeholder:"TEXT"`
	UserFile     string          `name:"user-file" help:"Add the user prompt FILE holds, as --user does (for a prompt of any size: an argument is at most 128 KiB)." placeholder:"FILE"`
	System       string          `help:"System prompt: sent first unless the conversation's last system message says the same (default: PANTO_SYSTEM_PROMPT)." placeholder:"TEXT"`
	SystemFile   string          `name:"system-file" type:"existingfile" help:"Read the system prompt from FILE." placeholder:"FILE"`
	Compact      bool            `help:"Instead of a reply, print a compaction line for panto-log append: the model's summary of the conversation before its last prompt (docs/agent.md). Needs --first-kept."`
	FirstKept    string          `name:"first-kept" help:"With --compact: the entry id of the conversation's last prompt, kept after the summary (panto-replay --get lastPromptId FILE)." placeholder:"ID"`
	Instructions string          `help:"With --compact: what the summary must keep, after panto's instructions." placeholder:"TEXT"`
	ShowConfig   bool            `name:"show-config" help:"Print the provider and model a turn would use (\"PROVIDER MODEL\") and exit."`
	APIVersion   string          `name:"api-version" help:"anthropic-version header (default: ANTHROPIC_API_VERSION or 2023-06-01)." placeholder:"V"`
}

// Main runs panto-turn in this process.
func Main() int {
	cli.QuietPipe()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, os.Args[1:], cli.OS())
}

// Run runs panto-turn with args.
func Run(ctx context.Context, args []string, proc cli.IO) int {
	var g grammar
	_, code, done := cli.Parse(name, "Run one streamed provider turn: message lines in, one assistant message line out.", &g, args, proc, nil)
	if done {
		return code
	}
	reply, err := g.run(ctx, proc)
	if reply != nil {
		line := append(reply.JSON(), '\n')
		if _, werr := proc.Stdout.Write(line); werr != nil && !cli.IsBrokenPipe(werr) {
			return cli.Fail(proc.Stderr, name, exitcode.New(exitcode.Failure, werr))
		}
		if err != nil {
			cli.Warnf(proc.Stderr, name, "%v: printed the partial reply", err)
			return exitcode.Findings
		}
	}
	return cli.Fail(proc.Stderr, name, err)
}

func (g *grammar) config(getenv func(string) string) (provider.Config, error) {
	cfg := provider.Config{Provider: g.Provider, Model: g.Model, BaseURL: g.BaseURL, MaxTokens: g.MaxTokens,
		Reasoning: g.Reasoning, Retries: g.Retries, Partial: g.Partial, APIVersion: g.APIVersion}
	if cfg.Provider == "" {
		switch style := getenv("PANTO_API_STYLE"); style {
		case "anthropic_messages", "anthropic":
			cfg.Provider = provider.Anthropic
		case "openai_chat", "openai":
			cfg.Provider = provider.OpenAI
		case "offline":
			cfg.Provider = provider.Offline
		case "":
			switch {
			case getenv("ANTHROPIC_API_KEY") != "":
				cfg.Provider = provider.Anthropic
			case getenv("OPENAI_API_KEY") != "":
				cfg.Provider = provider.OpenAI
			default:
				return cfg, exitcode.Usagef("no provider: set ANTHROPIC_API_KEY or OPENAI_API_KEY (and PANTO_API_STYLE), or use --provider offline to run without a key")
			}
		default:
			return cfg, exitcode.Usagef("PANTO_API_STYLE=%q: use anthropic_messages, openai_chat or offline", style)
		}
	}
	or := func(v *string, env, def string) {
		if *v == "" {
			*v = getenv(env)
		}
		if *v == "" {
			*v = def
		}
	}
	switch cfg.Provider {
	case provider.Anthropic, provider.Offline:
		if cfg.Provider == provider.Anthropic {
			or(&cfg.Model, "ANTHROPIC_MODEL", "claude-sonnet-4-20250514")
			or(&cfg.BaseURL, "ANTHROPIC_BASE_URL", "https://api.anthropic.com")
			cfg.APIKey = getenv("ANTHROPIC_API_KEY")
			if cfg.APIKey == "" {
				return cfg, exitcode.Usagef("no API key: set ANTHROPIC_API_KEY, or use --provider offline to run without one")
			}
		}
		or(&cfg.APIVersion, "ANTHROPIC_API_VERSION", "2023-06-01")
		if cfg.MaxTokens == 0 {
			cfg.MaxTokens = 8192
			if v := getenv("ANTHROPIC_MAX_TOKENS"); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil || n <= 0 {
					return cfg, exitcode.Usagef("ANTHROPIC_MAX_TOKENS=%q is not a positive number", v)
				}
				cfg.MaxTokens = n
			}
		}
	case provider.OpenAI:
		or(&cfg.Model, "OPENAI_MODEL", "gpt-4o")
		or(&cfg.BaseURL, "OPENAI_BASE_URL", "https://api.openai.com/v1")
		or(&cfg.Reasoning, "OPENAI_REASONING", "")
		cfg.APIKey = getenv("OPENAI_API_KEY")
		if cfg.APIKey == "" && strings.Contains(cfg.BaseURL, "api.openai.com") {
			return cfg, exitcode.Usagef("no API key: set OPENAI_API_KEY, or use --provider offline to run without one")
		}
	}
	if cfg.MaxTokens < 0 {
		return cfg, exitcode.Usagef("--max-tokens must be positive")
	}
	if err := provider.CheckReasoning(cfg); err != nil {
		return cfg, exitcode.Usagef("%v", err)
	}
	if g.Tools != "" {
		b, err := os.ReadFile(g.Tools)
		if err != nil {
			return cfg, exitcode.New(exitcode.Failure, err)
		}
		if cfg.Tools, err = provider.ParseTools(b); err != nil {
			return cfg, exitcode.Usagef("--tools %s: %v", g.Tools, err)
		}
	}
	return cfg, nil
}

func (g *grammar) run(ctx context.Context, proc cli.IO) (*provider.Reply, error) {
	cfg, err := g.config(proc.Getenv)
	if err != nil {
		return nil, err
	}
	if g.Compact != (g.FirstKept != "") {
		return nil, exitcode.Usagef("--compact and --first-kept go together (--first-kept \"$(panto-replay --get lastPromptId FILE)\")")
	}
	if g.ShowConfig {
		if cfg.Provider == provider.Offline && cfg.Model == "" {
			cfg.Model = provider.OfflineModel
		}
		_, err := fmt.Fprintf(proc.Stdout, "%s %s\n", cfg.Provider, cfg.Model)
		return nil, err
	}
	if g.UserFile != "" {
		if g.User != "" {
			return nil, exitcode.Usagef("--user and --user-file: give one")
		}
		b, err := os.ReadFile(g.UserFile)
		if err != nil {
			return nil, exitcode.Usagef("--user-file: %v", err)
		}
		if len(b) == 0 {
			return nil, exitcode.Usagef("--user-file %s is empty: nothing sent", g.UserFile)
		}
		g.User = string(b)
	}
	var conv []provider.Message
	if g.User == "" || !cli.IsTerminal(proc.Stdin) {
		cli.StdinHint(proc, name, "message lines (the conversation)")
		if conv, err = readConversation(proc.Stdin); err != nil {
			if errors.Is(err, session.ErrInvalidMsg) {
				return nil, exitcode.Usagef("%v", err)
			}
			return nil, exitcode.Failuref("read stdin: %v", err)
		}
	}
	if g.User != "" {
		conv = append(conv, provider.Message{Role: "user", Blocks: []provider.Block{{Type: "text", Text: g.User}}})
	}
	if len(conv) == 0 {
		return nil, exitcode.Usagef("no conversation on stdin: give message lines (panto-replay FILE | panto-turn) or --user TEXT")
	}
	system, err := g.system(proc.Getenv)
	if err != nil {
		return nil, err
	}
	conv = withSystem(conv, system)
	ctx, cancel := context.WithTimeout(ctx, g.Timeout)
	defer cancel()
	cfg.HTTP = &http.Client{}
	show := g.Stream == "stderr" || g.Stream == "auto" && cli.IsTerminal(proc.Stderr)
	var d *display
	if show {
		d = &display{w: bufio.NewWriter(proc.Stderr), color: proc.Getenv("NO_COLOR") == "" && proc.Getenv("TERM") != "dumb" && cli.IsTerminal(proc.Stderr)}
		cfg.OnDelta = d.delta
	}
	var reply *provider.Reply
	var summary *agent.Summary
	if g.Compact {
		if summary, err = agent.Summarize(ctx, cfg, conv, g.Instructions); err == nil {
			reply = summary.Reply
		}
	} else {
		reply, err = provider.Turn(ctx, cfg, conv)
	}
	if d != nil {
		d.end()
	}
	if errors.Is(err, agent.ErrNothingToCompact) {
		return nil, exitcode.Usagef("--compact: %v", err)
	}
	if err != nil {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			err = fmt.Errorf("%s: no complete reply within --timeout %s: nothing printed", cfg.Provider, g.Timeout)
		case ctx.Err() != nil:
			err = fmt.Errorf("%s: interrupted: nothing printed", cfg.Provider)
		}
		return reply, exitcode.New(exitcode.Failure, redact(err, cfg.APIKey))
	}
	if cfg.Provider == provider.Offline {
		reply.Provider = provider.Offline
	}
	if summary != nil {
		line := append(store.CompactionLine(summary.Summary, g.FirstKept, summary.TokensBefore, store.CompactionRequest(reply.JSON())), '\n')
		if _, err := proc.Stdout.Write(line); err != nil && !cli.IsBrokenPipe(err) {
			return nil, exitcode.New(exitcode.Failure, err)
		}
		return nil, nil
	}
	return reply, nil
}

// system is the system prompt a turn is given: --system, --system-file
// (its final newlines left out), else PANTO_SYSTEM_PROMPT ("" for none).
func (g *grammar) system(getenv func(string) string) (string, error) {
	switch {
	case g.System != "" && g.SystemFile != "":
		return "", exitcode.Usagef("--system and --system-file: give one")
	case g.SystemFile != "":
		if fi, err := os.Stat(g.SystemFile); err == nil && !fi.Mode().IsRegular() {
			return "", exitcode.Usagef("--system-file %s: not a regular file: give one", g.SystemFile) // a FIFO would be waited on
		}
		b, err := os.ReadFile(g.SystemFile)
		if err != nil {
			return "", exitcode.Failuref("--system-file: %v", err)
		}
		return strings.TrimRight(string(b), "\n"), nil // a file's last line ends in a newline the prompt does not have
	case g.System != "":
		return g.System, nil
	}
	return getenv("PANTO_SYSTEM_PROMPT"), nil
}

// withSystem is conv with the system prompt system first, unless system is
// "" or conv's last system message is that text already (a session whose
// system entries panto-replay sends).
func withSystem(conv []provider.Message, system string) []provider.Message {
	if system == "" {
		return conv
	}
	for k := len(conv) - 1; k >= 0; k-- {
		if conv[k].Role != "system" {
			continue
		}
		var parts []string
		for _, b := range conv[k].Blocks {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		if strings.Join(parts, "\n") == system {
			return conv
		}
		break
	}
	return append([]provider.Message{{Role: "system", Blocks: []provider.Block{{Type: "text", Text: system}}}}, conv...)
}

// redact removes the API key from an error, whatever echoed it.
type redacted struct{ msg string }

func (r redacted) Error() string { return r.msg }

func redact(err error, key string) error {
	if key == "" || !strings.Contains(err.Error(), key) {
		return err
	}
	return redacted{strings.ReplaceAll(err.Error(), key, "[redacted]")}
}

// display shows the reply on stderr as it arrives: thinking dimmed (when
// colour is allowed), tool calls named.
type display struct {
	w     *bufio.Writer
	color bool
	kind  string
}

// delta shows a piece of the reply as it arrives, for people: the model's
// words are escaped as every human view escapes a log's (internal/tty), so a
// reply cannot set a window title, clear the screen or reorder a line.
func (d *display) delta(kind, text string) {
	text = tty.Text(text)
	if kind != d.kind && d.kind != "" {
		d.w.WriteString("\n")
	}
	switch kind {
	case "thinking":
		if d.color {
			text = "\033[2m" + text + "\033[0m"
		}
	case "toolUse":
		text = "[tool call: " + text + "]"
	}
	d.kind = kind
	d.w.WriteString(text)
	d.w.Flush()
}

func (d *display) end() {
	if d.kind != "" {
		d.w.WriteString("\n")
	}
	d.w.Flush()
}

// readConversation reads message lines (what panto-replay prints), each
// validated as panto-log validates it.
func readConversation(r io.Reader) ([]provider.Message, error) {
	var msgs []provider.Message
	err := scan.MessageLines(r, func(n int, line []byte) error {
		if _, err := session.CheckMessage(line); err != nil {
			return fmt.Errorf("stdin line %d: %w", n, err)
		}
		msgs = append(msgs, provider.ParseMessage(line))
		return nil
	})
	return msgs, err
}
