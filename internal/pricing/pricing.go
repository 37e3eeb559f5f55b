// Package pricing computes exact costs of token usage (SPEC §6).
//
// Prices are integers: picodollars (10^-12 USD) per token, which is USD per
// million tokens × 10^6, so any price with up to six decimals per million
// tokens is exact ($0.075 → 75000). A finer price is refused, never
// rounded. Sums are exact and overflow is an error. An omitted price is
// unknown, and a cost that needs an unknown price is unknown: its known
// part is reported beside the tokens left unpriced.
package pricing

import (
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"strings"
)

// ErrOverflow is a cost too large for an int64 of picodollars (~9.2 million USD).
var ErrOverflow = errors.New("pricing: cost overflows int64 picodollars")

// ErrTokenOverflow is a sum of token counts too large for an int64.
var ErrTokenOverflow = errors.New("pricing: a sum of token counts overflows int64")

// Price is a price per token in picodollars; Known is false when omitted.
type Price struct {
	Pico  int64
	Known bool
}

// Rates are the prices of the token categories.
type Rates struct {
	Input, Output, CacheRead, CacheWrite, CacheWrite1h Price
}

// Prices are the prices of one model.
type Prices struct {
	Rates
	// Long, when set, prices the whole request instead of Rates once its
	// prompt (input + cacheRead + cacheWrite) exceeds Threshold tokens.
	Long *Long
	// Modes are the prices of the billed modes other than the standard
	// one, by the name the logs give them: "fast" (Claude's usage.speed),
	// "priority" and "flex" (OpenAI's service tiers). A request in a mode
	// a model has no prices for has an unknown cost, never the standard
	// one (SPEC §11).
	Modes map[string]*Prices
}

// Standard reports whether mode names a request billed at the standard
// prices: none given, or the name a provider gives its standard mode.
func Standard(mode string) bool {
	switch mode {
	case "", "standard", "default", "auto":
		return true
	}
	return false
}

// Mode returns the prices of a request made in mode: p for a standard one,
// else the mode's prices, or nil when p has none for it.
func (p *Prices) Mode(mode string) *Prices {
	if p == nil || Standard(mode) {
		return p
	}
	return p.Modes[mode]
}

// Long are long-context prices.
type Long struct {
	Threshold int64
	Rates
}

// Key names a model.
type Key struct{ Provider, Model string }

func (k Key) String() string { return k.Provider + "/" + k.Model }

// Table is a pricing file: prices by exact (provider, model).
type Table map[Key]*Prices

// Usage is one reply's token counts (SPEC §2).
type Usage struct {
	Input, Output, CacheRead, CacheWrite, CacheWrite1h, Reasoning int64
}

// Add adds u to t.
func (t *Usage) Add(u Usage) error {
	var err error
	add := func(a *int64, b int64) {
		if s, ok := addInt(*a, b); ok {
			*a = s
		} else {
			err = ErrTokenOverflow
		}
	}
	add(&t.Input, u.Input)
	add(&t.Output, u.Output)
	add(&t.CacheRead, u.CacheRead)
	add(&t.CacheWrite, u.CacheWrite)
	add(&t.CacheWrite1h, u.CacheWrite1h)
	add(&t.Reasoning, u.Reasoning)
	return err
}

// Cost is an exact cost, or the known part of an unknown one.
type Cost struct {
	Pico     int64   // the known part, in picodollars
	Known    bool    // every token was priced
	Unpriced int64   // tokens of categories whose price is unknown
	Missing  Missing // the prices it needed that the model lacks
}

// Missing is a set of prices of a model: bit i is Names[i].
type Missing uint16

// Names are the prices a Missing can hold, as models.toml names them.
var Names = [...]string{"input", "output", "cache_read", "cache_write", "cache_write_1h",
	"long_context.input", "long_context.output", "long_context.cache_read", "long_context.cache_write", "long_context.cache_write_1h"}

// List names the prices of m.
func (m Missing) List() []string {
	var out []string
	for i, n := range Names {
		if m&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Add adds c to s: a sum that includes an unknown is unknown.
func (s *Cost) Add(c Cost) error {
	p, ok := addInt(s.Pico, c.Pico)
	if !ok {
		return ErrOverflow
	}
	u, ok := addInt(s.Unpriced, c.Unpriced)
	if !ok {
		return ErrOverflow
	}
	s.Pico, s.Unpriced, s.Known = p, u, s.Known && c.Known
	s.Missing |= c.Missing
	return nil
}

// Zero is the cost of nothing: known, zero.
func Zero() Cost { return Cost{Known: true} }

// Of prices u with p; a nil p (the model is not in the table) prices
// nothing. Reasoning tokens are part of output and never charged again;
// one-hour cache writes are part of cacheWrite, priced at CacheWrite1h,
// the rest at CacheWrite.
func Of(p *Prices, u Usage) (Cost, error) {
	c := Zero()
	if u.CacheWrite1h > u.CacheWrite {
		return c, fmt.Errorf("pricing: cacheWrite1h %d exceeds cacheWrite %d", u.CacheWrite1h, u.CacheWrite)
	}
	var r *Rates
	long := 0 // the first bit of the rates' names in Missing
	if p != nil {
		r = &p.Rates
		if p.Long != nil {
			prompt, ok1 := addInt(u.Input, u.CacheRead)
			prompt, ok2 := addInt(prompt, u.CacheWrite)
			if !ok1 || !ok2 {
				return c, ErrOverflow
			}
			if prompt > p.Long.Threshold {
				r, long = &p.Long.Rates, 5
			}
		}
	}
	lines := []struct {
		n     int64
		price func(*Rates) Price
	}{
		{u.Input, func(r *Rates) Price { return r.Input }},
		{u.Output, func(r *Rates) Price { return r.Output }},
		{u.CacheRead, func(r *Rates) Price { return r.CacheRead }},
		{u.CacheWrite - u.CacheWrite1h, func(r *Rates) Price { return r.CacheWrite }},
		{u.CacheWrite1h, func(r *Rates) Price { return r.CacheWrite1h }},
	}
	for i, l := range lines {
		if l.n == 0 {
			continue
		}
		if r == nil || !l.price(r).Known {
			if r != nil {
				c.Missing |= 1 << (long + i)
			}
			c.Known = false
			var ok bool
			if c.Unpriced, ok = addInt(c.Unpriced, l.n); !ok {
				return c, ErrOverflow
			}
			continue
		}
		v, ok := mulInt(l.n, l.price(r).Pico)
		if !ok {
			return c, ErrOverflow
		}
		if c.Pico, ok = addInt(c.Pico, v); !ok {
			return c, ErrOverflow
		}
	}
	return c, nil
}

func addInt(a, b int64) (int64, bool) {
	s := a + b
	if b > 0 && s < a || b < 0 && s > a {
		return 0, false
	}
	return s, true
}

func mulInt(a, b int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	return int64(lo), hi == 0 && lo <= 1<<63-1
}

// USD renders picodollars as an exact decimal string of dollars, with every
// significant digit: 75000 → "0.000000075".
func USD(pico int64) string {
	neg := pico < 0
	v := new(big.Int).SetInt64(pico)
	if neg {
		v.Neg(v)
	}
	s := fmt.Sprintf("%013s", v.String())
	whole, frac := s[:len(s)-12], strings.TrimRight(s[len(s)-12:], "0")
	out := whole
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

// Dollars renders picodollars rounded half-up to cents for tables ("$0.01";
// "<$0.01" for less than half a cent but more than nothing).
// Exact values are in the JSON outputs.
func Dollars(pico int64) string {
	const cent = 10_000_000_000
	if pico < 0 {
		return "-" + Dollars(-max(pico, -1<<63+1)) // costs are never negative; a row of them could be
	}
	cents := pico / cent // computed without overflow near the int64 limit
	if pico%cent >= cent/2 {
		cents++
	}
	if cents == 0 && pico > 0 {
		return "<$0.01"
	}
	return fmt.Sprintf("$%d.%02d", cents/100, cents%100)
}

// ParseDecimal converts a decimal price in USD per million tokens to
// picodollars per token, exactly: at most six decimals.
func ParseDecimal(s string) (int64, error) {
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("price %s is negative", s)
	}
	s = strings.TrimPrefix(s, "+")
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" {
		return 0, fmt.Errorf("price %q is not a decimal number", s)
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > 6 {
		return 0, fmt.Errorf("price %s has more than six decimals per million tokens: not exact in picodollars per token", s)
	}
	if whole == "" {
		whole = "0"
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("price %q is not a decimal number", s)
		}
	}
	v, ok := new(big.Int).SetString(whole+frac+strings.Repeat("0", 6-len(frac)), 10)
	if !ok || !v.IsInt64() {
		return 0, fmt.Errorf("price %s is too large", s)
	}
	return v.Int64(), nil
}
