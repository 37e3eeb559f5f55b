package pricing

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/tidwall/gjson"
)

// DefaultPath is models.toml at the XDG location (SPEC §6).
func DefaultPath(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "panto", "models.toml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "panto", "models.toml")
	}
	return ""
}

// tomlPrice decodes one price exactly. TOML floats arrive as float64; the
// shortest decimal that reads back as the same float is the literal as
// written for any price of up to 15 significant digits, and that decimal
// is what is converted.
type tomlPrice Price

func (p *tomlPrice) UnmarshalTOML(v any) error {
	var s string
	switch x := v.(type) {
	case int64:
		s = strconv.FormatInt(x, 10)
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		return fmt.Errorf("a price must be a number (USD per million tokens)")
	}
	pico, err := ParseDecimal(s)
	if err != nil {
		return err
	}
	*p = tomlPrice{Pico: pico, Known: true}
	return nil
}

type tomlRates struct {
	Input        tomlPrice `toml:"input"`
	Output       tomlPrice `toml:"output"`
	CacheRead    tomlPrice `toml:"cache_read"`
	CacheWrite   tomlPrice `toml:"cache_write"`
	CacheWrite1h tomlPrice `toml:"cache_write_1h"`
}

func (t tomlRates) rates() Rates {
	return Rates{Price(t.Input), Price(t.Output), Price(t.CacheRead), Price(t.CacheWrite), Price(t.CacheWrite1h)}
}

type tomlModel struct {
	tomlRates
	LongContext *struct {
		Threshold int64 `toml:"threshold"`
		tomlRates
	} `toml:"long_context"`
}

// Load reads a pricing file: models.toml, or LiteLLM's
// model_prices_and_context_window.json (by its .json name). A missing
// file at the default location means "no prices known": pass optional.
func Load(path string, optional bool) (Table, []string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && optional {
		return Table{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if strings.HasSuffix(path, ".json") || bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		return LoadLiteLLM(b)
	}
	t, err := LoadTOML(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil, nil
}

// LoadTOML reads models.toml: [provider."model"] tables in USD per million
// tokens, with an optional long_context subtable (threshold and prices).
func LoadTOML(b []byte) (Table, error) {
	var raw map[string]map[string]tomlModel
	md, err := toml.Decode(string(b), &raw)
	if err != nil {
		return nil, err
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("unknown key %q: prices are input, output, cache_read, cache_write, cache_write_1h and a long_context table", und[0].String())
	}
	t := Table{}
	for provider, models := range raw {
		for model, m := range models {
			p := &Prices{Rates: m.rates()}
			if lc := m.LongContext; lc != nil {
				if lc.Threshold <= 0 {
					return nil, fmt.Errorf("%s.%q.long_context: threshold must be a positive number of prompt tokens", provider, model)
				}
				p.Long = &Long{Threshold: lc.Threshold, Rates: lc.rates()}
			}
			t[Key{provider, model}] = p
		}
	}
	return t, nil
}

var aboveRe = regexp.MustCompile(`^(.*)_above_(\d+)k_tokens$`)

// LoadLiteLLM reads LiteLLM's per-token float prices, converted exactly: a
// price that is not a whole number of picodollars per token is refused,
// and its model left out (with a warning), never rounded.
func LoadLiteLLM(b []byte) (Table, []string, error) {
	if !gjson.ValidBytes(b) {
		return nil, nil, errors.New("not valid JSON")
	}
	t := Table{}
	var warnings []string
	fields := map[string]func(*Rates) *Price{
		"input_cost_per_token":                      func(r *Rates) *Price { return &r.Input },
		"output_cost_per_token":                     func(r *Rates) *Price { return &r.Output },
		"cache_read_input_token_cost":               func(r *Rates) *Price { return &r.CacheRead },
		"cache_creation_input_token_cost":           func(r *Rates) *Price { return &r.CacheWrite },
		"cache_creation_input_token_cost_above_1hr": func(r *Rates) *Price { return &r.CacheWrite1h },
	}
	gjson.ParseBytes(b).ForEach(func(k, v gjson.Result) bool {
		if !v.IsObject() || k.Str == "sample_spec" {
			return true
		}
		p := &Prices{}
		var bad string
		v.ForEach(func(fk, fv gjson.Result) bool {
			name, threshold := fk.Str, int64(0)
			if m := aboveRe.FindStringSubmatch(name); m != nil {
				name = m[1]
				threshold, _ = strconv.ParseInt(m[2], 10, 64)
				threshold *= 1000
			}
			get, ok := fields[name]
			if !ok || fv.Type != gjson.Number {
				return true
			}
			pico, err := perToken(fv.Raw)
			if err != nil {
				bad = fmt.Sprintf("%s: %v", fk.Str, err)
				return false
			}
			r := &p.Rates
			if threshold > 0 {
				if p.Long == nil {
					p.Long = &Long{Threshold: threshold}
				}
				r = &p.Long.Rates
			}
			*get(r) = Price{Pico: pico, Known: true}
			return true
		})
		if bad != "" {
			warnings = append(warnings, fmt.Sprintf("model %q left out: %s", k.Str, bad))
			return true
		}
		provider := v.Get("litellm_provider").Str
		t[Key{provider, k.Str}] = p
		if m, ok := strings.CutPrefix(k.Str, provider+"/"); ok {
			t[Key{provider, m}] = p
		}
		return true
	})
	sort.Strings(warnings)
	return t, warnings, nil
}

// perToken converts a JSON number of USD per token to picodollars, exactly.
func perToken(raw string) (int64, error) {
	r, ok := new(big.Rat).SetString(raw)
	if !ok || r.Sign() < 0 {
		return 0, fmt.Errorf("price %s is not a non-negative number", raw)
	}
	r.Mul(r, new(big.Rat).SetInt64(1_000_000_000_000))
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, fmt.Errorf("price %s USD per token is not a whole number of picodollars", raw)
	}
	return r.Num().Int64(), nil
}
