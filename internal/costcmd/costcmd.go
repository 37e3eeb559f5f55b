// Package costcmd is panto-cost: exact costs of every turn, session, model
// and day, never a silent zero.
package costcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/internal/pricing"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/internal/tty"
	"github.com/panto-dev/panto/pkg/store"
)

const name = "panto-cost"

type grammar struct {
	Version       cli.VersionFlag `help:"Print the version and exit."`
	Paths         []string        `arg:"" optional:"" help:"Session files, session directories (every *.jsonl below; in a database: session ids or unique prefixes), or - for entry or message lines on stdin (the default)."`
	All           bool            `help:"Every session of the store."`
	From          string          `enum:"${agents},all," default:"" help:"With no paths: read the logs of claude (CLAUDE_CONFIG_DIR, else ~/.config/claude and ~/.claude), codex (CODEX_HOME, else ~/.codex), pi (PI_CODING_AGENT_DIR, else ~/.pi/agent), gemini (GEMINI_CLI_HOME, else ~/.gemini/tmp), copilot (COPILOT_CONFIG_DIR, else ~/.copilot/session-state), opencode (OPENCODE_DATA_DIR, else $XDG_DATA_HOME/opencode, else ~/.local/share/opencode), or all of them." placeholder:"AGENT"`
	cli.StoreFlag `embed:""`
	Pricing       string `help:"models.toml, or LiteLLM's model_prices_and_context_window.json, over the built-in prices: it adds models and replaces the built-in prices of those it names (default: $XDG_CONFIG_HOME/panto/models.toml, if there is one)." placeholder:"FILE"`
	PricingOnly   string `name:"pricing-only" help:"Like --pricing, but the file's prices alone: the built-in table is not used." placeholder:"FILE"`
	Subagents     bool   `help:"With --by session: a subagent's cost in a row of its own (with its parent named), not rolled up into its parent session's."`
	UpdatePrices  bool   `name:"update-prices" help:"Fetch LiteLLM's price table (from the URL given as the one argument, else LiteLLM's repository) into $XDG_CONFIG_HOME/panto/litellm.json, where every later run lays it over the built-in prices (models.toml and --pricing over it); it replaces the one there only once read whole and checked. Then exit."`
	Prices        bool   `help:"Print the price table in use (where it came from, and every model's prices in USD per million tokens) and exit."`
	By            string `enum:"turn,session,model,day,week,month,block,project,agent," default:"" help:"Rows: turn, session, model, day, week, month, block (5-hour windows from a turn's hour, as the providers' usage limits count; the active one with its burn rate and projection), project or agent (default: session; day for panto-cost alone on a terminal)."`
	Breakdown     bool   `help:"Under each row, a row per model (not with --by turn or model); --breakdown agent: a row per agent."`
	BreakdownBy   string `name:"breakdown-by" enum:"model,agent," default:"" help:"What --breakdown splits rows by: model (the default) or agent (--breakdown agent says the same)." placeholder:"WHAT"`
	Last          int    `help:"Only the N rows of the latest activity (the N latest days, weeks, months, blocks or turns; the sessions, models, projects or agents used last). The total is theirs." placeholder:"N"`
	Order         string `enum:"asc,desc," default:"" help:"asc or desc: days, weeks, months, blocks and turns go oldest first (asc) by default, the other rows costliest first (desc)."`
	Project       string `help:"Only turns of this project: its directory, or the directory's last name." placeholder:"DIR"`
	Color         string `enum:"auto,always,never" default:"auto" help:"Colour in a table: auto (on a terminal, unless NO_COLOR is set or TERM is dumb), always or never."`
	Format        string `enum:"table,jsonl,json,html," default:"" help:"table (the default on a terminal), jsonl (the default otherwise), json, or html (one self-contained page: the table and a chart of cost by day, stacked by model)."`
	JSON          bool   `name:"json" help:"The same as --format json."`
	Since         string `help:"Only turns on or after this day: YYYY-MM-DD, YYYYMMDD, today, yesterday, or Nd / Nw (N days or weeks before today)." placeholder:"DATE"`
	Until         string `help:"Only turns on or before this day (as --since)." placeholder:"DATE"`
	Timezone      string `short:"z" help:"The IANA time zone of days, weeks, months and of --since/--until (default: the local zone, from TZ)." placeholder:"ZONE"`
	Compact       bool   `xor:"width" help:"A table of few columns (the row, turns, tokens, cost), whatever the width."`
	Wide          bool   `xor:"width" help:"Every column of the table, however wide (by default a table on a terminal fits its width)."`

	loc   *time.Location    // of --timezone
	links map[string]string // RunLinked: a session's id (panto's or its agent's) → its page
}

// Main runs panto-cost in this process.
func Main() int {
	cli.QuietPipe()
	return Run(os.Args[1:], cli.OS())
}

// Run runs panto-cost with args.
func Run(args []string, proc cli.IO) int {
	var g grammar
	args = breakdownArgs(args)
	_, code, done := cli.Parse(name, "Exact costs of token usage from session files (panto's, or Claude Code, Codex and pi logs: --from reads their places), entry lines or message lines.", &g, args, proc, nil)
	if done {
		return code
	}
	return cli.Buffered(name, proc, func(out *bufio.Writer) (int, error) { return g.run(proc, out) })
}

// breakdownArgs reads "--breakdown agent" (and model) as --breakdown
// --breakdown-by agent, unless a file of that name is there: kong's
// --breakdown takes no value, and "--breakdown" alone stays as it was.
func breakdownArgs(args []string) []string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--" {
			break
		}
		if args[i] != "--breakdown" || args[i+1] != "agent" && args[i+1] != "model" {
			continue
		}
		if _, err := os.Lstat(args[i+1]); err == nil {
			continue
		}
		out := append([]string{}, args[:i+1]...)
		out = append(out, "--breakdown-by="+args[i+1])
		return append(out, args[i+2:]...)
	}
	return args
}

// RunLinked runs panto-cost with args for a site (panto-replay --site): a
// page by session links each session to the page links names for its id
// (panto's, or its agent's own).
func RunLinked(args []string, proc cli.IO, links map[string]string) int {
	var g grammar
	_, code, done := cli.Parse(name, "", &g, args, proc, nil)
	if done {
		return code
	}
	g.links = links
	return cli.Buffered(name, proc, func(out *bufio.Writer) (int, error) { return g.run(proc, out) })
}

// parseDay reads a day as YYYY-MM-DD, YYYYMMDD, or N days (Nd) or weeks
// (Nw) before today, in loc, and returns its first instant (or, for an
// end, the first instant of the next day).
func parseDay(s string, end bool, loc *time.Location, now time.Time) (time.Time, error) {
	var t time.Time
	var err error
	switch s {
	case "today":
		s = "0d"
	case "yesterday":
		s = "1d"
	}
	switch {
	case len(s) == 8 && strings.Trim(s, "0123456789") == "":
		t, err = time.ParseInLocation("20060102", s, loc)
	case len(s) >= 2 && (s[len(s)-1] == 'd' || s[len(s)-1] == 'w') && strings.Trim(s[:len(s)-1], "0123456789") == "":
		var n int
		if n, err = strconv.Atoi(s[:len(s)-1]); err == nil && n <= 100000 {
			if s[len(s)-1] == 'w' {
				n *= 7
			}
			y, m, d := now.In(loc).Date()
			t = time.Date(y, m, d-n, 0, 0, 0, 0, loc)
		} else if err == nil {
			err = errors.New("too far back")
		}
	default:
		t, err = time.ParseInLocation("2006-01-02", s, loc)
	}
	if err != nil {
		return t, exitcode.Usagef("%q is not a date: use YYYY-MM-DD, YYYYMMDD, today, yesterday, or 7d / 2w (days or weeks before today)", s)
	}
	if end {
		t = t.AddDate(0, 0, 1)
	}
	return t, nil
}

// reportNames are words users of other tools give as an argument (ccusage
// daily), and the --by they mean.
var reportNames = map[string]string{"daily": "day", "day": "day", "weekly": "week", "week": "week", "monthly": "month", "month": "month",
	"session": "session", "sessions": "session", "model": "model", "models": "model", "turn": "turn", "turns": "turn",
	"project": "project", "projects": "project", "agent": "agent", "agents": "agent"}

func (g *grammar) run(proc cli.IO, out io.Writer) (int, error) {
	if g.UpdatePrices {
		return g.updatePrices(proc, out)
	}
	var since, until time.Time
	var err error
	g.loc = time.Local
	if g.Timezone != "" {
		if g.loc, err = time.LoadLocation(g.Timezone); err != nil || g.Timezone == "Local" {
			return 0, exitcode.Usagef("--timezone %q is no IANA time zone: give one such as UTC, Europe/Paris or Asia/Tokyo", g.Timezone)
		}
	}
	now := time.Now()
	if g.Since != "" {
		if since, err = parseDay(g.Since, false, g.loc, now); err != nil {
			return 0, err
		}
	}
	if g.Until != "" {
		if until, err = parseDay(g.Until, true, g.loc, now); err != nil {
			return 0, err
		}
		// until is the start of the day after --until's.
		if !since.IsZero() && !until.After(since) {
			return 0, exitcode.Usagef("--until %s is before --since %s: no day is in between", g.Until, g.Since)
		}
	}
	// panto-cost alone on a terminal: every agent's logs by day, as
	// ccusage does, never a wait on the terminal's stdin.
	if len(g.Paths) == 0 && !g.All && g.From == "" && !g.Prices && cli.IsTerminal(proc.Stdin) {
		g.From = "all"
		if g.By == "" {
			g.By = "day"
		}
	}
	if g.By == "" {
		g.By = "session"
	}
	if g.BreakdownBy != "" {
		g.Breakdown = true
	}
	if g.BreakdownBy == "" {
		g.BreakdownBy = "model"
	}
	if g.Breakdown && (g.By == "turn" || g.By == g.BreakdownBy) {
		return 0, exitcode.Usagef("--breakdown splits rows by %s: not with --by %s", g.BreakdownBy, g.By)
	}
	if g.Last < 0 {
		return 0, exitcode.Usagef("--last %d: give a number of rows, 1 or more", g.Last)
	}
	if g.JSON {
		if g.Format != "" && g.Format != "json" {
			return 0, exitcode.Usagef("--json is --format json: give one of them")
		}
		g.Format = "json"
	}
	for _, p := range g.Paths {
		if by, ok := reportNames[strings.ToLower(p)]; ok {
			if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
				return 0, exitcode.Usagef("%s is no file or session: did you mean --by %s?", p, by)
			}
		}
	}
	if g.Pricing != "" && g.PricingOnly != "" {
		return 0, exitcode.Usagef("--pricing adds a file to the built-in prices, --pricing-only uses a file alone: give one")
	}
	file, only := g.Pricing, false
	if g.PricingOnly != "" {
		file, only = g.PricingOnly, true
	}
	set, err := pricing.Open(file, only, proc.Getenv, func(w string) { cli.Warnf(proc.Stderr, name, "%s", w) })
	if err != nil {
		return 0, err
	}
	table := newBook(set)
	format := g.Format
	if format == "" {
		format = "jsonl"
		if cli.IsTerminal(proc.Stdout) || g.Prices {
			format = "table"
		} else if cli.IsTerminal(proc.Stderr) {
			// A person piping into less or a file is told, once.
			cli.Notef(proc.Stderr, name, "stdout is no terminal: writing JSON Lines (--format table for the table)")
		}
	}
	if g.Prices {
		if len(g.Paths) > 0 || g.All || g.From != "" {
			return 0, exitcode.Usagef("--prices prints the price table and reads nothing: give no paths, --all or --from")
		}
		return exitcode.OK, writePrices(out, format, set)
	}
	var skip skipped
	rows := map[string]*row{}
	var order []*row
	total := newRow("")
	warn := func(format string, args ...any) { cli.Warnf(proc.Stderr, name, format, args...) }
	var chart *chart // cost by period and model, for a page
	if format == "html" {
		chart = newChart(g.By, g.loc)
	}
	emit := func(t *turn) error {
		if g.Project != "" && t.project != g.Project && path.Base(t.project) != g.Project {
			return nil
		}
		if !since.IsZero() || !until.IsZero() {
			if t.time.IsZero() {
				skip.noTime++
				return nil
			}
			if t.time.Before(since) || !until.IsZero() && !t.time.Before(until) {
				return nil
			}
		}
		key := g.key(t)
		r := rows[key]
		if r == nil || g.By == "turn" {
			r = newRow(key)
			if g.By == "session" && t.parent != "" && !g.Subagents {
				r.key = t.parent // until the parent's own turns name it
			}
			first := *t // t is valid only during the call
			r.first = &first
			if g.By != "turn" {
				rows[key] = r
			}
			order = append(order, r)
		}
		if g.By == "session" {
			r.session(t, !g.Subagents)
		}
		if err := r.add(t, table); err != nil {
			return err
		}
		if g.Breakdown {
			if err := r.sub(g.subKey(t)).add(t, table); err != nil {
				return err
			}
		}
		if chart != nil {
			if err := chart.add(t, table); err != nil {
				return err
			}
		}
		return nil
	}
	inputs := g.Paths
	if g.From != "" {
		if len(inputs) > 0 {
			return 0, exitcode.Usagef("--from reads the agents' own places: give paths or --from, not both")
		}
		if g.From == "auto" {
			return 0, exitcode.Usagef("--from auto: name an agent, or all")
		}
		f, err := agents.ParseFormat(g.From)
		if err != nil {
			return 0, exitcode.Usagef("--from %v", err)
		}
		if inputs = agents.Places(f, proc.Getenv); len(inputs) == 0 {
			warn("%s", agents.NoLogs(f, proc.Getenv, "count"))
		}
	} else if len(inputs) == 0 && !g.All {
		inputs = []string{"-"}
	}
	st, err := stores.Open(g.Store, proc)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	if err := g.inputs(st, proc, inputs, since, until, &skip, warn, emit); err != nil {
		if overflow(err) {
			return 0, exitcode.Failuref("%v: no report can hold it", err)
		}
		return 0, err
	}
	var active *block
	if g.By == "block" {
		if order, active, err = g.blocks(order, now); err != nil {
			return 0, exitcode.Failuref("%v: no report can hold it", err)
		}
	}
	order = g.last(order)
	for _, r := range order {
		if err := total.merge(r); err != nil {
			return 0, exitcode.Failuref("%v: no report can hold it", err)
		}
	}
	g.sort(order)
	if g.Order != "" && g.Order != g.naturalOrder() {
		slices.Reverse(order)
	}
	if g.Breakdown {
		for _, r := range order {
			r.sortSubs()
		}
	}
	for _, k := range missingList(total.missing) {
		if k == unnamedModel {
			warn("no model is named for some replies (an OpenCode run stream names none): their cost is unknown (no price can be given for them)")
			continue
		}
		warn("no price for %s in the price table: its cost is unknown (add it to models.toml)", k)
	}
	for _, k := range missingList(total.pricedAs) {
		warn("priced %s: its provider is not in the price table, and only that model has its name", k)
	}
	prices := set.String()
	switch format {
	case "table":
		if err = writeTable(out, g.By, order, total, g.tableWidth(proc), g.colour(proc)); err == nil && active != nil {
			_, err = fmt.Fprintln(out, active.line(g.loc))
		}
		if err == nil {
			_, err = fmt.Fprintf(out, "prices: %s\n", tty.Line(prices))
		}
		if err == nil && (g.By == "day" || g.By == "week" || g.By == "month" || g.By == "block") {
			_, err = fmt.Fprintf(out, "time zone: %s\n", g.zoneName(proc))
		}
	case "json":
		err = writeJSON(out, g.By, order, total, skip, prices, g.zoneName(proc))
	case "html":
		err = writeHTML(out, g.By, order, total, chart, skip, prices, g.links)
	default:
		err = writeJSONL(out, g.By, order, total)
	}
	if err != nil {
		return 0, err
	}
	// Where the prices came from is said in the table, the JSON and the
	// page; jsonl, one row a line, has it said on stderr instead.
	if format == "jsonl" && len(set.Sources) == 1 && set.Builtin() {
		warn("prices: %s (a models.toml or --pricing FILE adds prices and replaces them model by model; panto-cost --prices shows them)", prices)
	}
	if skip.corrupt+skip.torn+skip.invalid+skip.duplicate+skip.foreign+skip.badSessions > 0 {
		return exitcode.Findings, nil
	}
	return exitcode.OK, nil
}

// zoneName names the zone of days, weeks and months: --timezone's, else
// the local one (TZ, else the system's /etc/localtime), for the report to
// say.
func (g *grammar) zoneName(proc cli.IO) string {
	if g.Timezone != "" {
		return g.Timezone
	}
	if tz := strings.TrimPrefix(proc.Getenv("TZ"), ":"); tz != "" {
		return tz
	}
	if l, err := os.Readlink("/etc/localtime"); err == nil {
		if _, z, ok := strings.Cut(l, "zoneinfo/"); ok {
			return z
		}
	}
	name, off := time.Now().In(g.loc).Zone()
	return fmt.Sprintf("local (%s, UTC%+03d:%02d)", name, off/3600, abs(off%3600)/60)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// tableWidth is the width a table must fit: COLUMNS, else the terminal's
// (none on a pipe), or the layout --compact or --wide forces.
func (g *grammar) tableWidth(proc cli.IO) tableWidth {
	return tableWidth{columns: cli.Columns(proc), compact: g.Compact, wide: g.Wide}
}

// needTime says whether turns' timestamps matter: for date rows, turn
// rows (which show them), date filters, and --last (the rows used last).
func (g *grammar) needTime(since, until time.Time) bool {
	return g.By != "session" && g.By != "model" && g.By != "project" && g.By != "agent" || !since.IsZero() || !until.IsZero() || g.Format == "html" || g.Last > 0
}

func (g *grammar) key(t *turn) string {
	local := t.time.In(g.loc)
	switch g.By {
	case "model":
		return modelName(t.key, t.mode)
	case "agent":
		return t.agent
	case "project":
		if t.project == "" {
			return "(unknown)"
		}
		return t.project
	case "day", "week", "month", "block":
		if t.time.IsZero() {
			return "(no date)"
		}
		switch g.By {
		case "block": // the hour; blocks are made of hours once every turn is read
			return local.Format(hourKey)
		case "day":
			return local.Format("2006-01-02")
		case "month":
			return local.Format("2006-01")
		}
		y, w := local.ISOWeek()
		return fmt.Sprintf("%04d-W%02d", y, w)
	case "turn":
		return t.session + "/" + t.entry
	}
	// A session of another agent is its own session id, and a subagent's
	// is its parent's (rolled up) unless --subagents: the same row for a
	// log read directly and for its import.
	switch {
	case t.parent != "" && !g.Subagents:
		return t.agent + "\x00" + t.parent
	case t.origin != "":
		return t.agent + "\x00" + t.origin
	}
	return t.session
}

// sort orders rows: dates ascending, turns as read, the rest by cost
// (known part), largest first.
func (g *grammar) sort(rows []*row) {
	switch g.By {
	case "day", "week", "month", "block":
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].key < rows[j].key })
	case "turn":
	default:
		sort.SliceStable(rows, func(i, j int) bool {
			if rows[i].cost.Pico != rows[j].cost.Pico {
				return rows[i].cost.Pico > rows[j].cost.Pico
			}
			return rows[i].key < rows[j].key
		})
	}
}

// identity tells a file apart from every other, where the reader is a file.
func identity(r store.Reader) (fileID, bool) {
	f, ok := r.(interface {
		Dev() uint64
		Ino() uint64
	})
	if !ok {
		return fileID{}, false
	}
	return fileID{f.Dev(), f.Ino()}, true
}

type fileID struct{ dev, ino uint64 }

func readError(label string, err error) error {
	var coded interface{ ExitCode() int }
	if overflow(err) || errors.As(err, &coded) {
		return err
	}
	return exitcode.Failuref("read %s: %v", label, err)
}

func overflow(err error) bool {
	return errors.Is(err, pricing.ErrOverflow) || errors.Is(err, pricing.ErrTokenOverflow)
}

// updatePrices is --update-prices [URL]: LiteLLM's table fetched, checked,
// and put in place of the one fetched before.
func (g *grammar) updatePrices(proc cli.IO, out io.Writer) (int, error) {
	if len(g.Paths) > 1 || g.All || g.From != "" || g.Prices || g.Pricing != "" || g.PricingOnly != "" {
		return 0, exitcode.Usagef("--update-prices [URL] fetches prices and reads no logs: give at most a URL")
	}
	src := pricing.LiteLLMURL
	if len(g.Paths) == 1 {
		src = g.Paths[0]
	}
	up, err := pricing.Update(context.Background(), pricing.Client(), src, pricing.FetchedPath(proc.Getenv))
	if err != nil {
		return 0, err
	}
	if n := len(up.Warnings); n > 0 {
		cli.Warnf(proc.Stderr, name, "%d models of the table left out (a price not exact in picodollars per token), e.g. %s", n, up.Warnings[0])
	}
	was := ""
	if up.Replaced != "" {
		was = " (replacing the table fetched " + up.Replaced + ")"
	}
	_, err = fmt.Fprintf(out, "prices: %d models from %s in %s%s\n", up.Models, tty.Line(up.From), tty.Line(up.Path), was)
	return exitcode.OK, err
}

// subKey is what --breakdown splits a row by: the turn's model (with its
// billed mode) or its agent.
func (g *grammar) subKey(t *turn) string {
	if g.BreakdownBy == "agent" {
		return t.agent
	}
	return modelName(t.key, t.mode)
}

// naturalOrder is the order of rows without --order: time ascending for
// dated rows and turns, cost descending for the others.
func (g *grammar) naturalOrder() string {
	switch g.By {
	case "day", "week", "month", "block", "turn":
		return "asc"
	}
	return "desc"
}

// last keeps the --last N rows of the latest activity, in their order.
func (g *grammar) last(rows []*row) []*row {
	if g.Last == 0 || len(rows) <= g.Last {
		return rows
	}
	byTime := slices.Clone(rows)
	sort.SliceStable(byTime, func(i, j int) bool { return byTime[i].sortTime.After(byTime[j].sortTime) })
	keep := map[*row]bool{}
	for _, r := range byTime[:g.Last] {
		keep[r] = true
	}
	out := rows[:0:0]
	for _, r := range rows {
		if keep[r] {
			out = append(out, r)
		}
	}
	return out
}

// colour says whether a table is coloured: --color, else a terminal
// without NO_COLOR (no-color.org) or TERM=dumb.
func (g *grammar) colour(proc cli.IO) bool {
	switch g.Color {
	case "always":
		return true
	case "never":
		return false
	}
	return cli.IsTerminal(proc.Stdout) && proc.Getenv("NO_COLOR") == "" && proc.Getenv("TERM") != "dumb"
}
