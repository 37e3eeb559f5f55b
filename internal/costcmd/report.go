package costcmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/panto-dev/panto/internal/pricing"
	"github.com/panto-dev/panto/internal/tty"
)

// row is one line of a report: the sum over its turns.
type row struct {
	key      string
	id       string // the key it is grouped by (for a session of another agent: its agent and id), which key does not keep
	turns    int
	noUsage  int // valid replies without usage
	invalid  int // replies that are invalid entries
	tokens   pricing.Usage
	cost     pricing.Cost
	missing  map[string]bool // a model with no prices, or "model: price" for one lacking
	pricedAs map[string]bool // "model as model": priced by its name alone
	// --by session: the session as its agent names it.
	agent, origin, parent, title string
	subagents                    map[string]bool // the subagents rolled up into it
	own                          bool            // a turn of the session itself was met
	first                        *turn           // --by turn: the turn itself
	sortTime                     time.Time       // its last turn's
	firstTime                    time.Time       // its first turn's
	block                        *block          // --by block: the block it is
	subs                         map[string]*row // --breakdown: the row's turns by model
	subOrder                     []*row
}

// sub is the row of k (a model, or an agent) under r (--breakdown).
func (r *row) sub(k string) *row {
	s := r.subs[k]
	if s == nil {
		if r.subs == nil {
			r.subs = map[string]*row{}
		}
		s = newRow(k)
		r.subs[k] = s
		r.subOrder = append(r.subOrder, s)
	}
	return s
}

// sortSubs orders a row's models by cost (known part), largest first.
func (r *row) sortSubs() {
	sort.SliceStable(r.subOrder, func(i, j int) bool {
		a, b := r.subOrder[i], r.subOrder[j]
		if a.cost.Pico != b.cost.Pico {
			return a.cost.Pico > b.cost.Pico
		}
		return a.key < b.key
	})
}

func newRow(key string) *row {
	return &row{key: key, id: key, cost: pricing.Zero(), missing: map[string]bool{}, pricedAs: map[string]bool{}}
}

// session notes what t says of the session of a --by session row: its
// key, origin and title come from the session's own turns, and the
// subagents rolled up into it are counted.
func (r *row) session(t *turn, rollUp bool) {
	if t.parent != "" && rollUp {
		if r.subagents == nil {
			r.subagents = map[string]bool{}
		}
		r.subagents[t.origin] = true
		if !r.own {
			r.agent, r.origin = t.agent, t.parent
		}
		return
	}
	if !r.own {
		r.own = true
		r.key, r.agent, r.origin, r.parent = t.session, t.agent, t.origin, t.parent
	}
	if r.title == "" {
		r.title = t.title
	}
}

// label is what a table names the row by: for a session, the agent's own
// session id when it has one, its subagents, and its title.
func (r *row) label(by string) string {
	if by != "session" {
		return r.key
	}
	s := r.key
	if r.origin != "" {
		s = r.origin
	}
	if r.parent != "" {
		s += " (subagent of " + r.parent + ")"
	}
	if n := len(r.subagents); n > 0 {
		s += fmt.Sprintf(" +%d subagent", n)
		if n > 1 {
			s += "s"
		}
	}
	if r.title != "" {
		s += " “" + r.title + "”"
	}
	return s
}

// sessionRoom is the room a table of sessions keeps for its label (an id
// and a title) before it cuts the title.
const sessionRoom = 40

// shortLabel is label("session") with the session's id cut to n
// characters.
func (r *row) shortLabel(n int) string {
	id := r.key
	if r.origin != "" {
		id = r.origin
	}
	s := prefix(id, n)
	if r.parent != "" {
		s += " (subagent of " + prefix(r.parent, n) + ")"
	}
	if k := len(r.subagents); k > 0 {
		s += fmt.Sprintf(" +%d subagent", k)
		if k > 1 {
			s += "s"
		}
	}
	if r.title != "" {
		s += " “" + r.title + "”"
	}
	return s
}

// add prices t and adds it to the row.
func (r *row) add(t *turn, b *book) error {
	r.turns++
	if t.time.After(r.sortTime) {
		r.sortTime = t.time
	}
	if !t.time.IsZero() && (r.firstTime.IsZero() || t.time.Before(r.firstTime)) {
		r.firstTime = t.time
	}
	if t.invalid {
		r.invalid++
		r.cost.Known = false
		return nil
	}
	if !t.hasUsage {
		r.noUsage++
		r.cost.Known = false
		return nil
	}
	c, f, err := b.Cost(t.key, t.mode, t.usage)
	if err != nil {
		return err
	}
	switch {
	case c.Known:
	case f.Prices == nil:
		r.missing[f.Reason] = true
	default:
		for _, name := range c.Missing.List() { // the price, not the model
			r.missing[modelName(t.key, t.mode)+": "+name] = true
		}
	}
	if f.As != "" {
		r.pricedAs[modelName(t.key, t.mode)+" as "+f.As] = true
	}
	if err := r.tokens.Add(t.usage); err != nil {
		return err
	}
	return r.cost.Add(c)
}

// merge adds the row o into r (for totals).
func (r *row) merge(o *row) error {
	r.turns += o.turns
	r.noUsage += o.noUsage
	r.invalid += o.invalid
	for k := range o.missing {
		r.missing[k] = true
	}
	for k := range o.pricedAs {
		r.pricedAs[k] = true
	}
	if o.sortTime.After(r.sortTime) {
		r.sortTime = o.sortTime
	}
	if !o.firstTime.IsZero() && (r.firstTime.IsZero() || o.firstTime.Before(r.firstTime)) {
		r.firstTime = o.firstTime
	}

	if err := r.tokens.Add(o.tokens); err != nil {
		return err
	}
	return r.cost.Add(o.cost)
}

type money struct {
	Picodollars int64  `json:"picodollars"`
	USD         string `json:"usd"`
}

type tokensJSON struct {
	Input        int64 `json:"input"`
	Output       int64 `json:"output"`
	CacheRead    int64 `json:"cacheRead"`
	CacheWrite   int64 `json:"cacheWrite"`
	CacheWrite1h int64 `json:"cacheWrite1h"`
	Reasoning    int64 `json:"reasoning"`
}

type originJSON struct {
	Agent  string `json:"agent"`
	ID     string `json:"id"`
	Parent string `json:"parent,omitempty"`
}

type rowJSON struct {
	By                string      `json:"by"`
	Key               *string     `json:"key"`
	Session           string      `json:"session,omitempty"`
	Entry             string      `json:"entry,omitempty"`
	Timestamp         string      `json:"timestamp,omitempty"`
	Provider          string      `json:"provider,omitempty"`
	Model             string      `json:"model,omitempty"`
	Turns             int         `json:"turns"`
	Tokens            tokensJSON  `json:"tokens"`
	Cost              *money      `json:"cost"`
	KnownCost         money       `json:"knownCost"`
	UnpricedTokens    int64       `json:"unpricedTokens"`
	TurnsWithoutUsage int         `json:"turnsWithoutUsage"`
	InvalidTurns      int         `json:"invalidTurns"`
	MissingPrices     []string    `json:"missingPrices"`
	Models            []rowJSON   `json:"models,omitempty"`       // --breakdown
	PricedByName      []string    `json:"pricedByName,omitempty"` // "model as model": its provider is not in the price table
	Origin            *originJSON `json:"origin,omitempty"`       // --by session: the session as its agent names it
	Title             string      `json:"title,omitempty"`        // --by session: its first prompt
	Subagents         int         `json:"subagents,omitempty"`    // --by session: subagent sessions rolled up into it
	Block             *blockJSON  `json:"block,omitempty"`        // --by block: its window, and for the active one its burn rate
}

func (r *row) json(by string, total bool) rowJSON {
	u := r.tokens
	j := rowJSON{By: by, Turns: r.turns,
		Tokens:    tokensJSON{u.Input, u.Output, u.CacheRead, u.CacheWrite, u.CacheWrite1h, u.Reasoning},
		KnownCost: money{r.cost.Pico, pricing.USD(r.cost.Pico)}, UnpricedTokens: r.cost.Unpriced,
		TurnsWithoutUsage: r.noUsage, InvalidTurns: r.invalid, MissingPrices: missingList(r.missing)}
	if len(r.pricedAs) > 0 {
		j.PricedByName = missingList(r.pricedAs)
	}
	if by == "session" && !total {
		if r.origin != "" {
			j.Origin = &originJSON{r.agent, r.origin, r.parent}
		}
		j.Title, j.Subagents = r.title, len(r.subagents)
	}
	if !total {
		k := r.key
		j.Key = &k
	} else {
		j.By = "total"
	}
	if r.cost.Known {
		j.Cost = &money{r.cost.Pico, pricing.USD(r.cost.Pico)}
	}
	if r.block != nil && !total {
		j.Block = r.block.json()
	}
	for _, s := range r.subOrder {
		j.Models = append(j.Models, s.json("model", false))
	}
	if t := r.first; t != nil && by == "turn" {
		j.Session, j.Entry, j.Provider, j.Model = t.session, t.entry, t.key.Provider, t.key.Model
		if !t.time.IsZero() {
			j.Timestamp = t.time.UTC().Format(time.RFC3339Nano)
		}
	}
	return j
}

// unnamedModel is the model of replies whose log names none (an OpenCode
// run stream): no price can be given for it.
const unnamedModel = "unknown/unknown"

func missingList(m map[string]bool) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// writeJSONL writes one row a line, then the total.
func writeJSONL(w io.Writer, by string, rows []*row, total *row) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r.json(by, false)); err != nil {
			return err
		}
	}
	return enc.Encode(total.json(by, true))
}

// writeJSON writes one object: the rows and the total.
func writeJSON(w io.Writer, by string, rows []*row, total *row, skip skipped, prices, zone string) error {
	out := struct {
		By       string         `json:"by"`
		Rows     []rowJSON      `json:"rows"`
		Total    rowJSON        `json:"total"`
		Skipped  map[string]int `json:"skipped"`
		Prices   string         `json:"prices"`   // where the prices came from
		Timezone string         `json:"timezone"` // of days, weeks and months
	}{By: by, Rows: []rowJSON{}, Total: total.json(by, true), Skipped: skip.m(), Prices: prices, Timezone: zone}
	for _, r := range rows {
		out.Rows = append(out.Rows, r.json(by, false))
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func (s skipped) m() map[string]int {
	return map[string]int{"corruptLines": s.corrupt, "tornTails": s.torn, "invalidEntries": s.invalid, "duplicateEntries": s.duplicate, "noTimestamp": s.noTime, "foreignFiles": s.foreign, "badSessions": s.badSessions}
}

// tableWidth is how a table is fitted: the columns it may use (0: no
// limit), or a layout forced by --compact or --wide.
type tableWidth struct {
	columns       int
	compact, wide bool
}

// The table's layouts, widest first; a table on a terminal takes the first
// that fits its width, and then shortens its labels if it must. The cost
// column is in every one.
var layouts = [][]string{
	{"TURNS", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "OF WHICH 1H", "REASONING", "COST", "bar"},
	{"TURNS", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "OF WHICH 1H", "REASONING", "COST"},
	{"TURNS", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "COST"}, // the parts of others go first
	{"TURNS", "TOKENS", "COST"}, // --compact: every token in one sum
	{"TOKENS", "COST"},
	{"COST"},
}

const compactLayout = 3

// cell is the text of column col for r.
func cell(col string, r *row, bar string) string {
	u := r.tokens
	switch col {
	case "TURNS":
		return num(int64(r.turns))
	case "INPUT":
		return num(u.Input)
	case "OUTPUT":
		return num(u.Output)
	case "CACHE READ":
		return num(u.CacheRead)
	case "CACHE WRITE":
		return num(u.CacheWrite)
	case "OF WHICH 1H":
		return num(u.CacheWrite1h)
	case "REASONING":
		return num(u.Reasoning)
	case "TOKENS": // input, output and the cache counts (reasoning is a part of output)
		sum := int64(0)
		for _, n := range []int64{u.Input, u.Output, u.CacheRead, u.CacheWrite} {
			if sum > math.MaxInt64-n {
				return "overflow"
			}
			sum += n
		}
		return num(sum)
	case "COST":
		return costCell(r.cost)
	}
	return bar
}

// writeTable writes aligned columns (labels left, numbers right) with a
// total line; --by day gets a column of bars scaled to the largest known
// cost, so spend over time shows at a glance. --breakdown's rows follow
// theirs, indented. On a terminal the table fits its width (tw): the
// first of layouts that fits, then labels shortened in their middle.
func writeTable(w io.Writer, by string, rows []*row, total *row, tw tableWidth, colour bool) error {
	var top int64
	for _, r := range rows {
		top = max(top, r.cost.Pico)
	}
	type line struct {
		label string
		r     *row
		bar   string
	}
	var lines []line
	for _, r := range rows {
		b := ""
		if by == "day" && top > 0 {
			b = strings.Repeat("█", int((r.cost.Pico*30+top-1)/top))
		}
		lines = append(lines, line{tty.Line(r.label(by)), r, b}) // a model, project or session name from a log
		for _, s := range r.subOrder {
			lines = append(lines, line{"  " + tty.Line(s.key), s, ""})
		}
	}
	lines = append(lines, line{"TOTAL", total, ""})
	render := func(cols []string) [][]string {
		cells := [][]string{append([]string{strings.ToUpper(by)}, cols...)}
		if cols[len(cols)-1] == "bar" {
			cells[0][len(cols)] = ""
		}
		for _, l := range lines {
			c := []string{l.label}
			for _, col := range cols {
				c = append(c, cell(col, l.r, l.bar))
			}
			cells = append(cells, c)
		}
		return cells
	}
	widths := func(cells [][]string) ([]int, int) {
		width := make([]int, len(cells[0]))
		for _, c := range cells {
			for i, s := range c {
				width[i] = max(width[i], utf8.RuneCountInString(s))
			}
		}
		sum := 0
		for i, n := range width {
			if i > 0 && n > 0 {
				n += 2
			}
			sum += n
		}
		return width, sum
	}
	first := 0
	if tw.compact {
		first = compactLayout
	}
	if by != "day" && !tw.compact {
		first = 1
	}
	cells := render(layouts[first])
	width, sum := widths(cells)
	dropped := false
	if !tw.wide && tw.columns > 0 && sum > tw.columns && by == "session" {
		// A session's id gives way first: cut to the shortest prefix
		// that tells the table's sessions apart (8 at least); then
		// columns, while the label has less than sessionRoom; then the
		// title, at its end.
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = r.key
			if r.origin != "" {
				ids[i] = r.origin
			}
		}
		n := uniquePrefix(ids, 8)
		for i := range lines {
			if lines[i].r != total && !strings.HasPrefix(lines[i].label, "  ") {
				lines[i].label = tty.Line(lines[i].r.shortLabel(n))
			}
		}
		cells = render(layouts[first])
		width, sum = widths(cells)
		for i := first + 1; sum > tw.columns && tw.columns-(sum-width[0]) < sessionRoom && i < len(layouts); i++ {
			cells = render(layouts[i])
			width, sum = widths(cells)
			dropped = true
		}
		if sum > tw.columns {
			keep := max(8, width[0]-(sum-tw.columns))
			for _, c := range cells {
				if r := []rune(c[0]); len(r) > keep {
					c[0] = string(r[:keep-1]) + "…"
				}
			}
			width, sum = widths(cells)
		}
	}
	for i := first + 1; !tw.wide && tw.columns > 0 && sum > tw.columns && i < len(layouts); i++ {
		cells = render(layouts[i])
		width, sum = widths(cells)
		dropped = true
	}
	if !tw.wide && tw.columns > 0 && sum > tw.columns { // then the labels give way, never the cost
		keep := max(8, width[0]-(sum-tw.columns))
		for _, c := range cells {
			c[0] = shorten(c[0], keep)
		}
		width, _ = widths(cells)
	}
	bw := bufio.NewWriter(w)
	for n, c := range cells {
		var b strings.Builder
		for i, s := range c {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(s))
			switch {
			case i == 0:
				b.WriteString(s + pad)
			case i == len(c)-1 && layouts[0][len(layouts[0])-1] == "bar" && len(c) == len(layouts[0])+1:
				if s != "" {
					b.WriteString("  " + s)
				}
			default:
				b.WriteString("  " + pad + s)
			}
		}
		text := strings.TrimRight(b.String(), " ")
		if colour {
			text = paint(text, n, len(cells), n > 0 && lines[n-1].r != nil && strings.HasPrefix(lines[n-1].label, "  "), n > 0 && !lines[n-1].r.cost.Known)
		}
		fmt.Fprintln(bw, text)
	}
	if dropped {
		fmt.Fprintf(bw, "(columns left out to fit %d columns: --wide shows them all)\n", tw.columns)
	}
	if len(total.missing) > 0 || len(total.pricedAs) > 0 || total.noUsage > 0 || total.invalid > 0 {
		fmt.Fprintln(bw)
	}
	if len(total.missing) > 0 {
		fmt.Fprintf(bw, "* unknown: no price for %s (%s tokens unpriced); the cost shown is the known part\n", tty.Line(strings.Join(missingList(total.missing), ", ")), num(total.cost.Unpriced))
	}
	if len(total.pricedAs) > 0 {
		fmt.Fprintf(bw, "* priced by name: %s (the provider is not in the price table; one model of the table has the name)\n", tty.Line(strings.Join(missingList(total.pricedAs), ", ")))
	}
	if total.noUsage > 0 {
		fmt.Fprintf(bw, "* unknown: %d replies carry no usage\n", total.noUsage)
	}
	if total.invalid > 0 {
		fmt.Fprintf(bw, "* unknown: %d replies are invalid entries (panto-fsck reports them)\n", total.invalid)
	}
	return bw.Flush()
}

// shorten cuts s to n characters in its middle, where an id or a path
// differs least.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := (n - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(n-1-head):])
}

func costCell(c pricing.Cost) string {
	if c.Known {
		return pricing.Dollars(c.Pico)
	}
	return "≥" + pricing.Dollars(c.Pico) + "*"
}

// num groups digits by thousands.
func num(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ANSI styles of a coloured table (SGR): the header and the total bold,
// --breakdown's rows dim, an unknown cost yellow.
const (
	sgrBold   = "\x1b[1m"
	sgrDim    = "\x1b[2m"
	sgrYellow = "\x1b[33m"
	sgrReset  = "\x1b[0m"
)

// paint colours line n of a table of count lines (the header first, the
// total last): styles wrap whole lines, so columns stay aligned.
func paint(text string, n, count int, sub, unknown bool) string {
	style := ""
	switch {
	case n == 0 || n == count-1:
		style = sgrBold
	case sub:
		style = sgrDim
	}
	if unknown && n > 0 {
		style += sgrYellow
	}
	if style == "" {
		return text
	}
	return style + text + sgrReset
}
