package pricing

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

func known(p int64) Price { return Price{Pico: p, Known: true} }

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  string
	}{
		{"3", 3_000_000, ""},
		{"3.0", 3_000_000, ""},
		{"0.075", 75_000, ""},
		{"0.005", 5_000, ""},
		{"0.000001", 1, ""},
		{"15.000000", 15_000_000, ""},
		{"0.0000001", 0, "more than six decimals"},
		{"-1", 0, "negative"},
		{"1e3", 0, "not a decimal number"},
		{"", 0, "not a decimal number"},
		{".", 0, "not a decimal number"},
		{"99999999999999", 0, "too large"},
	}
	for _, tt := range tests {
		got, err := ParseDecimal(tt.in)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseDecimal(%q) = %d, %v; want %d, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestOf(t *testing.T) {
	sonnet := &Prices{Rates: Rates{known(3_000_000), known(15_000_000), known(300_000), known(3_750_000), known(6_000_000)},
		Long: &Long{Threshold: 200_000, Rates: Rates{known(6_000_000), known(22_500_000), known(600_000), known(7_500_000), Price{}}}}
	cheap := &Prices{Rates: Rates{Input: known(75_000), Output: known(5_000), CacheRead: known(0)}}
	tests := []struct {
		name     string
		p        *Prices
		u        Usage
		pico     int64
		known    bool
		unpriced int64
	}{
		// The seeds' case: 1500 in, 85 out, 800 cache read at Sonnet prices.
		{"seeds sonnet", sonnet, Usage{Input: 1500, Output: 85, CacheRead: 800}, 4_500_000_000 + 1_275_000_000 + 240_000_000, true, 0},
		{"$0.075 and $0.005 exact", cheap, Usage{Input: 1, Output: 1}, 80_000, true, 0},
		{"a known zero", cheap, Usage{CacheRead: 1_000_000}, 0, true, 0},
		{"reasoning is part of output", sonnet, Usage{Output: 100, Reasoning: 60}, 1_500_000_000, true, 0},
		{"1h writes", sonnet, Usage{CacheWrite: 300, CacheWrite1h: 100}, 200*3_750_000 + 100*6_000_000, true, 0},
		{"long context: the whole request", sonnet, Usage{Input: 150_000, CacheRead: 50_001, Output: 10}, 150_000*6_000_000 + 50_001*600_000 + 10*22_500_000, true, 0},
		{"at the threshold: base prices", sonnet, Usage{Input: 200_000}, 200_000 * 3_000_000, true, 0},
		{"long context, price omitted: unknown", sonnet, Usage{Input: 300_000, CacheWrite: 10, CacheWrite1h: 10}, 300_000 * 6_000_000, false, 10},
		{"omitted category price: unknown", cheap, Usage{Input: 10, CacheWrite: 5}, 750_000, false, 5},
		{"unknown model", nil, Usage{Input: 10, Output: 2}, 0, false, 12},
		{"unknown model, no tokens", nil, Usage{}, 0, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Of(tt.p, tt.u)
			if err != nil || c.Pico != tt.pico || c.Known != tt.known || c.Unpriced != tt.unpriced {
				t.Fatalf("Of = %+v, %v; want %d known=%v unpriced=%d", c, err, tt.pico, tt.known, tt.unpriced)
			}
		})
	}
}

func TestOverflow(t *testing.T) {
	p := &Prices{Rates: Rates{Input: known(math.MaxInt64 / 2)}}
	if _, err := Of(p, Usage{Input: 3}); err != ErrOverflow {
		t.Fatalf("multiply: %v", err)
	}
	s := Cost{Pico: math.MaxInt64, Known: true}
	if err := s.Add(Cost{Pico: 1, Known: true}); err != ErrOverflow {
		t.Fatalf("sum: %v", err)
	}
	u := Usage{Input: math.MaxInt64}
	if err := u.Add(Usage{Input: 1}); err != ErrTokenOverflow {
		t.Fatalf("tokens: %v", err)
	}
}

// TestDollars: a table rounds to cents exactly, up to the int64 limit.
func TestDollars(t *testing.T) {
	for _, tt := range []struct {
		pico int64
		want string
	}{
		{0, "$0.00"},
		{1, "<$0.01"},
		{4_999_999_999, "<$0.01"},
		{5_000_000_000, "$0.01"},
		{1_542_000_000_000, "$1.54"},
		{math.MaxInt64, "$9223372.04"}, // 9,223,372.036854775807
		{math.MaxInt64 - 6_000_000_000, "$9223372.03"},
		{-5_000_000_000, "-$0.01"},
	} {
		if got := Dollars(tt.pico); got != tt.want {
			t.Errorf("Dollars(%d) = %s, want %s", tt.pico, got, tt.want)
		}
	}
}

// TestMissingNamesPrice: a model in the table that lacks the price a turn
// needs names that price (long context too), not the model.
func TestMissingNamesPrice(t *testing.T) {
	p := &Prices{Rates: Rates{Input: known(1), Output: known(1), CacheWrite: known(1)},
		Long: &Long{Threshold: 100, Rates: Rates{Output: known(2)}}}
	c, err := Of(p, Usage{Input: 10, Output: 1, CacheWrite: 5, CacheWrite1h: 2})
	if err != nil || c.Known || fmt.Sprint(c.Missing.List()) != "[cache_write_1h]" {
		t.Fatalf("base: %+v %v: %v", c, err, c.Missing.List())
	}
	c, err = Of(p, Usage{Input: 200, Output: 1})
	if err != nil || c.Known || fmt.Sprint(c.Missing.List()) != "[long_context.input]" {
		t.Fatalf("long: %+v %v: %v", c, err, c.Missing.List())
	}
}

func TestUnknownPoisons(t *testing.T) {
	s := Zero()
	s.Add(Cost{Pico: 5, Known: true})
	s.Add(Cost{Pico: 7, Known: false, Unpriced: 3})
	s.Add(Cost{Pico: 1, Known: true})
	if s.Known || s.Pico != 13 || s.Unpriced != 3 {
		t.Fatalf("sum %+v", s)
	}
}

func TestUSD(t *testing.T) {
	for pico, want := range map[int64]string{0: "0", 75_000: "0.000000075", 1_548_015_000_000: "1.548015", 1_000_000_000_000: "1", 12: "0.000000000012"} {
		if got := USD(pico); got != want {
			t.Errorf("USD(%d) = %q, want %q", pico, got, want)
		}
	}
}

// TestTotalsReconcile: for random usage and prices, the sum of the costs
// equals an independent big-integer computation, to the picodollar.
func TestTotalsReconcile(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 200 {
		p := &Prices{Rates: Rates{known(r.Int64N(1e8)), known(r.Int64N(1e8)), known(r.Int64N(1e7)), known(r.Int64N(1e8)), known(r.Int64N(1e8))}}
		total := Zero()
		want := new(big.Int)
		for range 1 + r.IntN(50) {
			cw := r.Int64N(1e6)
			u := Usage{Input: r.Int64N(1e6), Output: r.Int64N(1e5), CacheRead: r.Int64N(1e7), CacheWrite: cw, CacheWrite1h: r.Int64N(cw + 1)}
			c, err := Of(p, u)
			if err != nil {
				t.Fatal(err)
			}
			if err := total.Add(c); err != nil {
				t.Fatal(err)
			}
			for _, x := range [][2]int64{{u.Input, p.Input.Pico}, {u.Output, p.Output.Pico}, {u.CacheRead, p.CacheRead.Pico}, {u.CacheWrite - u.CacheWrite1h, p.CacheWrite.Pico}, {u.CacheWrite1h, p.CacheWrite1h.Pico}} {
				want.Add(want, new(big.Int).Mul(big.NewInt(x[0]), big.NewInt(x[1])))
			}
		}
		if !total.Known || big.NewInt(total.Pico).Cmp(want) != 0 {
			t.Fatalf("total %d, big-integer sum %s", total.Pico, want)
		}
	}
}

func TestLoadTOML(t *testing.T) {
	good := `
[anthropic."claude-x"]
input = 3.0
output = 15
cache_read = 0.3
cache_write = 3.75
cache_write_1h = 6

[anthropic."claude-x".long_context]
threshold = 200000
input = 6

[openai.gpt-4o]
input = 2.5
cache_write = 0
`
	tab, err := LoadTOML([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	c := tab[Key{"anthropic", "claude-x"}]
	if c == nil || c.Input != known(3_000_000) || c.CacheWrite1h != known(6_000_000) || c.Long.Threshold != 200_000 || c.Long.Input != known(6_000_000) || c.Long.Output.Known {
		t.Fatalf("claude-x: %+v %+v", c, c.Long)
	}
	g := tab[Key{"openai", "gpt-4o"}]
	if g.CacheWrite != known(0) || g.Output.Known {
		t.Fatalf("gpt-4o: %+v", g)
	}
	bad := []struct{ text, err string }{
		{"[a.b]\ninput = 0.0000001\n", `line 2 (last key "a.b.input"): price 0.0000001 has more than six decimals`},
		{"[a.b]\ninput = -1\n", `line 2 (last key "a.b.input"): price -1 is negative`},
		{"[a.b]\ninput = \"3\"\n", `a price must be a number`},
		{"[a.b]\ninputs = 3\n", `unknown key "a.b.inputs"`},
		{"[a.b\n", "toml: line 2: expected"},
		{"[a.b.long_context]\nthreshold = 0\n", "threshold must be a positive number"},
	}
	for _, b := range bad {
		if _, err := LoadTOML([]byte(b.text)); err == nil || !strings.Contains(err.Error(), b.err) {
			t.Errorf("%q: %v, want %q", b.text, err, b.err)
		}
	}
}

func TestLoadLiteLLM(t *testing.T) {
	j := `{"sample_spec":{"input_cost_per_token":0},
"claude-sonnet-4-5-20250929":{"litellm_provider":"anthropic","input_cost_per_token":3e-06,"output_cost_per_token":1.5e-05,"cache_read_input_token_cost":3e-07,"cache_creation_input_token_cost":3.75e-06,"cache_creation_input_token_cost_above_1hr":6e-06,"input_cost_per_token_above_200k_tokens":6e-06,"cache_creation_input_token_cost_above_1hr_above_200k_tokens":1.2e-05},
"amazon.nova":{"litellm_provider":"bedrock","cache_read_input_token_cost":5.46875e-07},
"odd":{"litellm_provider":"x","input_cost_per_token":3.0000000000000004e-06}}`
	tab, warnings, err := LoadLiteLLM([]byte(j))
	if err != nil {
		t.Fatal(err)
	}
	c := tab[Key{"anthropic", "claude-sonnet-4-5-20250929"}]
	if c == nil || c.Input != known(3_000_000) || c.Output != known(15_000_000) || c.CacheWrite1h != known(6_000_000) ||
		c.Long == nil || c.Long.Threshold != 200_000 || c.Long.Input != known(6_000_000) || c.Long.CacheWrite1h != known(12_000_000) {
		t.Fatalf("claude: %+v %+v", c, c.Long)
	}
	if n := tab[Key{"bedrock", "amazon.nova"}]; n == nil || n.CacheRead != known(546_875) {
		t.Fatalf("nova: %+v", n)
	}
	if tab[Key{"x", "odd"}] != nil || len(warnings) != 1 || !strings.Contains(warnings[0], `model "odd" left out`) {
		t.Fatalf("odd: %v", warnings)
	}
}

// FuzzLoad: no pricing file makes the TOML or LiteLLM readers panic, and
// every price they accept is a non-negative whole number of picodollars
// that reads back from its own decimal form.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("[a.\"b\"]\ninput = 0.075\noutput = 15\n[a.\"b\".long_context]\nthreshold = 200000\ninput = 6\n"))
	f.Add([]byte(`{"m":{"litellm_provider":"x","input_cost_per_token":3e-06,"input_cost_per_token_above_200k_tokens":6e-06}}`))
	f.Add([]byte("[a.\"b\"]\ninput = 1\n[a.\"b\".modes.fast]\ninput = 6\n[a.\"b\".modes.fast.long_context]\nthreshold = 1\noutput = 2\n"))
	f.Add([]byte(`{"m":{"litellm_provider":"x","input_cost_per_token":3e-06,"input_cost_per_token_priority":6e-06,"output_cost_per_token_flex_above_272k_tokens":1e-06,"provider_specific_entry":{"fast":6.0}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(tab Table) {
			for k, p := range tab {
				rates := []Rates{p.Rates}
				if p.Long != nil {
					rates = append(rates, p.Long.Rates)
				}
				for _, m := range p.Modes { // a billed mode's prices too
					rates = append(rates, m.Rates)
					if m.Long != nil {
						rates = append(rates, m.Long.Rates)
					}
				}
				for _, r := range rates {
					for _, pr := range []Price{r.Input, r.Output, r.CacheRead, r.CacheWrite, r.CacheWrite1h} {
						if pr.Pico < 0 {
							t.Fatalf("%v: negative price %d", k, pr.Pico)
						}
					}
				}
			}
		}
		if tab, err := LoadTOML(data); err == nil {
			check(tab)
		}
		if tab, _, err := LoadLiteLLM(data); err == nil {
			check(tab)
		}
	})
}

// FuzzParseDecimal: an accepted price is exactly its decimal value times
// 10^6 (USD per Mtok to picodollars per token), checked with math/big.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"3", "0.075", "0.000001", "15.5", "0.0000001", "-1", "1e3", ".5", "7."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pico, err := ParseDecimal(s)
		if err != nil {
			return
		}
		r, ok := new(big.Rat).SetString(strings.TrimSuffix(strings.TrimPrefix(s, "+"), "."))
		if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "+.") {
			r, ok = new(big.Rat).SetString("0" + strings.TrimPrefix(s, "+"))
		}
		if !ok {
			t.Fatalf("%q accepted (%d) but is not a number", s, pico)
		}
		r.Mul(r, big.NewRat(1_000_000, 1))
		if !r.IsInt() || r.Num().Int64() != pico {
			t.Fatalf("%q → %d, exact value × 10^6 is %s", s, pico, r.RatString())
		}
	})
}

// TestLoadTOMLExact: a price is converted from the number as written, not
// from the float64 TOML makes of it: a literal finer than a picodollar per
// token is refused even where the float would round it to an exact price.
func TestLoadTOMLExact(t *testing.T) {
	tests := []struct {
		toml string
		want int64  // input, in picodollars per token
		err  string // a part of the error, when refused
	}{
		{"input = 1.00000000000000001", 0, "price 1.00000000000000001 has more than six decimals"},
		{"input = 3.0000000000000001e0", 0, "has more than six decimals"},
		{"input = 123456789012.123456", 123456789012123456, ""},
		{"input = 7.5e-2", 75000, ""},
		{"input = 1_000.5  # 2.0000000001 in a comment is not a price", 1000500000, ""},
		{"input = 0x10", 16000000, ""},
		{`input = "3"`, 0, "not a string"},
		{"input = inf", 0, "decimal number"},
		{"input = -0.5", 0, "negative"},
		{"input = 15\n[a.\"b\".long_context]\nthreshold = 200_000\ninput = 6", 15000000, ""},
		{"input = 1\n[a.\"b\".long_context]\nthreshold = 2.5\ninput = 6", 0, "whole number"},
	}
	for _, tt := range tests {
		tab, err := LoadTOML([]byte("[a.\"b\"]\n" + tt.toml + "\n"))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want one saying %q", tt.toml, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.toml, err)
			continue
		}
		if got := tab[Key{"a", "b"}].Input; !got.Known || got.Pico != tt.want {
			t.Errorf("%q: input %+v, want %d", tt.toml, got, tt.want)
		}
	}
}

// TestLiteralsKeepsStrings: numbers inside strings, keys and comments are
// not values, and stay as written.
func TestLiteralsKeepsStrings(t *testing.T) {
	in := "[a.\"1.5\"]\n# x = 2\ns = \"= 3\"\nm = '''\n= 4'''\narr = [1,\n 2]\ninl = { k = 5, j = 6 }\n"
	want := "[a.\"1.5\"]\n# x = 2\ns = \"= 3\"\nm = '''\n= 4'''\narr = [\"\\u00001\",\n \"\\u00002\"]\ninl = { k = \"\\u00005\", j = \"\\u00006\" }\n"
	if got := string(literals([]byte(in))); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestBuiltin: the built-in table loads, and prices a model from its
// comments' sources as written there (Sonnet 4.5: $3 and $15 per million,
// $6 per million 1h cache writes, a long-context tier above 200,000).
func TestBuiltin(t *testing.T) {
	table, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	p := table[Key{Provider: "anthropic", Model: "claude-sonnet-4-5-20250929"}]
	if p == nil {
		t.Fatal("no price for claude-sonnet-4-5-20250929")
	}
	c, err := Of(p, Usage{Input: 100_000, Output: 100_000})
	if err != nil || !c.Known || c.Pico != 1_800_000_000_000 {
		t.Fatalf("100k in + 100k out = %+v, %v; want $1.80", c, err)
	}
	// Over 200,000 prompt tokens the whole request is at $6 and $22.50.
	c, err = Of(p, Usage{Input: 1_000_000, Output: 1_000_000})
	if err != nil || !c.Known || c.Pico != 28_500_000_000_000 {
		t.Fatalf("1M in + 1M out = %+v, %v; want $28.50", c, err)
	}
	if p.Long == nil || p.Long.Threshold != 200_000 {
		t.Fatalf("long context tier: %+v", p.Long)
	}
}

// TestLoadTOMLGroups: a models.toml large enough to be decoded a group of
// models at a time (hostile.md #17: a 25 MB file took 1.4 GB decoded
// whole) gives exactly the table of decoding it whole, a model's tables
// far apart in the file (its modes at the end, its long context before
// it), spelled bare, quoted and literal, and [provider] tables holding
// models; a file whose groups could read otherwise (a model in two tables,
// a table twice, a bad price) gives the whole file's error.
func TestLoadTOMLGroups(t *testing.T) {
	var b strings.Builder
	b.WriteString("# prices\n[openai]\n\"inline-0\" = { input = 1, output = 2 }\n\n")
	n := 6000
	if raceBuild {
		// The race detector makes the decoder some 10 times slower (24 s
		// of CPU here): a tenth of the models, in groups of a tenth of
		// the size, as many groups (3) through the same code.
		defer func(g int) { tomlGroup = g }(tomlGroup)
		tomlGroup, n = 24<<10, 600
	}
	for i := range n {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "[anthropic.\"model-%d\"]\ninput = 3\noutput = 15.5\ncache_read = 0.3\n\n", i)
		case 1:
			fmt.Fprintf(&b, "[ anthropic . model-%d ]\ninput = %d\noutput = 1_000\n\n", i, i)
		case 2:
			fmt.Fprintf(&b, "[anthropic.'model-%d'.long_context]\nthreshold = 200000\ninput = 6\n[anthropic.'model-%d']\ninput = 3e0\noutput = 0x10\n\n", i, i)
		}
	}
	for i := 0; i < n; i += 7 {
		fmt.Fprintf(&b, "[anthropic.\"model-%d\".modes.fast]\ninput = 30\noutput = 150\n", i)
	}
	good := b.String()
	if len(good) < 2*tomlGroup {
		t.Fatalf("%d bytes: not decoded in groups", len(good))
	}
	whole := func(s string) (Table, error) {
		tab := Table{}
		return tab, decodeTOML(tab, literals([]byte(s)), false)
	}
	if _, ok := loadTOMLGroups(literals([]byte(good))); !ok {
		t.Fatal("the large file was decoded whole")
	}
	got, err := LoadTOML([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	want, err := whole(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) != n+1 {
		t.Fatalf("%d models in groups, %d whole, want %d", len(got), len(want), n+1)
	}
	for k, w := range want {
		g := got[k]
		if g == nil || g.Rates != w.Rates || (g.Long == nil) != (w.Long == nil) || g.Long != nil && *g.Long != *w.Long || len(g.Modes) != len(w.Modes) ||
			w.Modes["fast"] != nil && (g.Modes["fast"] == nil || g.Modes["fast"].Rates != w.Modes["fast"].Rates) {
			t.Fatalf("%v: %+v in groups, %+v whole", k, g, w)
		}
	}
	for _, bad := range []string{
		good + "[anthropic.\"model-1\"]\ninput = 9\n",                        // a table twice
		good + "[anthropic]\n\"model-4\" = { input = 1 }\n",                  // and the other way
		strings.Replace(good, "output = 1_000", "output = \"a lot\"", 1),     // a bad price
		strings.Replace(good, "[anthropic.'model-2'.long_context]", "[x", 1), // a bad header
		strings.Replace(good, "threshold = 200000", "threshold = -1", 1),     // a bad threshold
		good + "[anthropic.\"model-0\".modes.standard]\ninput = 1\n",         // a standard mode
	} {
		_, werr := whole(bad)
		_, gerr := LoadTOML([]byte(bad))
		if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
			t.Errorf("groups: %v; whole: %v", gerr, werr)
		}
	}
}
