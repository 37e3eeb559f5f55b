package agents

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tidwall/gjson"
)

// ocDocument reads an OpenCode log that is one JSON document: an
// `opencode export` file, or a session file of the storage/ tree.
func (c *converter) ocDocument() error {
	kind, err := ocDocKind(c.src)
	if err != nil {
		return err
	}
	switch kind {
	case "export":
		return c.ocExport()
	case "storage":
		return c.ocStorage()
	case "storage-piece":
		return fmt.Errorf("%w: a message or part of OpenCode's storage/ tree, not a session: read its session (storage/session/PROJECT/SESSION.json) or the data directory", ErrNotALog)
	}
	return ErrNotALog
}

// ocDocKind tells an OpenCode JSON document by its first members: an
// export ({info, messages}), a storage/ session ({id: "ses_…", projectID,
// …}), a storage/ message or part (sessionID, or messageID); "" for none.
func ocDocKind(src Source) (string, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(io.NewSectionReader(src.R, 0, src.Size), 64<<10))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", nil
	}
	keys := map[string]bool{}
	var id string
	for n := 0; n < 64 && dec.More(); n++ {
		t, err := dec.Token()
		if err != nil {
			break
		}
		k, _ := t.(string)
		keys[k] = true
		if k == "info" || k == "messages" {
			if keys["info"] && keys["messages"] || k == "messages" {
				break
			}
		}
		var v json.RawMessage
		if k == "info" || k == "id" {
			if err := dec.Decode(&v); err != nil {
				break
			}
			if k == "id" {
				json.Unmarshal(v, &id)
			}
			continue
		}
		if err := skipValue(dec); err != nil {
			break
		}
	}
	switch {
	case keys["info"] && keys["messages"], keys["messages"] && !keys["id"], keys["info"] && !keys["id"]:
		return "export", nil
	case strings.HasPrefix(id, "ses_") && keys["projectID"]:
		return "storage", nil
	case keys["messageID"] && keys["sessionID"], strings.HasPrefix(id, "msg_") && keys["sessionID"]:
		return "storage-piece", nil
	}
	return "", nil
}

// skipValue reads past the next value of dec without keeping it.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// ocExport reads an `opencode export` document message by message (a
// docStream: a document of hundreds of MB is never held whole, only its
// largest message). A document cut short gives the messages before the
// cut, and says so (Torn).
func (c *converter) ocExport() error {
	info, err := c.ocExportInfo()
	if err != nil {
		return err
	}
	s := &ocSession{id: info.Get("id").Str, parent: info.Get("parentID").Str, dir: info.Get("directory").Str,
		title: info.Get("title").Str, version: info.Get("version").Str, created: info.Get("time.created").Int(), path: c.src.Path}
	if s.parent == "REDACTED" {
		s.parent = ""
	}
	started := false
	start := func(first int64) error {
		if started {
			return nil
		}
		started = true
		if s.created <= 0 {
			s.created = first
		}
		return c.ocEmit(&ocSession{id: s.id, parent: s.parent, dir: s.dir, title: s.title, version: s.version, created: s.created, path: s.path})
	}
	older := ocBefore116(s.version)
	n := 0
	d := newDocStream(io.NewSectionReader(c.src.R, 0, c.src.Size))
	err = d.object("messages", func(string, []byte) error { return nil }, func(_ int64, raw []byte) error {
		n++
		m := gjson.ParseBytes(raw)
		mi := m.Get("info")
		msg := ocMessage{id: strings.Clone(mi.Get("id").Str), created: mi.Get("time.created").Int(), data: strings.Clone(mi.Raw), raw: d.Line()}
		m.Get("parts").ForEach(func(_, p gjson.Result) bool {
			if c.opt.Content || p.Get("type").Str == "step-finish" { // a cost needs only the usage
				msg.parts = append(msg.parts, ocPart{id: strings.Clone(p.Get("id").Str), data: strings.Clone(p.Raw)})
			}
			return true
		})
		if msg.id == "" || msg.id == "REDACTED" {
			msg.id = fmt.Sprintf("message %d", n) // Entire's redaction: still one message each
		}
		if err := start(msg.created); err != nil {
			return err
		}
		return c.ocMessage(s, &msg, older)
	})
	if errors.Is(err, errDocCut) {
		if err := start(0); err != nil {
			return err
		}
		c.stats.Torn = max(d.Line(), 1)
		c.stats.add("opencode export cut short (messages after the last whole one not read)", 1)
		return nil
	}
	if err != nil {
		return err
	}
	return start(0)
}

// errInfo stops the look for an export's "info" at its first message.
var errInfo = errors.New("info found")

// ocExportInfo reads the export's "info" member (the session): before its
// messages, as OpenCode writes it, else wherever it is.
func (c *converter) ocExportInfo() (gjson.Result, error) {
	var info gjson.Result
	member := func(key string, v []byte) error {
		if key == "info" {
			info = gjson.Parse(string(v))
			if info.Get("id").Type == gjson.String {
				return errInfo
			}
		}
		return nil
	}
	for _, whole := range []bool{false, true} {
		d := newDocStream(io.NewSectionReader(c.src.R, 0, c.src.Size))
		err := d.object("messages", member, func(int64, []byte) error {
			if !whole {
				return errInfo // the first message, and no info before it: look at the whole
			}
			return nil
		})
		if info.Get("id").Type == gjson.String {
			return info, nil
		}
		if !errors.Is(err, errInfo) {
			break
		}
	}
	return gjson.Result{}, fmt.Errorf("%w: an OpenCode export without its session (\"info\" with an id), or cut short before it", ErrNotALog)
}

// ocStorage reads a session of the storage/ tree (OpenCode up to 1.1):
// storage/session/PROJECT/SESSION.json, its messages in
// storage/message/SESSION/*.json, their parts in storage/part/MESSAGE/*.json.
// Ids come from the file names, not the JSON (earlier migrations moved
// files without changing them).
func (c *converter) ocStorage() error {
	b, err := io.ReadAll(io.NewSectionReader(c.src.R, 0, c.src.Size))
	if err != nil {
		return err
	}
	info := gjson.ParseBytes(b)
	id := strings.TrimSuffix(filepath.Base(c.src.Path), ".json")
	if !strings.HasPrefix(id, "ses_") {
		id = info.Get("id").Str
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(c.src.Path))) // storage/
	s := &ocSession{id: id, parent: info.Get("parentID").Str, dir: info.Get("directory").Str, title: info.Get("title").Str,
		version: info.Get("version").Str, created: info.Get("time.created").Int(), path: c.src.Path}
	files, err := filepath.Glob(filepath.Join(root, "message", id, "*.json"))
	if err != nil {
		return err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		m := gjson.ParseBytes(data)
		if !m.IsObject() {
			c.stats.add("opencode storage files that are no JSON object (not read)", 1)
			c.stats.Corrupt = append(c.stats.Corrupt, 0)
			continue
		}
		msg := ocMessage{id: strings.TrimSuffix(filepath.Base(f), ".json"), created: m.Get("time.created").Int(), data: string(data)}
		parts, _ := filepath.Glob(filepath.Join(root, "part", msg.id, "*.json"))
		for _, pf := range parts {
			pd, err := os.ReadFile(pf)
			if err != nil {
				return err
			}
			if !gjson.ValidBytes(pd) {
				c.stats.add("opencode storage files that are no JSON object (not read)", 1)
				c.stats.Corrupt = append(c.stats.Corrupt, 0)
				continue
			}
			msg.parts = append(msg.parts, ocPart{id: strings.TrimSuffix(filepath.Base(pf), ".json"), data: string(pd)})
		}
		sort.Slice(msg.parts, func(i, j int) bool { return msg.parts[i].id < msg.parts[j].id })
		s.msgs = append(s.msgs, msg)
	}
	sort.SliceStable(s.msgs, func(i, j int) bool {
		a, b := s.msgs[i], s.msgs[j]
		if a.created != b.created {
			return a.created < b.created
		}
		return a.id < b.id
	})
	if s.created <= 0 && len(s.msgs) > 0 {
		s.created = s.msgs[0].created
	}
	if c.opt.Prompts && !c.opt.Content {
		c.ocPrompts(s, nil) // every part is read already
	}
	return c.ocEmit(s)
}

// ocStorageTitle is Title of a session of the storage/ tree: its first
// prompt, in the message files beside it (the session's own file holds
// none).
func ocStorageTitle(src Source) string {
	title := ""
	done := errors.New("titled")
	Read(src, OpenCode, Options{Prompts: true}, func(*Header) error { return nil }, func(e *Entry) error {
		if e.Role == "user" && len(e.Body) > 0 {
			if title = ocTitle(e.Body); title != "" {
				return done
			}
		}
		return nil
	})
	return title
}

// ocStream reads the JSON Lines `opencode run --format json` prints: one
// event per part, in order; the parts of one message are consecutive.
// They name no model and hold no prompt: each message is an assistant
// reply of an unknown model (its cost unknown, never $0).
func (c *converter) ocStream() error {
	lr := c.newLines()
	var s *ocSession
	var cur *ocMessage
	where := map[string]int{} // part id → its index in cur.parts: an update replaces it
	var errs []string
	var errAt int64 // the first error's time and line, for errors no part follows
	errLine := 0
	flush := func() error {
		if cur == nil {
			return nil
		}
		data := `{"role":"assistant","time":{"created":` + fmt.Sprint(cur.created) + `}`
		finish := ""
		for _, p := range cur.parts {
			if v := gjson.Parse(p.data); v.Get("type").Str == "step-finish" {
				finish = v.Get("reason").Str
			}
		}
		if finish != "" {
			data += `,"finish":` + string(jsonString(finish))
		}
		if len(errs) > 0 {
			data += `,"error":` + string(jsonString(strings.Join(errs, "; ")))
		}
		cur.data = data + "}"
		err := c.ocMessage(s, cur, false)
		cur, errs = nil, nil
		clear(where)
		return err
	}
	for {
		n, _, raw, err := c.line(lr)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		l := gjson.ParseBytes(raw)
		if s == nil {
			sid := l.Get("sessionID").Str
			if sid == "" {
				return ErrNotALog
			}
			s = &ocSession{id: strings.Clone(sid), created: l.Get("timestamp").Int(), path: c.src.Path}
			if err := c.ocEmit(s); err != nil {
				return err
			}
		}
		part := l.Get("part")
		if !part.IsObject() {
			if l.Get("type").Str == "error" {
				if len(errs) == 0 {
					errAt, errLine = l.Get("timestamp").Int(), n
				}
				errs = append(errs, ocError(l.Get("error")))
				continue
			}
			c.e = Entry{Line: n, ID: c.id("line\x00" + c.at(n)), ParentID: c.last}
			c.e.Kind = "opencode.event"
			c.stats.add("opencode events kept", 1)
			c.e.Body = c.kept(ocAgent, raw)
			if err := c.emit(&c.e); err != nil {
				return err
			}
			continue
		}
		mid := part.Get("messageID").Str
		if cur != nil && cur.id != mid {
			if err := flush(); err != nil {
				return err
			}
		}
		if cur == nil {
			cur = &ocMessage{id: strings.Clone(mid), created: l.Get("timestamp").Int(), raw: n}
		}
		p := ocPart{id: strings.Clone(part.Get("id").Str), data: string(part.Raw)}
		if i, ok := where[p.id]; ok && p.id != "" {
			cur.parts[i] = p
		} else {
			where[p.id] = len(cur.parts)
			cur.parts = append(cur.parts, p)
		}
	}
	if s == nil {
		return ErrNotALog
	}
	if cur == nil && len(errs) > 0 {
		// Errors after the last part (or with no part at all: the run
		// failed before its first step) end a reply of their own, shown.
		cur = &ocMessage{id: fmt.Sprintf("error-line-%d", errLine), created: errAt, raw: errLine}
	}
	return flush()
}

func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
