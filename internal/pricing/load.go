package pricing

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"

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

// tomlPrice decodes one price exactly, from the number as written: LoadTOML
// hands each number literal over as its text (see literals), since a
// float64 has lost what a literal such as 1.00000000000000001 says.
type tomlPrice Price

func (p *tomlPrice) UnmarshalTOML(v any) error {
	var s string
	switch x := v.(type) {
	case string:
		text, ok := strings.CutPrefix(x, literalMark)
		if !ok {
			return fmt.Errorf("a price must be a number (USD per million tokens), not a string")
		}
		s = text
	case int64: // 0x…, 0o…, 0b…
		s = strconv.FormatInt(x, 10)
	default:
		return fmt.Errorf("a price must be a decimal number (USD per million tokens)")
	}
	pico, err := exactPrice(s)
	if err != nil {
		return err
	}
	*p = tomlPrice{Pico: pico, Known: true}
	return nil
}

// tomlInt is an integer that LoadTOML handed over as its text.
type tomlInt int64

func (n *tomlInt) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		if text, ok := strings.CutPrefix(x, literalMark); ok {
			if i, err := strconv.ParseInt(text, 10, 64); err == nil {
				*n = tomlInt(i)
				return nil
			}
		}
	case int64:
		*n = tomlInt(x)
		return nil
	}
	return fmt.Errorf("must be a whole number")
}

// exactPrice converts a price literal in USD per million tokens (a TOML
// number without underscores: 3, 0.075, 7.5e-2) to picodollars per token,
// refusing what is not exact.
func exactPrice(s string) (int64, error) {
	if !strings.ContainsAny(s, "eE") {
		return ParseDecimal(s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, fmt.Errorf("price %q is not a decimal number", s)
	}
	if r.Sign() < 0 {
		return 0, fmt.Errorf("price %s is negative", s)
	}
	r.Mul(r, big.NewRat(1_000_000, 1))
	if !r.IsInt() {
		return 0, fmt.Errorf("price %s has more than six decimals per million tokens: not exact in picodollars per token", s)
	}
	if !r.Num().IsInt64() {
		return 0, fmt.Errorf("price %s is too large", s)
	}
	return r.Num().Int64(), nil
}

// literalMark starts the strings that literals makes of number literals:
// a NUL, which no price file writes in a string.
const literalMark = "\x00"

// numberRe is a decimal TOML number: an integer or a float, with optional
// underscores between digits (dates, hex and inf/nan do not match).
var numberRe = regexp.MustCompile(`^[+-]?[0-9][0-9_]*(\.[0-9][0-9_]*)?([eE][+-]?[0-9][0-9_]*)?`)

// literals rewrites every decimal number in a value of TOML text into a
// string holding literalMark and the number as written (underscores
// removed), so that prices are converted from their text, not from a
// float. Strings and comments are left alone; lines and keys stay where
// they were, so errors point at the same place.
func literals(b []byte) []byte {
	out := make([]byte, 0, len(b)+64)
	value := false  // the next token is a value
	var nest []byte // the arrays ('[') and inline tables ('{') a value is in
	inArray := func() bool { return len(nest) > 0 && nest[len(nest)-1] == '[' }
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '#':
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				j = len(b) - i
			}
			out, i = append(out, b[i:i+j]...), i+j
			continue
		case c == '"' || c == '\'':
			j := stringEnd(b, i)
			out, i, value = append(out, b[i:j]...), j, false
			continue
		case c == ' ' || c == '\t' || c == '\r':
		case c == '\n':
			value = inArray()
		case c == '=':
			value = true
		case c == ',':
			value = inArray()
		case (c == '[' || c == '{') && (value || len(nest) > 0):
			nest, value = append(nest, c), c == '['
		case (c == ']' || c == '}') && len(nest) > 0:
			nest, value = nest[:len(nest)-1], false
		case value:
			if m := numberRe.Find(b[i:]); m != nil && numberEnds(b, i+len(m)) {
				out = append(out, `"\u0000`...)
				out = append(out, bytes.ReplaceAll(m, []byte("_"), nil)...)
				out = append(out, '"')
				i += len(m)
				value = false
				continue
			}
			value = false
		default:
			value = false
		}
		out = append(out, c)
		i++
	}
	return out
}

// numberEnds reports whether a number token may end at b[i].
func numberEnds(b []byte, i int) bool {
	return i == len(b) || bytes.IndexByte([]byte(" \t\r\n,}]#"), b[i]) >= 0
}

// stringEnd returns the index after the TOML string that starts at b[i]
// (basic or literal, single- or multi-line), or len(b).
func stringEnd(b []byte, i int) int {
	q := b[i]
	if bytes.HasPrefix(b[i:], []byte{q, q, q}) {
		j := bytes.Index(b[i+3:], []byte{q, q, q})
		if j < 0 {
			return len(b)
		}
		end := i + 3 + j + 3
		for end < len(b) && b[end] == q { // """a"""" ends at the last quotes
			end++
		}
		return end
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			if q == '"' {
				j++
			}
		case q, '\n':
			return j + 1
		}
	}
	return len(b)
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

type tomlLong struct {
	Threshold tomlInt `toml:"threshold"`
	tomlRates
}

type tomlMode struct {
	tomlRates
	LongContext *tomlLong `toml:"long_context"`
}

type tomlModel struct {
	tomlRates
	LongContext *tomlLong           `toml:"long_context"`
	Modes       map[string]tomlMode `toml:"modes"`
}

// prices makes the prices of a model, or of a mode of it, from its table.
func prices(name string, r tomlRates, lc *tomlLong) (*Prices, error) {
	p := &Prices{Rates: r.rates()}
	if lc != nil {
		if lc.Threshold <= 0 {
			return nil, fmt.Errorf("%s.long_context: threshold must be a positive number of prompt tokens", name)
		}
		p.Long = &Long{Threshold: int64(lc.Threshold), Rates: lc.rates()}
	}
	return p, nil
}

// Load reads a pricing file: models.toml, or LiteLLM's
// model_prices_and_context_window.json (by its .json name). A missing
// file at the default location is no table (nil) and no error: pass
// optional.
func Load(path string, optional bool) (Table, []string, error) {
	b, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) && optional {
		return nil, nil, nil
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
	text := literals(b)
	if len(text) > tomlGroup {
		if t, ok := loadTOMLGroups(text); ok {
			return t, nil
		}
	}
	t := Table{}
	return t, decodeTOML(t, text, false)
}

// tomlGroup is about how many bytes of models.toml are decoded at once: the
// decoder's tree of a file takes some 50 times the file (a 25 MB file of
// 300,000 models took 1.4 GB). A variable only so that a test under the
// race detector can deal a tenth of the file into as many groups.
var tomlGroup = 256 << 10

// loadTOMLGroups decodes a large models.toml (after literals) a group of
// models at a time: its tables are dealt into groups by the provider and
// model they belong to, so that every table of a model is in one group,
// and each group is decoded as a document of its own, the other tables'
// lines left blank (errors keep their line numbers). A file in which this
// could differ from decoding it whole says so (a model met in two groups:
// written both by a header and in a table of its provider; any error,
// for the whole file's words): false, and the caller decodes it whole.
func loadTOMLGroups(text []byte) (Table, bool) {
	type section struct {
		start, end, lines int
		group             int
	}
	groups := len(text)/tomlGroup + 1
	var sections []section
	for start := 0; start < len(text); {
		end, lines := start, 0
		for {
			i := bytes.IndexByte(text[end:], '\n')
			if i < 0 {
				end = len(text)
				break
			}
			end += i + 1
			lines++
			if rest := bytes.TrimLeft(text[end:], " \t"); len(rest) > 0 && rest[0] == '[' {
				break // the next table's header
			}
		}
		g := 0 // what is before the first header, [provider] tables, arrays of tables, keys not told here
		if key, ok := tableKey(text[start:end]); ok {
			h := fnv.New32a()
			h.Write([]byte(key))
			g = 1 + int(h.Sum32()%uint32(groups))
		}
		sections = append(sections, section{start, end, lines, g})
		start = end
	}
	t := Table{}
	var doc []byte
	for g := 0; g <= groups; g++ {
		doc = doc[:0]
		any := false
		for _, s := range sections {
			if s.group == g {
				doc, any = append(doc, text[s.start:s.end]...), true
			} else {
				for range s.lines {
					doc = append(doc, '\n')
				}
			}
		}
		if any && decodeTOML(t, doc, true) != nil {
			return nil, false
		}
	}
	return t, true
}

// tableKey returns the provider and model a table header names, when the
// section begins with one of [provider.model…] in keys without escapes.
func tableKey(sec []byte) (string, bool) {
	sec = bytes.TrimLeft(sec, " \t")
	if len(sec) < 2 || sec[0] != '[' || sec[1] == '[' {
		return "", false
	}
	i := 1
	var parts []string
	for len(parts) < 2 {
		for i < len(sec) && (sec[i] == ' ' || sec[i] == '\t') {
			i++
		}
		if i >= len(sec) {
			return "", false
		}
		j := i
		switch c := sec[i]; {
		case c == '"' || c == '\'':
			k := bytes.IndexByte(sec[i+1:], c)
			if k < 0 || c == '"' && bytes.IndexByte(sec[i+1:i+1+k], '\\') >= 0 {
				return "", false
			}
			parts, j = append(parts, string(sec[i+1:i+1+k])), i+k+2
		default:
			for j < len(sec) && (sec[j] >= 'a' && sec[j] <= 'z' || sec[j] >= 'A' && sec[j] <= 'Z' || sec[j] >= '0' && sec[j] <= '9' || sec[j] == '_' || sec[j] == '-') {
				j++
			}
			if j == i {
				return "", false
			}
			parts = append(parts, string(sec[i:j]))
		}
		for j < len(sec) && (sec[j] == ' ' || sec[j] == '\t') {
			j++
		}
		if len(parts) == 1 && (j >= len(sec) || sec[j] != '.') {
			return "", false // [provider]: its keys are models
		}
		i = j + 1
	}
	return parts[0] + "\x00" + parts[1], true
}

// decodeTOML decodes a models.toml document (after literals) into t; with
// once, a model t holds already is an error.
func decodeTOML(t Table, text []byte, once bool) error {
	var raw map[string]map[string]tomlModel
	md, err := toml.Decode(string(text), &raw)
	if err != nil {
		return err
	}
	if und := md.Undecoded(); len(und) > 0 {
		return fmt.Errorf("unknown key %q: prices are input, output, cache_read, cache_write, cache_write_1h, a long_context table and modes tables", und[0].String())
	}
	for provider, models := range raw {
		for model, m := range models {
			if _, ok := t[Key{provider, model}]; ok && once {
				return fmt.Errorf("%s.%q: in two groups", provider, model)
			}
			name := fmt.Sprintf("%s.%q", provider, model)
			p, err := prices(name, m.tomlRates, m.LongContext)
			if err != nil {
				return err
			}
			for mode, mm := range m.Modes {
				if Standard(mode) {
					return fmt.Errorf("%s.modes.%s: the standard prices are the model's own: give other modes (fast, priority, flex)", name, mode)
				}
				mp, err := prices(name+".modes."+mode, mm.tomlRates, mm.LongContext)
				if err != nil {
					return err
				}
				if p.Modes == nil {
					p.Modes = map[string]*Prices{}
				}
				p.Modes[strings.Clone(mode)] = mp
			}
			// Copied: the decoder's keys are views into the document, which
			// would be kept whole (a large file's groups, all of them).
			t[Key{strings.Clone(provider), strings.Clone(model)}] = p
		}
	}
	return nil
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
			mp := p // the prices the field belongs to: the model's, or a service tier's
			for _, mode := range liteModes {
				if n, ok := strings.CutSuffix(name, "_"+mode); ok {
					if p.Modes == nil {
						p.Modes = map[string]*Prices{}
					}
					if p.Modes[mode] == nil {
						p.Modes[mode] = &Prices{}
					}
					name, mp = n, p.Modes[mode]
				}
			}
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
			r := &mp.Rates
			if threshold > 0 {
				if mp.Long == nil {
					mp.Long = &Long{Threshold: threshold}
				}
				r = &mp.Long.Rates
			}
			*get(r) = Price{Pico: pico, Known: true}
			return true
		})
		if bad == "" {
			bad = liteModesOf(p, v)
		}
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

// liteModes are the service tiers LiteLLM prices with suffixed fields
// (input_cost_per_token_priority) that logs name (Codex's service_tier).
var liteModes = []string{"priority", "flex"}

// liteModesOf completes the modes of p from a LiteLLM entry: a tier's
// request above the long-context threshold is unknown unless the entry
// prices it (never the tier's base price); provider_specific_entry.fast
// multiplies every price (Claude's fast mode), exactly or not at all.
func liteModesOf(p *Prices, v gjson.Result) string {
	for _, m := range p.Modes {
		if p.Long != nil && m.Long == nil {
			m.Long = &Long{Threshold: p.Long.Threshold}
		}
	}
	f := v.Get("provider_specific_entry.fast")
	if f.Type != gjson.Number {
		return ""
	}
	mul, ok := new(big.Rat).SetString(f.Raw)
	if !ok || mul.Sign() <= 0 {
		return fmt.Sprintf("provider_specific_entry.fast %s is not a positive number", f.Raw)
	}
	fast := &Prices{Rates: p.Rates}
	if p.Long != nil {
		l := *p.Long
		fast.Long = &l
	}
	rates := []*Rates{&fast.Rates}
	if fast.Long != nil {
		rates = append(rates, &fast.Long.Rates)
	}
	for _, r := range rates {
		for _, pr := range []*Price{&r.Input, &r.Output, &r.CacheRead, &r.CacheWrite, &r.CacheWrite1h} {
			if !pr.Known {
				continue
			}
			x := new(big.Rat).Mul(new(big.Rat).SetInt64(pr.Pico), mul)
			if !x.IsInt() || !x.Num().IsInt64() {
				return fmt.Sprintf("provider_specific_entry.fast %s times a price is not a whole number of picodollars", f.Raw)
			}
			pr.Pico = x.Num().Int64()
		}
	}
	if p.Modes == nil {
		p.Modes = map[string]*Prices{}
	}
	p.Modes["fast"] = fast
	return ""
}

// maxFile bounds a pricing file: LiteLLM's whole table is a few MB.
const maxFile = 64 << 20

// ErrNotRegular is the error for a pricing file that is no regular file: a
// FIFO or socket would be waited on, a device (/dev/zero) read forever or
// as nothing (/dev/null), a directory not read at all.
var ErrNotRegular = errors.New("not a regular file")

// readFile reads a pricing file: only a regular file (ErrNotRegular), and
// at most maxFile bytes.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO opens without a writer
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if m := fi.Mode(); !m.IsRegular() {
		return nil, fmt.Errorf("%s: %w (a %s)", path, ErrNotRegular, kindOf(m))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFile {
		return nil, fmt.Errorf("%s: larger than %d MiB: not a pricing file", path, maxFile>>20)
	}
	return b, nil
}

// kindOf names what a file that is not regular is.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "file of no regular kind"
}
