package replay

import (
	"fmt"
	"io"
	"strings"

	"github.com/panto-dev/panto/internal/tty"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// WriteMarkdown prints the path as a readable transcript: a heading per
// message with its role (and, for replies, model, stop reason and usage),
// text as is, thinking folded in <details>, tool calls and results fenced.
// The agent's own messages are folded in <details> too, as the page folds
// them: its instructions (a system or developer message: a Codex
// transcript opened with a screen of its permission instructions), the
// context it sends as a user message (session.Internal: a
// <system-reminder>, AGENTS.md), and a compaction's summary.
// Every string of the log is shown with its control characters escaped
// (package tty): a transcript goes to a terminal, where a reply's escape
// sequence would set the title or write the clipboard.
func (s *Session) WriteMarkdown(w io.Writer, path []int32) error {
	for _, i := range path {
		m, err := s.Message(i)
		if err != nil {
			return err
		}
		if m == nil {
			if err := s.markdownCompaction(w, i); err != nil {
				return err
			}
			continue
		}
		msg := gjson.Parse(asString(m)) // no copy of a message that may be a 200 MB tool result
		n := s.Log.Nodes[i]
		head := "## " + n.Role.String()
		if n.Role == session.User {
			if st, ok := s.Log.Active(i); ok && st.Model != agentsUnknown {
				head += " · " + st.Provider + "/" + st.Model
			}
		}
		if n.Role == session.Assistant {
			head += " · " + msg.Get("provider").Str + "/" + msg.Get("model").Str
			if r := msg.Get("stopReason"); r.Exists() {
				head += " · " + r.Str
			}
			if u := msg.Get("usage"); u.Exists() {
				head += " · " + usageText(u)
			}
		}
		// Written piece by piece, never into one string first: a text can be
		// as large as the line.
		p := pieceWriter{w: w}
		p.put(tty.Line(head), "\n\n")
		msg.Get("content").ForEach(func(_, c gjson.Result) bool {
			switch c.Get("type").Str {
			case "text":
				t := textField(c, "text")
				switch {
				case n.Role == session.System && strings.TrimSpace(t) != "":
					p.fold("the agent's instructions ("+plural(lines(t), "line", "lines")+")", t)
				case n.Role == session.User && session.Internal(t):
					what := "the agent's own message"
					if tag := internalTag(t); tag != "" {
						what += " " + tty.Line(tag)
					}
					p.fold(what+" ("+plural(lines(t), "line", "lines")+"), not the user's words", t)
				default:
					p.put(tty.Text(t), "\n\n")
				}
			case "thinking":
				p.put("<details><summary>thinking</summary>\n\n", tty.Text(textField(c, "thinking")), "\n\n</details>\n\n")
			case "redactedThinking":
				p.put("*(redacted thinking)*\n\n")
			case "toolUse":
				p.put("**tool call** `", tty.Line(c.Get("name").Str), "` (", tty.Line(c.Get("id").Str), ")\n\n")
				p.fence(tty.Text(textField(c, "input")), "json")
			case "toolResult":
				p.put("**tool result** (", tty.Line(c.Get("toolUseId").Str), ")\n\n")
				p.fence(tty.Text(textField(c, "content")), "")
			}
			return p.err == nil
		})
		if p.err != nil {
			return p.err
		}
	}
	return nil
}

// markdownCompaction prints node i when it is a compaction entry: marked,
// with its summary (the messages before it stay shown: the transcript is
// the whole path).
func (s *Session) markdownCompaction(w io.Writer, i int32) error {
	c, err := s.compactionAt(i)
	if c == nil || err != nil {
		return err
	}
	kept := "kept from " + tty.Line(c.FirstKeptEntryID)
	if c.FirstKeptEntryID == "" {
		kept = "nothing before it kept"
	}
	p := pieceWriter{w: w}
	p.put(fmt.Sprintf("## compaction · %d tokens before · %s\n\n", c.TokensBefore, kept))
	p.fold("the summary ("+plural(lines(c.Summary), "line", "lines")+")", c.Summary)
	return p.err
}

func usageText(u gjson.Result) string {
	var parts []string
	for _, k := range []string{"input", "output", "cacheRead", "cacheWrite", "cacheWrite1h", "reasoning"} {
		if v := u.Get(k); v.Exists() {
			parts = append(parts, k+" "+v.Raw)
		}
	}
	return strings.Join(parts, ", ")
}

// pieceWriter writes strings to w until the first error, which it keeps.
type pieceWriter struct {
	w   io.Writer
	err error
}

func (p *pieceWriter) put(ss ...string) {
	for _, s := range ss {
		if p.err == nil {
			_, p.err = io.WriteString(p.w, s)
		}
	}
}

// fold writes text folded in <details> under summary (a line of
// plain text), and a blank line after.
func (p *pieceWriter) fold(summary, text string) {
	p.put("<details><summary>", summary, "</summary>\n\n", tty.Text(strings.TrimSuffix(text, "\n")), "\n\n</details>\n\n")
}

// fence writes text in a code fence longer than any run of backticks in
// it, and a blank line after.
func (p *pieceWriter) fence(text, lang string) {
	n := 3
	for run, i := 0, 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", n)
	p.put(f, lang, "\n", strings.TrimSuffix(text, "\n"), "\n", f, "\n\n")
}

// agentsUnknown is the model an import stamps a prompt with when the log
// has not named one yet (a Claude Code session's first prompts): the
// transcript and the page show no stamp for it, not "anthropic/unknown",
// and no change of model from it.
const agentsUnknown = "unknown"
