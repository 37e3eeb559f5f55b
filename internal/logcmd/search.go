package logcmd

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/costcmd"
	"github.com/panto-dev/panto/internal/exitcode"
	fsearch "github.com/panto-dev/panto/internal/search"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/internal/tty"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/store"
	"github.com/tidwall/gjson"
)

type searchCmd struct {
	Query         []string `arg:"" optional:"" help:"Words, all in one entry in any order (a word with an upper-case letter matches case, others ignore it); \"a phrase\" (one argument holding spaces) as written; -WORD excludes entries holding WORD."`
	Regexp        []string `short:"e" help:"A Go regexp (RE2 syntax) the entry must match too (repeat for more)." placeholder:"RE"`
	CaseSensitive bool     `short:"s" help:"Every word matches case."`
	IgnoreCase    bool     `short:"i" help:"No word matches case."`
	Agent         []string `help:"Only these agents' sessions: claude, codex, pi, gemini, copilot, panto (comma-separated)." placeholder:"AGENT"`
	Role          []string `help:"Only entries of these roles: user, assistant, system, tool (a tool's result is role tool)." placeholder:"ROLE"`
	Kind          []string `help:"Only these kinds of text: text, thinking, tool-input, tool-result (default: all)." placeholder:"KIND"`
	Tool          string   `help:"Only a tool's input and results, by the tool's name (letter case aside)." placeholder:"NAME"`
	Project       string   `help:"Only sessions whose cwd is DIR or below it." placeholder:"DIR"`
	Model         string   `help:"Only entries of a model whose name holds TEXT (letter case aside)." placeholder:"TEXT"`
	Session       string   `help:"Only the session whose id (panto's or its agent's) starts with ID." placeholder:"ID"`
	Since         string   `help:"Only entries on or after this day (as panto-cost: YYYY-MM-DD, today, 7d, …)." placeholder:"DATE"`
	Until         string   `help:"Only entries on or before this day." placeholder:"DATE"`
	From          string   `default:"all" help:"Whose sessions: all (panto's and every agent's at their default places), panto, or an agent (claude, codex, pi, …)." placeholder:"AGENT"`
	Path          []string `help:"Search these files or folders instead of the default places (repeat for more)." placeholder:"PATH"`
	Limit         int      `help:"Stop after N hits (N sessions with --sessions); the summary says capped when more were left." placeholder:"N"`
	Sessions      bool     `help:"One line per session with hits, instead of one per hit."`
	Format        string   `enum:",table,jsonl,json" default:"" help:"table (default on a terminal), jsonl (default on a pipe: one hit per line, then a summary line) or json (one document)."`
}

// Run runs the search.
func (c *searchCmd) Run(e *env) error {
	st, err := e.store()
	if err != nil {
		return err
	}
	e.code, err = c.run(e.ctx, st, e.proc, e.out)
	return err
}

// searchFlags are the flags of search, by every name they are given as,
// and whether each takes a value: what excludeWords must not take for a
// -WORD.
func searchFlags() map[string]bool {
	flags := map[string]bool{"--store": true, "--help": false, "-h": false, "--version": false}
	t := reflect.TypeOf(searchCmd{})
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Tag.Get("arg") != "" {
			continue
		}
		value := f.Type.Kind() != reflect.Bool
		flags["--"+kebab(f.Name)] = value
		if s := f.Tag.Get("short"); s != "" {
			flags["-"+s] = value
		}
	}
	return flags
}

func kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		if 'A' <= r && r <= 'Z' {
			if i > 0 {
				b.WriteByte('-')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// excludeWords makes the -WORD arguments of a search positional (after
// "--"), so that the parser does not take an exclusion for an unknown
// flag. Other commands' arguments are left as they are.
func excludeWords(args []string) []string {
	at := -1
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--store":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			if a == "search" {
				at = i
			}
			i = len(args)
		}
	}
	if at < 0 {
		return args
	}
	known := searchFlags()
	out := append([]string{}, args[:at+1]...)
	var words []string
	for i := at + 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			words = append(words, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			words = append(words, a)
			continue
		}
		name, _, hasValue := strings.Cut(a, "=")
		if value, ok := known[name]; ok {
			out = append(out, a)
			if value && !hasValue && i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
			continue
		}
		if shortBools(a[1:], known) {
			out = append(out, a)
			continue
		}
		words = append(words, a)
	}
	return append(append(out, "--"), words...)
}

// shortBools reports whether s (after its "-") is known boolean short
// flags run together: -si.
func shortBools(s string, known map[string]bool) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if v, ok := known["-"+string(c)]; !ok || v {
			return false
		}
	}
	return true
}

func splitList(vs []string) map[string]bool {
	if len(vs) == 0 {
		return nil
	}
	m := map[string]bool{}
	for _, v := range vs {
		for _, w := range strings.Split(v, ",") {
			if w = strings.TrimSpace(w); w != "" {
				m[w] = true
			}
		}
	}
	return m
}

func (c *searchCmd) filter(proc cli.IO) (fsearch.Filter, error) {
	f := fsearch.Filter{Tool: c.Tool, Model: c.Model, Session: c.Session}
	f.Agents = splitList(c.Agent)
	for a := range f.Agents {
		if a != "panto" && agents.Named(a) == nil {
			return f, exitcode.Usagef("--agent %q is not an agent: give %s", a, agentNames())
		}
	}
	f.Roles = splitList(c.Role)
	for r := range f.Roles {
		switch r {
		case "user", "assistant", "system", "tool":
		default:
			return f, exitcode.Usagef("--role %q: give user, assistant, system or tool", r)
		}
	}
	f.Kinds = splitList(c.Kind)
	for k := range f.Kinds {
		switch k {
		case fsearch.KindText, fsearch.KindThinking, fsearch.KindToolInput, fsearch.KindToolResult:
		default:
			return f, exitcode.Usagef("--kind %q: give text, thinking, tool-input or tool-result", k)
		}
	}
	if c.Project != "" {
		p := c.Project
		if !filepath.IsAbs(p) {
			p = filepath.Join(proc.Cwd, p)
		}
		f.Project = filepath.Clean(p)
	}
	now := time.Now()
	var err error
	if c.Since != "" {
		if f.Since, err = costcmd.ParseDay(c.Since, false, time.Local, now); err != nil {
			return f, err
		}
	}
	if c.Until != "" {
		if f.Until, err = costcmd.ParseDay(c.Until, true, time.Local, now); err != nil {
			return f, err
		}
		if !f.Since.IsZero() && !f.Until.After(f.Since) {
			return f, exitcode.Usagef("--until %s is before --since %s: no day is in between", c.Until, c.Since)
		}
	}
	return f, nil
}

func agentNames() string {
	names := []string{"panto"}
	for _, a := range agents.Agents() {
		if a.Reads() {
			names = append(names, a.Name)
		}
	}
	return strings.Join(names, ", ")
}

// sources lists the files to search, newest first: --path's, else
// panto's sessions of every project and every agent's logs at their
// places (--from narrows). A log's import is left out when the log itself
// is searched (one session, one row).
func (c *searchCmd) sources(st store.Store, proc cli.IO, warn func(string, error)) ([]fsearch.File, error) {
	var roots []string
	panto := false
	switch {
	case len(c.Path) > 0:
		if c.From != "all" {
			return nil, exitcode.Usagef("--path and --from go apart: --path searches its files whoever wrote them")
		}
		roots = c.Path
	case c.From == "all" || c.From == "panto":
		panto = true
		if c.From == "all" {
			roots = agents.Places(agents.Unknown, proc.Getenv)
		}
	default:
		a := agents.Named(c.From)
		if a == nil || !a.Reads() {
			return nil, exitcode.Usagef("--from %q: give all, %s", c.From, agentNames())
		}
		roots = agents.Places(a.Format, proc.Getenv)
	}
	var files []fsearch.File
	seen := map[[2]uint64]bool{}
	add := func(path string, err error) error {
		if err != nil {
			warn(path, err)
			return nil
		}
		fi, err := os.Stat(path)
		if err != nil {
			warn(path, err)
			return nil
		}
		// A file met twice (--path f --path ./f, a folder and a file in
		// it, places that overlap) is searched once: its hits were given
		// twice.
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			key := [2]uint64{uint64(sys.Dev), sys.Ino}
			if seen[key] {
				return nil
			}
			seen[key] = true
		}
		if !fi.Mode().IsRegular() && slices.Contains(c.Path, path) {
			// a FIFO or device named by --path: said, exit 3 (one found
			// in a walk is skipped, counted in the summary)
			warn(path, catalog.ErrNotRegular)
			return nil
		}
		if path != "" && !slices.Contains(c.Path, path) && agents.InDatabase(path) != "" {
			return nil // a session of OpenCode's storage/ tree its database holds: searched there, once
		}
		files = append(files, fsearch.File{Path: path, ModTime: fi.ModTime(), Size: fi.Size()})
		return nil
	}
	for _, r := range roots {
		if err := catalog.WalkWith(r, agents.LogPathIn(r), add); err != nil {
			return nil, err
		}
	}
	if panto {
		if _, ok := st.(store.Files); ok {
			base, err := catalog.EnvFrom(proc.Getenv).BaseDir()
			if err == nil {
				if _, err := os.Stat(base); err == nil {
					all, err := catalog.AllFiles(base)
					if err != nil {
						warn(base, err)
					}
					for _, p := range all {
						add(p, nil)
					}
				}
			}
		}
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].ModTime.After(files[j].ModTime) })
	return files, nil
}

func (c *searchCmd) run(ctx context.Context, st store.Store, proc cli.IO, out *bufio.Writer) (int, error) {
	if c.CaseSensitive && c.IgnoreCase {
		return 0, exitcode.Usagef("-s and -i go apart: give one")
	}
	mode := fsearch.Smart
	if c.CaseSensitive {
		mode = fsearch.Sensitive
	} else if c.IgnoreCase {
		mode = fsearch.Insensitive
	}
	q, err := fsearch.Parse(c.Query, c.Regexp, mode)
	if err != nil {
		return 0, exitcode.Usagef("%v", err)
	}
	if c.Limit < 0 {
		return 0, exitcode.Usagef("--limit %d: give a number of hits above 0", c.Limit)
	}
	fl, err := c.filter(proc)
	if err != nil {
		return 0, err
	}
	_, inFiles := st.(store.Files)
	if !inFiles && (len(c.Path) > 0 || c.From != "all") {
		return 0, exitcode.Usagef("--path and --from name files: not with --store (a database holds panto's sessions and imports)")
	}
	if q.Slow {
		cli.Warnf(proc.Stderr, name, "the regexp holds no literal text to look for first: every line is decoded, slowly")
	}
	problems := 0
	warn := func(path string, err error) {
		problems++
		cli.Warnf(proc.Stderr, name, "%s: %v: not searched (the rest is)", tty.Line(path), errorText(err))
	}
	var files []fsearch.File
	if inFiles {
		files, err = c.sources(st, proc, warn)
	} else {
		files, err = storeSources(ctx, st, q, proc, warn)
	}
	if err != nil {
		return 0, err
	}
	if c.Session != "" {
		if err := oneSession(c.Session, files, proc); err != nil {
			return 0, err
		}
	}
	seen := map[string]bool{} // agents' session ids searched in place
	for _, f := range files {
		if !strings.HasPrefix(f.Path, catalogBase(proc)) {
			seen[idOfName(f.Path)] = true
			if id := logIDOf(f.Path); id != "" {
				seen[id] = true // a Gemini chat, a Copilot events.jsonl: not in the name
			}
			if strings.HasSuffix(f.Path, ".jsonl") {
				continue // no database
			}
			if fi, err := os.Stat(f.Path); err == nil && fi.Mode().IsRegular() {
				ids, _ := agents.Sessions(f.Path) // an OpenCode database's every session
				for _, id := range ids {
					seen[id] = true
				}
			}
		}
	}
	format := c.Format
	term := cli.IsTerminal(proc.Stdout)
	if format == "" {
		format = "jsonl"
		if term {
			format = "table"
		}
	}
	p := &printer{out: out, format: format, term: term, color: term && proc.Getenv("NO_COLOR") == "", columns: cli.Columns(proc), sessions: c.Sessions, limit: c.Limit}
	opt := fsearch.Options{Filter: fl, Problem: warn, Skip: func(m *fsearch.Meta) string {
		if m.Format == agents.Panto && m.Origin != "" && seen[m.Origin] {
			return "imports of logs searched in place"
		}
		return ""
	}}
	if !c.Sessions {
		opt.Limit = c.Limit
	}
	// The search keeps little alive (a buffer per reader, the lines being
	// decoded) and makes much garbage (each candidate line's strings):
	// collected when the heap is five times what is alive, never past
	// 32 MiB if it can help it (SPEC §15: at most 64 MB), it spends a
	// sixth less CPU than at Go's default.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(32 << 20))
	sum := fsearch.Run(ctx, q, files, opt, p.hit)
	if p.err != nil {
		return 0, p.err
	}
	sum.Problems = problems
	if p.capped {
		sum.Capped = true
	}
	if err := p.end(sum); err != nil {
		return 0, err
	}
	switch {
	case problems > 0:
		return exitcode.Failure, nil
	case sum.Hits == 0:
		return exitcode.Findings, nil
	}
	return 0, nil
}

func errorText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// catalogBase is the sessions base, "" when there is none.
func catalogBase(proc cli.IO) string {
	base, err := catalog.EnvFrom(proc.Getenv).BaseDir()
	if err != nil {
		return "\x00"
	}
	return base + string(filepath.Separator)
}

// oneSession checks --session as every command that takes a session
// checks its id (SPEC §15, one id): at least stores.MinPrefix characters,
// and a prefix the ids of two sessions searched start with is exit 2,
// naming them (a log and its import are one session). A prefix no
// session has finds nothing (exit 1, as grep). A database's sessions are
// told apart by the store (--store): not checked here.
func oneSession(prefix string, files []fsearch.File, proc cli.IO) error {
	if len(prefix) < stores.MinPrefix {
		return exitcode.Usagef("--session %q: give at least %d characters of a session id", prefix, stores.MinPrefix)
	}
	low := strings.ToLower(prefix)
	has := func(id string) bool { return id != "" && strings.HasPrefix(strings.ToLower(id), low) }
	found := map[string]bool{} // by the session: an import's origin, else its id
	base := catalogBase(proc)
	for _, f := range files {
		switch {
		case f.Open != nil:
		case strings.HasPrefix(f.Path, base):
			id, origin := headerIDs(f.Path)
			if has(id) || has(origin) {
				found[cmp.Or(origin, id)] = true
			}
		default:
			var ids []string
			if !strings.HasSuffix(f.Path, ".jsonl") {
				ids, _ = agents.Sessions(f.Path) // an OpenCode database's every session
			}
			if len(ids) == 0 {
				ids = []string{logIDOf(f.Path)}
			}
			for _, id := range ids {
				if has(id) {
					found[id] = true
				}
			}
		}
	}
	if len(found) < 2 {
		return nil
	}
	e := &store.AmbiguousError{Prefix: prefix}
	for id := range found {
		e.IDs = append(e.IDs, id)
	}
	sort.Strings(e.IDs)
	return exitcode.New(exitcode.Usage, fmt.Errorf("--session: %w", e))
}

// headerIDs are a panto session's id and its import's origin.id, from
// its header line.
func headerIDs(path string) (id, origin string) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO does not block the open
	if err != nil {
		return "", ""
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
		return "", ""
	}
	r := gjson.GetManyBytes(line, "id", "origin.id")
	return strings.Clone(r[0].Str), strings.Clone(r[1].Str)
}

// logIDOf is the agent's session id of a log searched in place: from its
// name, else from its first lines (a log of lines: its first MiB only, so
// a 200 MB first line is not read whole), else its header (a Gemini CLI
// chat: its first 4 KiB).
func logIDOf(path string) string {
	if id := stores.AgentID(path); id != "" {
		return id
	}
	if strings.HasSuffix(path, ".jsonl") {
		if id := fsearch.SessionOf(path); id != "" {
			return id
		}
	}
	return stores.LogID(path)
}

// idOfName is the agent's session id a log's file name holds.
func idOfName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if len(base) >= 36 {
		return base[len(base)-36:]
	}
	return base
}

// printer writes hits as they come: a table grouped by session, JSON
// Lines, or one JSON document; with --sessions, a line per session.
type printer struct {
	out      *bufio.Writer
	format   string
	term     bool
	color    bool
	columns  int
	sessions bool
	limit    int
	err      error
	capped   bool

	last  string // the session of the last hit printed (table)
	all   []jsonHit
	bySes map[string]*sessionRow
	order []*sessionRow
}

type jsonHit struct {
	Agent     string         `json:"agent"`
	Session   string         `json:"session"`
	Entry     string         `json:"entry"`
	Timestamp string         `json:"timestamp"`
	Role      string         `json:"role"`
	Kind      string         `json:"kind"`
	Tool      string         `json:"tool"`
	Cwd       string         `json:"cwd"`
	Title     string         `json:"title"`
	Path      string         `json:"path"`
	Snippet   string         `json:"snippet"`
	Matches   [][2]int       `json:"matches"`
	Resume    fsearch.Resume `json:"resume"`
}

type sessionRow struct {
	Agent     string         `json:"agent"`
	Session   string         `json:"session"`
	Title     string         `json:"title"`
	Cwd       string         `json:"cwd"`
	Path      string         `json:"path"`
	Hits      int            `json:"hits"`
	Timestamp string         `json:"timestamp"` // of its newest hit
	Resume    fsearch.Resume `json:"resume"`
}

func toJSON(h *fsearch.Hit) jsonHit {
	m := h.Matches
	if m == nil {
		m = [][2]int{}
	}
	return jsonHit{h.Agent, h.Session, h.Entry, h.Timestamp, h.Role, h.Kind, h.Tool, h.Cwd, h.Title, h.Path, h.Snippet, m, h.Resume}
}

func (p *printer) encode(v any) error {
	enc := json.NewEncoder(p.out)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// hit takes one hit; false stops the search.
func (p *printer) hit(h *fsearch.Hit) bool {
	if p.sessions {
		key := h.Agent + "\x00" + h.Session
		if p.bySes == nil {
			p.bySes = map[string]*sessionRow{}
		}
		r := p.bySes[key]
		if r == nil {
			if p.limit > 0 && len(p.order) == p.limit {
				p.capped = true
				return false
			}
			r = &sessionRow{Agent: h.Agent, Session: h.Session, Title: h.Title, Cwd: h.Cwd, Path: h.Path, Resume: h.Resume}
			p.bySes[key] = r
			p.order = append(p.order, r)
		}
		r.Hits++
		r.Timestamp = max(r.Timestamp, h.Timestamp)
		return true
	}
	switch p.format {
	case "json":
		p.all = append(p.all, toJSON(h))
	case "jsonl":
		p.err = p.encode(toJSON(h))
	default:
		p.err = p.row(h)
		if p.err == nil && p.term {
			p.err = p.out.Flush() // the first hit at once
		}
	}
	return p.err == nil
}

// row writes a hit in the table: a session's heading first when it is
// not the last hit's.
func (p *printer) row(h *fsearch.Hit) error {
	key := h.Agent + "\x00" + h.Session
	if key != p.last {
		if p.last != "" {
			p.out.WriteByte('\n')
		}
		p.last = key
		title := h.Title
		if title == "" {
			title = "(no title)"
		}
		fmt.Fprintf(p.out, "%s %s  %s\n", p.bold(h.Agent), p.bold(tty.Line(h.Session)), tty.Line(title))
		if len(h.Resume.Argv) > 0 {
			fmt.Fprintf(p.out, "  %s\n", tty.Line(resumeLine(h.Resume)))
		}
	}
	what := h.Role + " " + h.Kind
	if h.Tool != "" {
		what += " " + h.Tool
	}
	lead := fmt.Sprintf("  %s  %s  ", shortTime(h.Timestamp), what)
	room := 0
	if p.columns > 0 {
		room = max(20, p.columns-utf8.RuneCountInString(lead))
	}
	_, err := fmt.Fprintf(p.out, "%s%s\n", lead, p.mark(h.Snippet, h.Matches, room))
	return err
}

func (p *printer) bold(s string) string {
	if p.color {
		return "\x1b[1m" + s + "\x1b[0m"
	}
	return s
}

// resumeLine is the resume command as a shell line: cd DIR && argv.
func resumeLine(r fsearch.Resume) string {
	var b strings.Builder
	if r.Cwd != "" {
		b.WriteString("cd " + shellQuote(r.Cwd) + " && ")
	}
	for i, a := range r.Argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(shellQuote(a))
	}
	return b.String()
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shortTime(ts string) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return fmt.Sprintf("%-16s", "")
	}
	return t.Local().Format("2006-01-02 15:04")
}

// mark shows a snippet on one line, control characters escaped, its
// matches marked (bold and red on a terminal, [[ ]] elsewhere), cut to
// room characters (0: no limit) around its first match.
func (p *printer) mark(s string, ms [][2]int, room int) string {
	on, off := "[[", "]]"
	if p.color {
		on, off = "\x1b[1;31m", "\x1b[0m"
	}
	var b strings.Builder
	at, shown := 0, 0
	write := func(t string) {
		if room > 0 && shown >= room {
			return
		}
		e := tty.Line(t)
		if n := utf8.RuneCountInString(e); room > 0 && shown+n > room {
			e = string([]rune(e)[:room-shown]) + "…"
		}
		shown += utf8.RuneCountInString(e)
		b.WriteString(e)
	}
	// Context before the first match is cut to a third of the room.
	if len(ms) > 0 && room > 0 {
		before := []rune(tty.Line(s[:ms[0][0]]))
		if len(before) > room/3 {
			b.WriteString("…")
			s2 := string(before[len(before)-room/3:])
			b.WriteString(s2)
			shown += room/3 + 1
			at = ms[0][0]
		}
	}
	for _, m := range ms {
		if m[0] < at {
			continue
		}
		write(s[at:m[0]])
		if room == 0 || shown < room {
			b.WriteString(on)
			write(s[m[0]:m[1]])
			b.WriteString(off)
		}
		at = m[1]
	}
	write(s[at:])
	return b.String()
}

// end writes what is left: the sessions, the JSON document, the summary.
func (p *printer) end(sum fsearch.Summary) error {
	skipped := sum.Skipped
	if skipped == nil {
		skipped = map[string]int{}
	}
	summary := summaryJSON{Hits: sum.Hits, Sessions: sum.Sessions, Files: sum.Files, Bytes: sum.Bytes,
		Capped: sum.Capped, Skipped: skipped, ElapsedMs: sum.Elapsed.Milliseconds()}
	if p.sessions {
		summary.Sessions = len(p.order)
		switch p.format {
		case "json":
			rows := p.order
			if rows == nil {
				rows = []*sessionRow{}
			}
			return p.encode(map[string]any{"sessions": rows, "summary": summary})
		case "jsonl":
			for _, r := range p.order {
				if err := p.encode(r); err != nil {
					return err
				}
			}
			return p.encode(map[string]any{"summary": summary})
		}
		rows := [][]string{{"AGENT", "SESSION", "HITS", "LAST HIT", "TITLE"}}
		for _, r := range p.order {
			rows = append(rows, []string{r.Agent, tty.Line(r.Session), fmt.Sprint(r.Hits), shortTime(r.Timestamp), tty.Line(r.Title)})
		}
		if err := writeColumnsFit(p.out, rows, p.columns); err != nil {
			return err
		}
		return p.footer(sum, len(p.order))
	}
	switch p.format {
	case "json":
		hits := p.all
		if hits == nil {
			hits = []jsonHit{}
		}
		return p.encode(map[string]any{"hits": hits, "summary": summary})
	case "jsonl":
		return p.encode(map[string]any{"summary": summary})
	}
	return p.footer(sum, sum.Sessions)
}

type summaryJSON struct {
	Hits      int            `json:"hits"`
	Sessions  int            `json:"sessions"`
	Files     int            `json:"files"`
	Bytes     int64          `json:"bytes"`
	Capped    bool           `json:"capped"`
	Skipped   map[string]int `json:"skipped"`
	ElapsedMs int64          `json:"elapsedMs"`
}

func (p *printer) footer(sum fsearch.Summary, sessions int) error {
	if sum.Hits > 0 {
		p.out.WriteByte('\n')
	}
	capped := ""
	if sum.Capped {
		capped = " (capped by --limit: more were left)"
	}
	_, err := fmt.Fprintf(p.out, "%d %s in %d %s%s; %d files, %s read in %s\n", sum.Hits, plural(sum.Hits, "hit"), sessions, plural(sessions, "session"), capped, sum.Files, bytesText(sum.Bytes), sum.Elapsed.Round(time.Millisecond))
	return err
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

var _ io.Writer = (*bufio.Writer)(nil)

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// storeSources lists the sessions of a database, newest first, each read
// through the store (SPEC §15: the same hits as a search of the same
// sessions' files). A store that keeps an index of its entries' text
// (store.Searcher) gives the sessions that hold a candidate, each read
// with its candidates only; another store, or a query with nothing for
// the index to look for (a regexp holding no literal), reads each session
// whole.
func storeSources(ctx context.Context, st store.Store, q *fsearch.Query, proc cli.IO, warn func(string, error)) ([]fsearch.File, error) {
	if idx, ok := st.(store.Searcher); ok {
		if needles := q.Needles(); len(needles) > 0 {
			cands, err := idx.Candidates(ctx, needles)
			if err != nil {
				return nil, stores.ErrorOf(err, "", stores.Read)
			}
			files := make([]fsearch.File, 0, len(cands))
			for _, c := range cands {
				name, seqs := c.Path, c.Seqs
				files = append(files, fsearch.File{Path: name, Format: agents.Panto, ModTime: c.Modified, Size: c.Size,
					Open: func() (fsearch.Source, error) { return idx.OpenCandidates(ctx, name, seqs) }})
			}
			return files, nil
		}
	}
	list, err := st.List(ctx, proc.Cwd, true, func(err error) { warn("", err) })
	if err != nil {
		return nil, stores.ErrorOf(err, "", stores.Read)
	}
	files := make([]fsearch.File, 0, len(list))
	for _, s := range list {
		name := s.Path
		files = append(files, fsearch.File{Path: name, Format: agents.Panto, ModTime: s.Modified, Size: s.Size,
			Open: func() (fsearch.Source, error) { return st.Open(ctx, name) }})
	}
	return files, nil
}
