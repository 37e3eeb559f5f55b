package session

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// TitleLen is the most characters a title has.
const TitleLen = 80

// The entries a title is looked for in: the first TitleLines (after the
// header), those of at most TitleLineMax bytes.
const (
	TitleLines   = 64
	TitleLineMax = 1 << 20
)

// Titles finds what a session is called, from its lines in order (the
// header first): the agent's own title for an imported session (Claude
// Code's custom-title over its ai-title over its summary, the last of each;
// pi's session name), else the first user prompt that says something.
// The header names the agent (its origin's; panto for a session of its
// own). Only the first TitleLines entries are looked at, and of them only
// lines of at most TitleLineMax bytes, so that a listing reads a few
// kilobytes a session whatever its size, the same in every store.
type Titles struct {
	Agent   string
	prompt  string
	command string // a slash command ("/review pr 12"): the title when no prompt says more
	own     string
	rank    int
}

// Title is the title found, "" when none.
func (t *Titles) Title() string {
	if t.own != "" {
		return t.own
	}
	return t.Prompt()
}

// Prompt is the first user prompt that says something, "" when none.
func (t *Titles) Prompt() string {
	if t.prompt == "" {
		return t.command
	}
	return t.prompt
}

// Done says whether no later line can change the title: a prompt is found
// and the agent writes no titles of its own.
func (t *Titles) Done() bool { return t.prompt != "" && t.Agent == "panto" }

// Line reads one line.
func (t *Titles) Line(line []byte) {
	typ := gjson.GetBytes(line, "type").Str
	switch typ {
	case "session":
		t.Agent = "panto"
		if a := gjson.GetBytes(line, "origin.agent"); a.Type == gjson.String && a.Str != "" {
			t.Agent = a.Str
		}
	case "message":
		if t.prompt != "" || gjson.GetBytes(line, "message.role").Str != "user" {
			return
		}
		c := gjson.GetBytes(line, "message.content")
		take := func(text string) bool {
			p := PromptTitle(text)
			if Internal(text) {
				if t.command == "" {
					t.command = p
				}
				return false
			}
			t.prompt = p
			return p != ""
		}
		if c.Type == gjson.String {
			take(c.Str)
			return
		}
		c.ForEach(func(_, b gjson.Result) bool {
			return b.Get("type").Str != "text" || !take(b.Get("text").Str)
		})
	case "claude.custom-title", "claude.ai-title", "claude.summary", "pi.session_info":
		key, rank := "line.summary", 1
		switch typ {
		case "claude.custom-title":
			key, rank = "line.customTitle", 3
		case "pi.session_info":
			key, rank = "line.name", 3
		case "claude.ai-title":
			key, rank = "line.aiTitle", 2
		}
		if s := PromptTitle(gjson.GetBytes(line, key).Str); s != "" && rank >= t.rank {
			t.own, t.rank = s, rank
		}
	}
}

// internalTags are the tags Claude Code wraps its own messages in, written
// as if the user had: a prompt made only of them says nothing.
var internalTags = []string{"command-name", "command-message", "command-args", "local-command-stdout",
	"local-command-stderr", "local-command-caveat", "system-reminder", "user-prompt-submit-hook"}

// Internal says whether text is one of the agent's own messages, written
// in the user's place, not the user's words: Claude Code's (a slash
// command, its output, a caveat, a reminder: it starts with one of their
// tags), Codex's (its context and instructions: a text that is wholly one
// element, <environment_context>…</environment_context>, or the AGENTS.md
// it was given).
func Internal(text string) bool {
	s := strings.TrimSpace(text)
	for _, tag := range internalTags {
		if strings.HasPrefix(s, "<"+tag+">") {
			return true
		}
	}
	if strings.HasPrefix(s, "# AGENTS.md instructions for ") {
		return true
	}
	if tag := leadingTag(s); tag != "" && strings.HasSuffix(s, "</"+tag+">") {
		return true
	}
	return false
}

// leadingTag is the name of the tag s starts with (<name>, lowercase
// letters, "_" and "-"), "" when none.
func leadingTag(s string) string {
	if !strings.HasPrefix(s, "<") {
		return ""
	}
	i := 1
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] == '_' || s[i] == '-') {
		i++
	}
	if i == 1 || i >= len(s) || s[i] != '>' {
		return ""
	}
	return s[1:i]
}

// PromptTitle makes a title of a prompt: Claude Code's internal tags and
// what they hold left out (a slash command kept as "/name args"), white
// space made single spaces, control characters dropped, cut at TitleLen
// characters with "…".
func PromptTitle(text string) string {
	if Internal(text) {
		name := between(text, "<command-name>", "</command-name>")
		if name == "" {
			return ""
		}
		text = name + " " + between(text, "<command-args>", "</command-args>")
	}
	var out []rune
	space := false
	for _, r := range text {
		if r == utf8.RuneError || unicode.IsControl(r) && !unicode.IsSpace(r) {
			continue
		}
		if unicode.IsSpace(r) {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		if len(out) == TitleLen {
			out[TitleLen-1] = '…'
			break
		}
		out = append(out, r)
	}
	return string(out)
}

func between(s, open, close string) string {
	i := strings.Index(s, open)
	if i < 0 {
		return ""
	}
	s = s[i+len(open):]
	if j := strings.Index(s, close); j >= 0 {
		s = s[:j]
	}
	return strings.TrimSpace(s)
}

// TitleOf finds what the session in r is called, its first prompt, and who
// wrote it
// (Titles): it reads the header and the entries a title is looked
// for in, a few kilobytes for most sessions; a line longer than
// TitleLineMax is passed over without being held.
func TitleOf(r io.ReaderAt, size int64) (title, prompt, agent string) {
	br := titleReaders.Get().(*bufio.Reader)
	defer titleReaders.Put(br)
	br.Reset(io.NewSectionReader(r, 0, size))
	var t Titles
	var long []byte
	for n := 0; n <= TitleLines && !t.Done(); n++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull { // a long line: gathered up to the limit, else passed over
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				if long != nil && len(long)+len(line) <= TitleLineMax+1 {
					long = append(long, line...)
				} else {
					long = nil
				}
			}
			line = long
			if err == nil && line == nil {
				continue
			}
		}
		if err != nil { // a torn tail, or the end
			break
		}
		if line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r")); len(line) <= TitleLineMax {
			t.Line(line)
		}
		if n == 0 && t.Agent == "" {
			break // no header: nothing to tell
		}
	}
	return t.Title(), t.Prompt(), t.Agent
}

// titleReaders are Title's buffers, used again: a listing reads thousands
// of heads.
var titleReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 8<<10) }}
