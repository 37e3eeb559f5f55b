package pricing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpen: a pricing file adds models to the built-in table and replaces
// the prices of the models it names, model by model (the others keep the
// built-in prices); with only, the file's prices alone.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "models.toml")
	os.WriteFile(file, []byte(`
[anthropic."claude-sonnet-4-5-20250929"]
input = 1
[acme."m1"]
input = 2
output = 4
`), 0o644)
	noenv := func(string) string { return "" }
	warn := func(w string) { t.Errorf("warning %s", w) }
	sonnet := Key{"anthropic", "claude-sonnet-4-5-20250929"}
	opus := Key{"anthropic", "claude-opus-4-6"}
	m1 := Key{"acme", "m1"}
	tests := []struct {
		name      string
		file      string
		only      bool
		env       map[string]string
		sonnetIn  Price // the overridden model: the file's prices, whole (its output unknown)
		sonnetOut Price
		opus      bool // a built-in model the file leaves alone
		m1        bool // a model only the file has
		says      string
	}{
		{"built-in alone", "", false, nil, known(3_000_000), known(15_000_000), true, false, "built-in, " + BuiltinDate},
		{"a file over it", file, false, nil, known(1_000_000), Price{}, true, true, "built-in, " + BuiltinDate + "; over it " + file + " (2 models, 1 replacing built-in ones)"},
		{"the file alone", file, true, nil, known(1_000_000), Price{}, false, true, file},
		{"no file at the XDG place", "", false, map[string]string{"XDG_CONFIG_HOME": dir + "/xdg"}, known(3_000_000), known(15_000_000), true, false, "built-in, " + BuiltinDate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := noenv
			if tt.env != nil {
				getenv = func(k string) string { return tt.env[k] }
			}
			s, err := Open(tt.file, tt.only, getenv, warn)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.String(); got != tt.says {
				t.Errorf("String() = %q, want %q", got, tt.says)
			}
			p := s.Table[sonnet]
			if p == nil || p.Input != tt.sonnetIn || p.Output != tt.sonnetOut {
				t.Errorf("sonnet %+v", p)
			}
			if (s.Table[opus] != nil) != tt.opus || (s.Table[m1] != nil) != tt.m1 {
				t.Errorf("opus %v, m1 %v", s.Table[opus] != nil, s.Table[m1] != nil)
			}
			if tt.m1 && s.From(m1).Name != file || tt.opus && s.From(opus).Name != "built-in" {
				t.Errorf("sources: m1 %v, opus %v", s.From(m1), s.From(opus))
			}
		})
	}
	// The XDG file is laid over the built-in table as a given one is.
	os.MkdirAll(dir+"/xdg/panto", 0o755)
	os.Rename(file, dir+"/xdg/panto/models.toml")
	s, err := Open("", false, func(k string) string { return map[string]string{"XDG_CONFIG_HOME": dir + "/xdg"}[k] }, warn)
	if err != nil || s.Table[m1] == nil || s.Table[opus] == nil || !strings.Contains(s.String(), "over it "+dir+"/xdg/panto/models.toml") {
		t.Fatalf("XDG: %v %v", s, err)
	}
	if _, err := Open(dir+"/none.toml", true, noenv, warn); err == nil || !strings.Contains(err.Error(), "give a models.toml") {
		t.Fatalf("a missing file: %v", err)
	}
}

// TestResolve: a model is found by its provider and name; under a
// provider the table does not know, by its name alone when one provider
// of the table has it (or all that have it price it the same); never
// under a provider the table knows, never when the name is ambiguous.
func TestResolve(t *testing.T) {
	a := &Prices{Rates: Rates{Input: known(1)}}
	b := &Prices{Rates: Rates{Input: known(2)}}
	a2 := &Prices{Rates: Rates{Input: known(1)}}
	tab := Table{
		{"openai", "gpt-5"}:     a,
		{"anthropic", "claude"}: b,
		{"openai", "shared"}:    a,
		{"azure", "shared"}:     b,
		{"openai", "same"}:      a,
		{"azure", "same"}:       a2,
	}
	tests := []struct {
		k   Key
		p   *Prices
		as  Key
		how How
	}{
		{Key{"openai", "gpt-5"}, a, Key{"openai", "gpt-5"}, Exact},
		{Key{"openai-codex", "gpt-5"}, a, Key{"openai", "gpt-5"}, ByName},
		{Key{"litellm-local", "claude"}, b, Key{"anthropic", "claude"}, ByName},
		{Key{"anthropic", "gpt-5"}, nil, Key{}, NotFound}, // anthropic is known: no guessing
		{Key{"proxy", "nothing"}, nil, Key{}, NotFound},
		{Key{"proxy", "shared"}, nil, Key{}, Ambiguous},
		{Key{"proxy", "same"}, a2, Key{"azure", "same"}, ByName}, // the same prices either way
	}
	for _, tt := range tests {
		r := tab.Resolve(tt.k)
		if r.Prices != tt.p || r.As != tt.as || r.How != tt.how {
			t.Errorf("Resolve(%v) = %+v, want %p %v %v", tt.k, r, tt.p, tt.as, tt.how)
		}
		if tt.how == Ambiguous && len(r.Others) != 2 {
			t.Errorf("Resolve(%v): others %v", tt.k, r.Others)
		}
	}
}

// TestModes: a billed mode is priced at its own prices (models.toml's
// modes tables; LiteLLM's _priority and _flex fields and its fast
// multiplier), or not at all: never at the standard prices.
func TestModes(t *testing.T) {
	tab, err := LoadTOML([]byte(`
[anthropic."opus"]
input = 5
output = 25
[anthropic."opus".modes.fast]
input = 30
output = 150
[anthropic."opus".modes.fast.long_context]
threshold = 200000
input = 60
`))
	if err != nil {
		t.Fatal(err)
	}
	opus := tab[Key{"anthropic", "opus"}]
	for _, tt := range []struct {
		mode string
		u    Usage
		pico int64
		ok   bool
	}{
		{"", Usage{Input: 1, Output: 1}, 30_000_000, true},
		{"standard", Usage{Input: 1, Output: 1}, 30_000_000, true},
		{"fast", Usage{Input: 1, Output: 1}, 180_000_000, true},
		{"fast", Usage{Input: 300_000}, 300_000 * 60_000_000, true},
		{"priority", Usage{Input: 1}, 0, false},
	} {
		p := opus.Mode(tt.mode)
		if (p != nil) != tt.ok {
			t.Fatalf("Mode(%q) = %v", tt.mode, p)
		}
		if p == nil {
			continue
		}
		c, err := Of(p, tt.u)
		if err != nil || !c.Known || c.Pico != tt.pico {
			t.Errorf("mode %q, %+v: %+v %v, want %d", tt.mode, tt.u, c, err, tt.pico)
		}
	}
	if _, err := LoadTOML([]byte("[a.b.modes.standard]\ninput = 1\n")); err == nil || !strings.Contains(err.Error(), "standard prices are the model's own") {
		t.Errorf("a standard mode: %v", err)
	}

	lt, warnings, err := LoadLiteLLM([]byte(`{
"gpt-5.5":{"litellm_provider":"openai","input_cost_per_token":5e-06,"output_cost_per_token":3e-05,"input_cost_per_token_priority":1e-05,"output_cost_per_token_priority":6e-05,"input_cost_per_token_flex":2.5e-06,"input_cost_per_token_above_272k_tokens":1e-05},
"g":{"litellm_provider":"gemini","input_cost_per_token":1e-06,"input_cost_per_token_above_200k_tokens":2e-06,"input_cost_per_token_priority":3e-06,"input_cost_per_token_above_200k_tokens_priority":6e-06},
"claude-opus-4-6":{"litellm_provider":"anthropic","input_cost_per_token":5e-06,"output_cost_per_token":2.5e-05,"provider_specific_entry":{"fast":6.0,"us":1.1}},
"odd-fast":{"litellm_provider":"anthropic","input_cost_per_token":1e-12,"provider_specific_entry":{"fast":1.5}}}`))
	if err != nil {
		t.Fatal(err)
	}
	g := lt[Key{"openai", "gpt-5.5"}]
	if pr := g.Mode("priority"); pr == nil || pr.Input != known(10_000_000) || pr.Output != known(60_000_000) || pr.Long == nil || pr.Long.Threshold != 272_000 || pr.Long.Input.Known {
		t.Errorf("priority: %+v", pr)
	}
	if pr := lt[Key{"gemini", "g"}].Mode("priority"); pr == nil || pr.Input != known(3_000_000) || pr.Long == nil || pr.Long.Threshold != 200_000 || pr.Long.Input != known(6_000_000) {
		t.Errorf("priority above 200k: %+v %+v", pr, pr.Long)
	}
	if fl := g.Mode("flex"); fl == nil || fl.Input != known(2_500_000) || fl.Output.Known {
		t.Errorf("flex: %+v", fl)
	}
	if f := lt[Key{"anthropic", "claude-opus-4-6"}].Mode("fast"); f == nil || f.Input != known(30_000_000) || f.Output != known(150_000_000) {
		t.Errorf("fast: %+v", f)
	}
	if lt[Key{"anthropic", "odd-fast"}] != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "provider_specific_entry.fast") {
		t.Errorf("a fast price not exact: %v", warnings)
	}
}

// TestBuiltinFast: the built-in table prices Claude Opus 4.6's fast mode.
func TestBuiltinFast(t *testing.T) {
	tab, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	f := tab[Key{"anthropic", "claude-opus-4-6"}].Mode("fast")
	if f == nil || f.Input != known(30_000_000) || f.Output != known(150_000_000) {
		t.Fatalf("fast: %+v", f)
	}
}
