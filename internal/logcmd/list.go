package logcmd

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/internal/tty"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/store"
)

type listCmd struct {
	All    bool   `help:"Sessions of every project, and every agent's sessions where the agent keeps them (a log and its import: one row)."`
	Agent  string `help:"Only this agent's sessions (claude, codex, pi, …, or panto), every project's, read in place." placeholder:"AGENT"`
	JSON   bool   `help:"One JSON object per session."`
	Search string `help:"Only sessions whose title or first prompt holds TEXT (letter case aside)." placeholder:"TEXT"`
}

// Run runs the subcommand.
func (c *listCmd) Run(e *env) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	return c.run(e.ctx, st, e.proc, e.out)
}

// sessions describes the sessions of this directory (or of all), newest
// activity first.
func sessions(ctx context.Context, st store.Store, proc cli.IO, all bool) ([]store.Summary, error) {
	list, err := st.List(ctx, proc.Cwd, all, func(err error) {
		if errors.Is(err, catalog.ErrLeftover) {
			cli.Warnf(proc.Stderr, name, "%v", err)
			return
		}
		cli.Warnf(proc.Stderr, name, "%v: skipped (a session is a regular file)", err)
	})
	if err != nil {
		return nil, stores.ErrorOf(err, proc.Cwd, stores.Read)
	}
	return list, nil
}

func (c *listCmd) run(ctx context.Context, st store.Store, proc cli.IO, out io.Writer) error {
	// A listing lives a few milliseconds and holds what it builds: the
	// collector, started at the default 4 MB, costs a quarter of a list of
	// 10,000 sessions (54 → 41 ms, BENCHMARKS.md) for no memory returned.
	debug.SetGCPercent(400)
	list, err := sessions(ctx, st, proc, c.All || c.Agent != "")
	if err != nil {
		return err
	}
	if _, files := st.(store.Files); files && (c.All || c.Agent != "") && c.Agent != "panto" {
		if c.Agent != "" && agents.Named(c.Agent) == nil {
			return exitcode.Usagef("--agent %q is not an agent: give %s", c.Agent, agentNames())
		}
		if c.Agent != "" {
			list = onlyAgent(list, c.Agent)
		}
		list = inPlace(list, proc, c.Agent)
		c.All = true
	} else if c.Agent == "panto" {
		list = onlyAgent(list, "panto")
		c.All = true
	}
	if c.Search != "" {
		list = search(list, c.Search)
	}
	if c.JSON {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		for _, s := range list {
			if err := enc.Encode(s); err != nil {
				return err
			}
		}
		return nil
	}
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	n := catalog.ShortLen(ids)
	// The cells of every row in one slice, rows of a fixed width (a
	// listing has thousands): id, created, modified, messages, [cwd],
	// [damage]; "" where a row has no such cell.
	head := []string{"ID", "CREATED", "MODIFIED", "MESSAGES", "AGENT"}
	if c.All {
		head = append(head, "CWD")
	}
	head = append(head, "TITLE")
	width := len(head)
	cells := make([]string, 0, (len(list)+1)*width)
	cells = append(cells, head...)
	fmtMinute := minutes{}
	for _, s := range list {
		id := s.ID
		if len(id) > n {
			id = id[:n]
		}
		// What a row or a log says is escaped: a cwd that holds a
		// terminal escape or a newline must neither reach the terminal
		// raw nor forge a row.
		cells = append(cells, tty.Line(id), fmtMinute.of(s.Created), fmtMinute.of(s.Modified), strconv.Itoa(s.Messages), tty.Line(s.Agent))
		if c.All {
			cells = append(cells, tty.Line(s.Cwd))
		}
		title := tty.Line(s.Title)
		if s.Problem != "" {
			title = strings.TrimSpace("(damaged: run panto-fsck) " + title)
		}
		cells = append(cells, title)
	}
	rows := make([][]string, 0, len(list)+1)
	for i := 0; i < len(cells); i += width {
		rows = append(rows, cells[i:i+width])
	}
	columns := cli.Columns(proc)
	return writeColumnsFit(out, fitList(rows, columns, c.All), columns)
}

// fitList makes a listing fit columns (0: no limit): a long CWD keeps
// its end ("…/GitStore/entire-graph", where directories differ) in at
// most two fifths of the room left by the other columns; if the title
// still has less than titleRoom, CREATED goes (MODIFIED stays); the title
// is cut at its end by writeColumnsFit. Ids, times and counts are never
// cut.
func fitList(rows [][]string, columns int, hasCwd bool) [][]string {
	const titleRoom = 20
	if columns <= 0 || len(rows) == 0 {
		return rows
	}
	widths := func(rows [][]string) []int {
		width := make([]int, len(rows[0]))
		for _, r := range rows {
			for i, c := range r {
				width[i] = max(width[i], utf8.RuneCountInString(c))
			}
		}
		return width
	}
	// room is what the title has once the CWD is cut to fit, and the
	// CWD's width then.
	room := func(rows [][]string) (title, cwd int) {
		width := widths(rows)
		n := len(width)
		fixed := 0
		for _, w := range width[:n-1] {
			fixed += w + 2
		}
		if !hasCwd {
			return columns - fixed, 0
		}
		fixed -= width[n-2] + 2
		rest := columns - fixed
		cwd = width[n-2]
		if cwd+2+min(width[n-1], titleRoom) > rest {
			cwd = min(cwd, max(12, rest*2/5))
		}
		return rest - cwd - 2, cwd
	}
	title, cwd := room(rows)
	if title < titleRoom && rows[0][1] == "CREATED" {
		for i, r := range rows {
			rows[i] = append(r[:1:1], r[2:]...)
		}
		title, cwd = room(rows)
	}
	if hasCwd {
		at := len(rows[0]) - 2
		for _, r := range rows[1:] {
			if c := []rune(r[at]); len(c) > cwd {
				r[at] = "…" + string(c[len(c)-cwd+1:])
			}
		}
	}
	return rows
}

// search keeps the sessions whose title or first prompt holds text,
// letter case aside.
// onlyAgent keeps the sessions of agent (panto's own: "panto").
func onlyAgent(list []store.Summary, agent string) []store.Summary {
	out := list[:0]
	for _, s := range list {
		if s.Agent == agent || agent == "panto" && s.Agent == "" {
			out = append(out, s)
		}
	}
	return out
}

func search(list []store.Summary, text string) []store.Summary {
	text = strings.ToLower(text)
	out := list[:0]
	for _, s := range list {
		if strings.Contains(strings.ToLower(s.Title), text) || strings.Contains(strings.ToLower(s.Prompt), text) {
			out = append(out, s)
		}
	}
	return out
}

// minutes formats times in local time as 2006-01-02 15:04, each minute
// once: a listing formats thousands, most in a few minutes.
type minutes map[int64]string

func (m minutes) of(t time.Time) string {
	k := t.Unix() / 60
	if t.Unix()%60 < 0 {
		k-- // before 1970: floor, not truncation
	}
	s, ok := m[k]
	if !ok {
		s = minute(t)
		m[k] = s
	}
	return s
}

// minute formats t in local time as 2006-01-02 15:04, by hand.
func minute(t time.Time) string {
	t = t.Local()
	y, mo, d := t.Date()
	h, mi, _ := t.Clock()
	b := make([]byte, 0, 16)
	b = strconv.AppendInt(b, int64(y), 10)
	for _, f := range []struct {
		sep byte
		v   int
	}{{'-', int(mo)}, {'-', d}, {' ', h}, {':', mi}} {
		b = append(b, f.sep, byte('0'+f.v/10), byte('0'+f.v%10))
	}
	return string(b)
}
