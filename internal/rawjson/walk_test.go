package rawjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// FuzzMembers: on any valid JSON object or array, the walker finds exactly
// the members and elements gjson finds, byte for byte.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":"x\"y\\","c":{"d":[1,{"e":"]}"}]},"f":null, "g" : true }`,
		`[1, "two", {"three":3}, [4], -5.5e3]`,
		`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"\\\"}"}]}}`,
		`{}`, `[]`, `{"\u0074ype":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !gjson.ValidBytes(data) {
			return
		}
		r := gjson.ParseBytes(data)
		var want, got []string
		switch {
		case r.IsObject():
			r.ForEach(func(k, v gjson.Result) bool { want = append(want, k.Raw, v.Raw); return true })
			Members(data, func(k, v []byte) bool { got = append(got, `"`+string(k)+`"`, string(v)); return true })
		case r.IsArray():
			r.ForEach(func(_, v gjson.Result) bool { want = append(want, v.Raw); return true })
			Elements(data, func(v []byte) bool { got = append(got, string(v)); return true })
		default:
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: walker %q, gjson %q", data, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: walker %q, gjson %q", data, got, want)
			}
		}
	})
}

func TestStrAndInt(t *testing.T) {
	if Str([]byte(`"a\"b\u00e9"`)) != "a\"bé" || Str([]byte(`"plain"`)) != "plain" || Str([]byte(`12`)) != "" {
		t.Fatal("Str")
	}
	for in, want := range map[string]bool{"12": true, "0": true, "123456789012345678": true, "1234567890123456789": true, "9223372036854775808": false, "1.0": true, "1e3": true, "-1": false, "1.5": false, "1e300": false, `"1"`: false} {
		n, ok := Int([]byte(in))
		if ok != want {
			t.Errorf("Int(%s) ok = %v, want %v", in, ok, want)
		}
		if f, _ := strconv.ParseFloat(in, 64); ok && float64(n) != f {
			t.Errorf("Int(%s) = %d", in, n)
		}
	}
}

// FuzzValid: Valid agrees with encoding/json.Valid on every input,
// ValidUTF8 with unicode/utf8, and AppendText with encoding/json.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e-3,-0,"x\u00e9\n"],"b":{"c":null,"d":true}}`, "\"caf\xc3\xa9 \xed\xa0\x80 \xc3\"", "[\"\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\"]", `"\xff\xfe"`, `[1,]`, `01`, `"\u12"`, "\"a\x01\"", `{"a" 1}`, ` 7 `, `-`, `1.`, `1e`, `"12345678901234567\\""`,
		`"a\u00e9\ud83d\ude00\ud800x\udc00\ud800\u0041\n\"\\\/\b\f\r\t"`,
		`{"type":"message","id":"a1","parentId":null,"timestamp":"t","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"hi \u00e9"}]}}`,
		`{"type":"message","id":"a2","parentId":"a1","timestamp":"t","message":{"role":"assistant","provider":"p","model":"m","content":[{"type":"thinking","thinking":"x","signature":"s"},{"type":"toolUse","id":"t1","name":"bash","input":"{\"c\":1}"}],"usage":{"input":1,"output":2},"stopReason":"toolUse"}}`,
		`{"type":"message","id":"a3","parentId":"a2","timestamp":"t","provider":"p","model":"m","message":{"role":"user","content":[{"type":"toolResult","toolUseId":"t1","content":"ok"}]}}`,
		`{"type":"session","version":1,"id":"s","timestamp":"t","cwd":"/"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", data, got, want)
		}
		valid := json.Valid(data)
		if got, want := ValidUTF8(data), utf8.Valid(data); got != want {
			t.Fatalf("ValidUTF8(%q) = %v, unicode/utf8 says %v", data, got, want)
		}
		if obj := bytes.TrimLeft(data, " \t\r\n"); valid && obj[0] == '{' && utf8.Valid(data) {
			var want, got []string
			gjson.ParseBytes(data).ForEach(func(k, _ gjson.Result) bool { want = append(want, k.Str); return true })
			Object(data, len(data)-len(obj), 0, func(k []byte, vs int) int {
				got = append(got, string(k))
				end, _ := Value(data, vs, 1)
				return end
			})
			if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("Object(%q) gives the keys %q, gjson %q", data, got, want)
			}
		}
		if str := bytes.Trim(data, " \t\r\n"); valid && str[0] == '"' && utf8.Valid(str) {
			var want string
			if err := json.Unmarshal(str, &want); err != nil {
				t.Fatal(err)
			}
			if got := AppendText(nil, str); string(got) != want {
				t.Fatalf("AppendText(%q) = %q, encoding/json says %q", str, got, want)
			}
		}
	})
}

// TestObjectKeys: Object hands its callback each key unescaped, short or
// long, and the bytes of the line itself when the key holds no escape.
func TestObjectKeys(t *testing.T) {
	for _, tt := range []struct{ obj, want string }{
		{`{"type":1}`, "type"},
		{`{"":1}`, ""},
		{`{"a-key-longer-than-sixteen-bytes":1}`, "a-key-longer-than-sixteen-bytes"},
		{`{"\u0074ype":1}`, "type"},
		{`{"a \"quoted\" key longer than sixteen":1}`, `a "quoted" key longer than sixteen`},
		{`{"caf\u00e9":1}`, "café"},
		{`{"日本":1}`, "日本"},
	} {
		b := []byte(tt.obj)
		var got []byte
		end, ok := Object(b, 0, 0, func(k []byte, vs int) int {
			got = k
			end, _ := Value(b, vs, 1)
			return end
		})
		if !ok || end != len(b) || string(got) != tt.want {
			t.Errorf("Object(%s): key %q (end %d, %v), want %q", tt.obj, got, end, ok, tt.want)
		}
		if inLine := cap(b)-cap(got) == 2; inLine == strings.Contains(tt.obj, `\`) {
			t.Errorf("Object(%s): key %q in the line's bytes: %v", tt.obj, got, inLine)
		}
	}
}

// TestRuns: plainRun (assembly on amd64, with AVX2 and without) passes only
// plain bytes and whole two-byte escapes, and stops short of the end of
// that run only where fewer than sixteen bytes are left (or, in Go, at an
// escape), at every length, position and alignment of what stops it.
func TestRuns(t *testing.T) { eachCPU(t, testRuns) }

func testRuns(t *testing.T) {
	inserts := []string{`"`, `\`, "\x00", "\x1f", "\n", " ", "a", "\x7f", "\x80", "\xff",
		`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u`, `\x`, `\a`, "\\\n", `\\\`, `\\"`, `\n\n\"`}
	base := len(inserts)
	for c := range 256 { // and every byte after a backslash, less thoroughly
		inserts = append(inserts, string([]byte{'\\', byte(c)}))
	}
	buf := bytes.Repeat([]byte("x"), 100)
	for k, in := range inserts {
		for off := range 3 {
			for n := range 72 {
				for p := -1; p < n; p++ {
					if k >= base && (off > 0 || n%8 != 7 || p%7 != 0) {
						continue
					}
					b := append([]byte(nil), buf[:off+n]...)[off:]
					if p >= 0 {
						b = append(b[:p], append([]byte(in), b[p:]...)...)[:n]
					}
					// Where a run may stop: before a byte that is not plain
					// and not the start of a two-byte escape, or anywhere
					// before, between whole escapes.
					stops := map[int]bool{}
					escape := map[int]bool{} // a two-byte escape starts here
					end := 0
					for end < n {
						stops[end] = true
						c := b[end]
						if c == '\\' && end+1 < n && strings.IndexByte(`"\/bfnrt`, b[end+1]) >= 0 {
							escape[end] = true
							end += 2
						} else if c == '"' || c == '\\' || c < 0x20 {
							break
						} else {
							end++
						}
					}
					stops[end] = true
					got := plainRun(b)
					if !stops[got] || got < end && n-got >= 16 && !(escape[got] && !skipsEscapes) {
						t.Fatalf("plainRun(%q) = %d, want %d (or less, between escapes, with fewer than 16 bytes left)", b, got, end)
					}
				}
			}
		}
	}
}

// TestValidEscapeRuns: strings dense in backslashes, quotes and control
// bytes, longer than a block, in every alignment: Valid agrees with
// encoding/json, and plainRun never passes a byte that ends a run. The
// AVX2 loop finds escaped bytes from the parity of backslash runs, across
// blocks; this drives it through runs of every length at every offset.
func TestValidEscapeRuns(t *testing.T) { eachCPU(t, testValidEscapeRuns) }

func testValidEscapeRuns(t *testing.T) {
	alphabet := []string{`\`, `\`, `\`, `"`, "n", "u", "0", "a", "/", "t", "x", "\x01", "é", `\\`, `\"`}
	seed := uint64(1)
	next := func(n int) int { // xorshift: the same cases every run
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return int(seed % uint64(n))
	}
	for range 40000 {
		var b strings.Builder
		b.WriteString(strings.Repeat("p", next(40))) // the alignment of the runs
		for n := next(120); n > 0; n-- {
			b.WriteString(alphabet[next(len(alphabet))])
		}
		s := `"` + b.String() + `"`
		if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", s, got, want)
		}
		body := []byte(b.String())
		got := plainRun(body)
		for i := 0; i < got; i++ { // what it passed: plain bytes and whole escapes
			switch c := body[i]; {
			case c == '\\':
				if i+1 >= got || !strings.ContainsRune(`"\/bfnrt`, rune(body[i+1])) {
					t.Fatalf("plainRun(%q) = %d passes the backslash at %d", body, got, i)
				}
				i++
			case c == '"' || c < 0x20:
				t.Fatalf("plainRun(%q) = %d passes byte %q at %d", body, got, c, i)
			}
		}
	}
}

// BenchmarkValid: session lines whose texts are dense in escapes and
// non-ASCII (as tools/gen -dense writes them), or plain.
func BenchmarkValid(b *testing.B) {
	for _, tt := range []struct {
		name  string
		words []string
	}{
		{"dense", []string{`say "quoted"`, `back\slash`, "a\tb", "line\nbreak", "é", "ü", "日本", `{"json":"in text"}`, `C:\path\to`, `""`, "tab\t\tend"}},
		{"plain", []string{"the", "session", "log", "parse", "tool", "JSON", "fox"}},
	} {
		var lines [][]byte
		size := 0
		for i := range 200 {
			var text strings.Builder
			for j := 0; text.Len() < 500+20*i; j++ {
				text.WriteString(tt.words[(i+j*7)%len(tt.words)])
				text.WriteByte(' ')
			}
			t, _ := json.Marshal(text.String())
			line := fmt.Appendf(nil, `{"type":"message","id":"%08x","parentId":"%08x","timestamp":"2026-11-01T09:00:01.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":%s,"signature":"c2ln"},{"type":"text","text":%s}],"provider":"anthropic","model":"claude-sonnet-4","stopReason":"stop","usage":{"input":3000,"output":200}}}`, i, i-1, t, t)
			lines = append(lines, line)
			size += len(line)
		}
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, l := range lines {
					if !Valid(l) {
						b.Fatalf("invalid: %s", l)
					}
				}
			}
		})
	}
}
