package costcmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/panto-dev/panto/internal/pricing"
	"github.com/panto-dev/panto/internal/tty"
)

// book is the set's pricing.Book: the one pricing path of every output.
type book struct {
	set *pricing.Set
	*pricing.Book
}

func newBook(set *pricing.Set) *book { return &book{set: set, Book: pricing.NewBook(set.Table)} }

// modelName is a model as rows name it: with its billed mode, when it is
// not the standard one.
func modelName(k pricing.Key, mode string) string {
	if pricing.Standard(mode) {
		return k.String()
	}
	return k.String() + " (" + mode + ")"
}

// priceRow is one model of --prices.
type priceRow struct {
	Provider     string     `json:"provider"`
	Model        string     `json:"model"`
	Mode         string     `json:"mode,omitempty"`
	Input        *string    `json:"input"`
	Output       *string    `json:"output"`
	CacheRead    *string    `json:"cacheRead"`
	CacheWrite   *string    `json:"cacheWrite"`
	CacheWrite1h *string    `json:"cacheWrite1h"`
	LongContext  *priceLong `json:"longContext,omitempty"`
	Source       string     `json:"source"`
}

type priceLong struct {
	Threshold    int64   `json:"threshold"`
	Input        *string `json:"input"`
	Output       *string `json:"output"`
	CacheRead    *string `json:"cacheRead"`
	CacheWrite   *string `json:"cacheWrite"`
	CacheWrite1h *string `json:"cacheWrite1h"`
}

// perMtok is a price in USD per million tokens, exactly (picodollars per
// token are micro-USD per million tokens); nil when unknown.
func perMtok(p pricing.Price) *string {
	if !p.Known {
		return nil
	}
	v := fmt.Sprintf("%d", p.Pico/1_000_000)
	if f := strings.TrimRight(fmt.Sprintf("%06d", p.Pico%1_000_000), "0"); f != "" {
		v += "." + f
	}
	return &v
}

func priceRows(set *pricing.Set) []priceRow {
	keys := make([]pricing.Key, 0, len(set.Table))
	for k := range set.Table {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Provider != keys[j].Provider {
			return keys[i].Provider < keys[j].Provider
		}
		return keys[i].Model < keys[j].Model
	})
	var out []priceRow
	for _, k := range keys {
		p := set.Table[k]
		src := set.From(k).String()
		one := func(mode string, p *pricing.Prices) {
			r := priceRow{Provider: k.Provider, Model: k.Model, Mode: mode, Input: perMtok(p.Input), Output: perMtok(p.Output), CacheRead: perMtok(p.CacheRead),
				CacheWrite: perMtok(p.CacheWrite), CacheWrite1h: perMtok(p.CacheWrite1h), Source: src}
			if l := p.Long; l != nil {
				r.LongContext = &priceLong{Threshold: l.Threshold, Input: perMtok(l.Input), Output: perMtok(l.Output), CacheRead: perMtok(l.CacheRead),
					CacheWrite: perMtok(l.CacheWrite), CacheWrite1h: perMtok(l.CacheWrite1h)}
			}
			out = append(out, r)
		}
		one("", p)
		modes := make([]string, 0, len(p.Modes))
		for m := range p.Modes {
			modes = append(modes, m)
		}
		sort.Strings(modes)
		for _, m := range modes {
			one(m, p.Modes[m])
		}
	}
	return out
}

// writePrices prints the price table in use (--prices): where it came
// from, then one row per model and mode, in USD per million tokens ("-":
// unknown).
func writePrices(w io.Writer, format string, set *pricing.Set) error {
	rows := priceRows(set)
	switch format {
	case "json", "jsonl":
		var sources []map[string]any
		for _, s := range set.Sources {
			sources = append(sources, map[string]any{"name": s.Name, "date": s.Date, "models": s.Models, "overrides": s.Overrides})
		}
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		if format == "json" {
			enc.SetIndent("", "  ")
			return enc.Encode(map[string]any{"prices": set.String(), "sources": sources, "models": rows})
		}
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "prices: %s (USD per million tokens)\n\n", tty.Line(set.String()))
	cell := func(s *string) string {
		if s == nil {
			return "-"
		}
		return *s
	}
	cells := [][]string{{"MODEL", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "1H WRITE", "LONG CONTEXT", "SOURCE"}}
	for _, r := range rows {
		name := tty.Line(r.Provider + "/" + r.Model) // names from a file, escaped on a terminal
		if r.Mode != "" {
			name += " (" + r.Mode + ")"
		}
		long := ""
		if l := r.LongContext; l != nil {
			long = fmt.Sprintf(">%d: %s/%s/%s/%s/%s", l.Threshold, cell(l.Input), cell(l.Output), cell(l.CacheRead), cell(l.CacheWrite), cell(l.CacheWrite1h))
		}
		cells = append(cells, []string{name, cell(r.Input), cell(r.Output), cell(r.CacheRead), cell(r.CacheWrite), cell(r.CacheWrite1h), long, tty.Line(r.Source)})
	}
	width := make([]int, len(cells[0]))
	for _, c := range cells {
		for i, s := range c {
			width[i] = max(width[i], len([]rune(s)))
		}
	}
	for _, c := range cells {
		var b strings.Builder
		for i, s := range c {
			pad := strings.Repeat(" ", width[i]-len([]rune(s)))
			switch {
			case i == 0 || i >= 6:
				b.WriteString(s + pad)
			default:
				b.WriteString(pad + s)
			}
			if i < len(c)-1 {
				b.WriteString("  ")
			}
		}
		fmt.Fprintln(bw, strings.TrimRight(b.String(), " "))
	}
	return bw.Flush()
}
