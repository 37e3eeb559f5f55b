package agents

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Title is what a cost report names a session by: the first line of its
// first prompt, as the user typed it (a Claude Code "user" line that is
// not meta and no tool result, a Codex user_message event, a pi user
// message, a panto user message), at most TitleMax characters; "" when
// none is found in the first titleLines lines or titleBytes bytes (a
// bound: a title is never worth reading a whole log).
func Title(src Source, f Format) string { return TitleStart(src, f, nil) }

// TitleStart is Title of a log whose start (whole lines, read from its
// offset 0) is in memory already: those lines are looked at where they
// are, the rest read as Title reads them. Search asks the title of every
// file it finds a hit in, whose start is in its buffer: read again
// through Title's buffer, 64 KiB were copied for a title a few lines in.
func TitleStart(src Source, f Format, start []byte) string {
	if f == Codex {
		if pages, _ := codexPages(src); pages != nil { // a paged rollout's title is its first page's
			defer pages.close()
			src.R, src.Size, start = pages, pages.size, nil
		}
		if t, ok := codexForkTitle(src, start); ok { // a fork's own first prompt, not its parent's replayed
			return t
		}
	}
	if f == OpenCode {
		if kind, _ := ocDocKind(src); kind == "storage" {
			return ocStorageTitle(src)
		}
	}
	if a := Of(f); a != nil && a.docList != "" {
		if doc, err := oneDocument(src); err == nil && doc {
			return docTitle(src, a) // on one line or several, as its reader reads it
		}
	}
	limit := min(src.Size, titleBytes)
	start = start[:min(int64(len(start)), limit)]
	n, off := 0, 0 // lines looked at, and where the next begins
	for ; n < titleLines; n++ {
		i := bytes.IndexByte(start[off:], '\n')
		if i < 0 {
			break
		}
		line := start[off : off+i+1]
		off += i + 1
		if len(line) > titleBuf {
			continue // as below: longer than the buffer
		}
		if t := titleOf(bytes.TrimSpace(line), f); t != "" {
			return t
		}
	}
	if n == titleLines || int64(off) >= limit {
		return ""
	}
	br := titleReaders.Get().(*bufio.Reader)
	br.Reset(io.NewSectionReader(src.R, int64(off), limit-int64(off)))
	defer titleReaders.Put(br)
	for ; n < titleLines; n++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			for err == bufio.ErrBufferFull { // a line longer than the buffer: no prompt worth a title
				_, err = br.ReadSlice('\n')
			}
			if err != nil {
				return ""
			}
			continue
		}
		if t := titleOf(bytes.TrimSpace(line), f); t != "" {
			return t
		}
		if err != nil {
			return ""
		}
	}
	return ""
}

// titleBuf is the size of Title's buffer: a longer line is passed over.
const titleBuf = 64 << 10

// titleReaders are Title's buffers, kept between calls: search asks the
// title of every file it finds a hit in.
var titleReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, titleBuf) }}

// TitleMax bounds a title, in characters.
const TitleMax = 80

const (
	titleLines = 400
	titleBytes = 4 << 20
)

// TitleOf is the title a line gives, if it is the first prompt of its
// format (see Title).
func TitleOf(line []byte, f Format) string { return titleOf(line, f) }

func titleOf(line []byte, f Format) string {
	mark, prompt := []byte(`"user"`), messagePrompt // panto's
	if a := Of(f); a != nil {
		mark, prompt = a.mark, a.prompt
	}
	if prompt == nil || len(line) == 0 || line[0] != '{' || !bytes.Contains(line, mark) || !gjson.ValidBytes(line) {
		return "" // parsed only where a prompt may be: the format's mark of one, as its agent writes it
	}
	return shortTitle(prompt(gjson.ParseBytes(line)))
}

// promptText is the text of a prompt's content: a string, or its first
// text block (tool results are no prompt).
func promptText(c gjson.Result, textType string) string {
	if c.Type == gjson.String {
		return c.Str
	}
	text := ""
	c.ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").Str {
		case textType:
			text = b.Get("text").Str
			return false
		case "tool_result", "toolResult":
			return false
		}
		return true
	})
	return text
}

// shortTitle is the first non-blank line of text, cut at TitleMax
// characters ("…" marks a cut), or "" for text that is only a command
// wrapper Claude Code writes (<command-name>…, <local-command-stdout>…).
func shortTitle(text string) string {
	text = strings.TrimSpace(text)
	if strings.HasPrefix(text, "<command-") || strings.HasPrefix(text, "<local-command-") || strings.HasPrefix(text, "Caveat: ") {
		return ""
	}
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = strings.TrimSpace(text[:i])
	}
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	if utf8.RuneCountInString(text) > TitleMax {
		r := []rune(text)
		text = string(r[:TitleMax-1]) + "…"
	}
	return text
}

// docTitle is Title of a log that is one JSON document: the first prompt
// among the elements of its list.
func docTitle(src Source, a *Agent) string {
	d := newDocStream(io.NewSectionReader(src.R, 0, min(src.Size, titleBytes)))
	title := ""
	found := errors.New("found")
	d.object(a.docList, func(string, []byte) error { return nil }, func(_ int64, v []byte) error {
		if bytes.Contains(v, a.mark) {
			if title = shortTitle(a.prompt(gjson.ParseBytes(v))); title != "" {
				return found
			}
		}
		return nil
	})
	return title
}
