package pricing

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/panto-dev/panto/internal/exitcode"
)

// Set is the price table in use and where each of its prices came from:
// the built-in table and, over it, a pricing file (models.toml or LiteLLM's
// JSON) that adds models and replaces the built-in prices of the models it
// names, model by model; or a file alone (SPEC §11).
type Set struct {
	Table   Table
	Sources []Source    // in the order applied: a later one overrides an earlier one
	from    map[Key]int // the source of each model: an index into Sources
}

// Source is one table a Set was made of.
type Source struct {
	Name      string // "built-in", or the file's path
	Date      string // the built-in table's date; a file's modification day
	Models    int    // the models it gave
	Overrides int    // of which it replaced an earlier source's
	Fetched   bool   // the table panto-cost --update-prices fetched (Date: the day it did)
}

func (s Source) String() string {
	if s.Name == "built-in" {
		return "built-in, " + s.Date
	}
	return s.Name
}

// String says where the prices came from, for a report: "built-in,
// 2026-12-01", "built-in, 2026-12-03; over it FILE (N models, M replacing
// built-in ones)", or "FILE".
func (s *Set) String() string {
	var b strings.Builder
	for i, src := range s.Sources {
		if i > 0 {
			b.WriteString("; over it ")
		}
		b.WriteString(src.String())
		if i > 0 {
			fetched := ""
			if src.Fetched {
				fetched = "fetched " + src.Date + ", "
			}
			fmt.Fprintf(&b, " (%s%s, %d replacing built-in ones)", fetched, models(src.Models), src.Overrides)
		}
	}
	return b.String()
}

// Builtin reports whether the built-in table is part of the set.
func (s *Set) Builtin() bool { return len(s.Sources) > 0 && s.Sources[0].Name == "built-in" }

// From returns the source of a model's prices.
func (s *Set) From(k Key) Source {
	if i, ok := s.from[k]; ok {
		return s.Sources[i]
	}
	return Source{}
}

// add lays t over the set, model by model.
func (s *Set) add(t Table, src Source) {
	if s.Table == nil {
		s.Table, s.from = Table{}, map[Key]int{}
	}
	i := len(s.Sources)
	for k, p := range t {
		if _, ok := s.Table[k]; ok {
			src.Overrides++
		}
		s.Table[k], s.from[k] = p, i
		src.Models++
	}
	s.Sources = append(s.Sources, src)
}

// Open makes the set of prices a command uses: the built-in table, with
// over it the file a --pricing flag names or else models.toml at the XDG
// place (if there is one); with only, the file alone. warn gets what the
// file leaves out. A bad file is a usage error (exit 2).
func Open(file string, only bool, getenv func(string) string, warn func(string)) (*Set, error) {
	s := &Set{}
	if !only {
		t, err := Builtin()
		if err != nil {
			return nil, err
		}
		s.add(t, Source{Name: "built-in", Date: BuiltinDate})
		// The table --update-prices fetched, over the built-in one; what
		// it left out was said when it was fetched.
		if fp := FetchedPath(getenv); fp != "" {
			t, _, err := Load(fp, true)
			if err != nil {
				return nil, exitcode.Usagef("prices fetched by --update-prices: %v: run panto-cost --update-prices again, or remove the file", err)
			}
			if t != nil {
				src := Source{Name: fp, Fetched: true}
				if fi, err := os.Stat(fp); err == nil {
					src.Date = fi.ModTime().UTC().Format("2006-01-02")
				}
				s.add(t, src)
			}
		}
	}
	path, optional := file, false
	if path == "" {
		path, optional = DefaultPath(getenv), true
	}
	if path == "" {
		return s, nil
	}
	table, warnings, err := Load(path, optional)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if only {
				return nil, exitcode.Usagef("%v: give a models.toml or LiteLLM JSON file", err)
			}
			return nil, exitcode.Usagef("%v: give a models.toml or LiteLLM JSON file, or leave --pricing out for the built-in prices (panto-cost --prices shows them)", err)
		}
		if errors.Is(err, ErrNotRegular) {
			return nil, exitcode.Usagef("pricing %v: give a models.toml or LiteLLM JSON file", err)
		}
		return nil, exitcode.Usagef("pricing %v: fix the file", err)
	}
	if table == nil { // none at the XDG place
		return s, nil
	}
	for _, w := range warnings {
		warn("pricing " + path + ": " + w)
	}
	src := Source{Name: path}
	if fi, err := os.Stat(path); err == nil {
		src.Date = fi.ModTime().UTC().Format("2006-01-02")
	}
	s.add(table, src)
	return s, nil
}

// How says how a model's prices were found.
type How uint8

const (
	Exact     How = iota // by its provider and name
	ByName               // by its name alone: its provider is none the table knows, and one provider of the table has that name
	NotFound             // no price
	Ambiguous            // its provider is none the table knows, and several providers of the table name it, at different prices
)

// Resolved is what Resolve found for a model.
type Resolved struct {
	Prices *Prices // nil: unknown
	As     Key     // the model whose prices were used
	How    How
	Others []Key // for Ambiguous: the models it could be
}

// Resolve finds the prices of k: by its provider and name; or, where the
// table knows no model of k's provider (pi's openai-codex, a proxy's name
// for a Codex model_provider), by its name alone when exactly one provider
// of the table has that name (or when all that have it price it the same).
// It scans the table on a miss: callers keep what it finds per model.
func (t Table) Resolve(k Key) Resolved {
	if p := t[k]; p != nil {
		return Resolved{Prices: p, As: k, How: Exact}
	}
	var same []Key
	for o := range t {
		if o.Provider == k.Provider {
			return Resolved{How: NotFound} // a provider the table knows: no guessing
		}
		if o.Model == k.Model {
			same = append(same, o)
		}
	}
	if len(same) == 0 {
		return Resolved{How: NotFound}
	}
	sort.Slice(same, func(i, j int) bool { return same[i].Provider < same[j].Provider })
	first := t[same[0]]
	for _, o := range same[1:] {
		if !first.Equal(t[o]) {
			return Resolved{How: Ambiguous, Others: same}
		}
	}
	return Resolved{Prices: first, As: same[0], How: ByName}
}

// Equal reports whether p and o are the same prices.
func (p *Prices) Equal(o *Prices) bool {
	if p == o {
		return true
	}
	if p == nil || o == nil || p.Rates != o.Rates || (p.Long == nil) != (o.Long == nil) || p.Long != nil && *p.Long != *o.Long || len(p.Modes) != len(o.Modes) {
		return false
	}
	for m, mp := range p.Modes {
		if !mp.Equal(o.Modes[m]) {
			return false
		}
	}
	return true
}

func models(n int) string {
	if n == 1 {
		return "1 model"
	}
	return fmt.Sprintf("%d models", n)
}
