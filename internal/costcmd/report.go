package costcmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/panto-dev/panto/pkg/pricing"
	"github.com/panto-dev/panto/pkg/tty"
)

// row is one line of a report: the sum over its turns.
type row struct {
	key      string
	turns    int
	noUsage  int // valid replies without usage
	invalid  int // replies that are invalid entries
	tokens   pricing.Usage
	cost     pricing.Cost
	missing  map[string]bool // a model with no prices, or "model: price" for one lacking
	first    *turn           // --by turn: the turn itself
	sortTime time.Time
}

func newRow(key string) *row {
	return &row{key: key, cost: pricing.Zero(), missing: map[string]bool{}}
}

// add prices t and adds it to the row.
func (r *row) add(t *turn, table pricing.Table) error {
	r.turns++
	if t.time.After(r.sortTime) {
		r.sortTime = t.time
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
	p := table[t.key]
	c, err := pricing.Of(p, t.usage)
	if err != nil {
		return err
	}
	switch {
	case c.Known:
	case p == nil:
		r.missing[t.key.String()] = true
	default:
		for _, name := range c.Missing.List() { // the price, not the model
			r.missing[t.key.String()+": "+name] = true
		}
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

type rowJSON struct {
	By                string     `json:"by"`
	Key               *string    `json:"key"`
	Session           string     `json:"session,omitempty"`
	Entry             string     `json:"entry,omitempty"`
	Timestamp         string     `json:"timestamp,omitempty"`
	Provider          string     `json:"provider,omitempty"`
	Model             string     `json:"model,omitempty"`
	Turns             int        `json:"turns"`
	Tokens            tokensJSON `json:"tokens"`
	Cost              *money     `json:"cost"`
	KnownCost         money      `json:"knownCost"`
	UnpricedTokens    int64      `json:"unpricedTokens"`
	TurnsWithoutUsage int        `json:"turnsWithoutUsage"`
	InvalidTurns      int        `json:"invalidTurns"`
	MissingPrices     []string   `json:"missingPrices"`
}

func (r *row) json(by string, total bool) rowJSON {
	u := r.tokens
	j := rowJSON{By: by, Turns: r.turns,
		Tokens:    tokensJSON{u.Input, u.Output, u.CacheRead, u.CacheWrite, u.CacheWrite1h, u.Reasoning},
		KnownCost: money{r.cost.Pico, pricing.USD(r.cost.Pico)}, UnpricedTokens: r.cost.Unpriced,
		TurnsWithoutUsage: r.noUsage, InvalidTurns: r.invalid, MissingPrices: missingList(r.missing)}
	if !total {
		k := r.key
		j.Key = &k
	} else {
		j.By = "total"
	}
	if r.cost.Known {
		j.Cost = &money{r.cost.Pico, pricing.USD(r.cost.Pico)}
	}
	if t := r.first; t != nil && by == "turn" {
		j.Session, j.Entry, j.Provider, j.Model = t.session, t.entry, t.key.Provider, t.key.Model
		if !t.time.IsZero() {
			j.Timestamp = t.time.UTC().Format(time.RFC3339Nano)
		}
	}
	return j
}

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
func writeJSON(w io.Writer, by string, rows []*row, total *row, skip skipped) error {
	out := struct {
		By      string         `json:"by"`
		Rows    []rowJSON      `json:"rows"`
		Total   rowJSON        `json:"total"`
		Skipped map[string]int `json:"skipped"`
	}{By: by, Rows: []rowJSON{}, Total: total.json(by, true), Skipped: skip.m()}
	for _, r := range rows {
		out.Rows = append(out.Rows, r.json(by, false))
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func (s skipped) m() map[string]int {
	return map[string]int{"corruptLines": s.corrupt, "tornTails": s.torn, "invalidEntries": s.invalid, "duplicateEntries": s.duplicate, "noTimestamp": s.noTime, "foreignFiles": s.foreign}
}

// writeTable writes aligned columns (labels left, numbers right) with a
// total line; --by day gets a column of bars scaled to the largest known
// cost, so spend over time shows at a glance.
func writeTable(w io.Writer, by string, rows []*row, total *row) error {
	var top int64
	for _, r := range rows {
		top = max(top, r.cost.Pico)
	}
	cells := [][]string{{strings.ToUpper(by), "TURNS", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "OF WHICH 1H", "REASONING", "COST", ""}}
	line := func(label string, r *row, bar bool) {
		b := ""
		if by == "day" && bar && top > 0 {
			b = strings.Repeat("█", int((r.cost.Pico*30+top-1)/top))
		}
		cells = append(cells, []string{label, num(int64(r.turns)), num(r.tokens.Input), num(r.tokens.Output), num(r.tokens.CacheRead),
			num(r.tokens.CacheWrite), num(r.tokens.CacheWrite1h), num(r.tokens.Reasoning), costCell(r.cost), b})
	}
	for _, r := range rows {
		line(tty.Line(r.key), r, true) // a model, project or session name from a log
	}
	line("TOTAL", total, false)
	width := make([]int, len(cells[0]))
	for _, c := range cells {
		for i, s := range c {
			width[i] = max(width[i], utf8.RuneCountInString(s))
		}
	}
	bw := bufio.NewWriter(w)
	for _, c := range cells {
		var b strings.Builder
		for i, s := range c {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(s))
			switch {
			case i == 0:
				b.WriteString(s + pad)
			case i == len(c)-1:
				if s != "" {
					b.WriteString("  " + s)
				}
			default:
				b.WriteString("  " + pad + s)
			}
		}
		fmt.Fprintln(bw, strings.TrimRight(b.String(), " "))
	}
	if len(total.missing) > 0 || total.noUsage > 0 || total.invalid > 0 {
		fmt.Fprintln(bw)
	}
	if len(total.missing) > 0 {
		fmt.Fprintf(bw, "* unknown: no price for %s (%s tokens unpriced); the cost shown is the known part\n", tty.Line(strings.Join(missingList(total.missing), ", ")), num(total.cost.Unpriced))
	}
	if total.noUsage > 0 {
		fmt.Fprintf(bw, "* unknown: %d replies carry no usage\n", total.noUsage)
	}
	if total.invalid > 0 {
		fmt.Fprintf(bw, "* unknown: %d replies are invalid entries (panto-fsck reports them)\n", total.invalid)
	}
	return bw.Flush()
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
