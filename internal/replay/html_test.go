package replay

import (
	"bufio"
	"bytes"
	"flag"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/panto-dev/panto/internal/pricing"
	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/tidwall/gjson"
)

var update = flag.Bool("update", false, "rewrite the golden pages of testdata/html")

// TestHTMLGolden: the pages of small sessions, byte for byte; go test
// ./internal/replay -update rewrites them, to be reviewed in the diff.
func TestHTMLGolden(t *testing.T) {
	prices, _, err := pricing.Load("testdata/html/models.toml", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, session, leaf string
		prices              pricing.Table
	}{
		{"tools", "tools.jsonl", "", prices},       // the current branch, priced: openai/gpt-x has no price
		{"branch", "tools.jsonl", "a7a7a7a7", nil}, // another branch, no prices
		{"markdown", "markdown.jsonl", "", prices}, // an import: markdown replies, the agent's own messages, prompts to list
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata/html", tt.session))
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			leaf, err := s.Leaf(tt.leaf)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := s.WriteHTML(&out, s.Log.Path(leaf), HTMLOptions{Prices: tt.prices, Branch: tt.leaf}); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata/html", tt.name+".html")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./internal/replay -update writes it)", err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("%s differs from the page made now (go test ./internal/replay -update, then review the diff)", golden)
			}
		})
	}
}

// TestHTMLEscapes: whatever the session says is text on the page: markup,
// a closing style or details tag, a javascript: link, invalid UTF-8.
func TestHTMLEscapes(t *testing.T) {
	attack := `<script>alert(1)</script></style></details><img src=x onerror=alert(1)><a href="javascript:alert(1)">x</a>` + "\xff"
	esc := strings.NewReplacer(`"`, `\"`).Replace(attack)
	line := `{"type":"message","id":"b1b1b1b1","parentId":"a1a1a1a1","timestamp":"2026-04-25T17:40:18.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"` + esc + `"},{"type":"text","text":"` + esc + `"},{"type":"toolUse","id":"t1","name":"` + esc + `","input":"{\"c\":\"` + strings.ReplaceAll(esc, `\"`, `\\\"`) + `\"}"}],"provider":"` + esc + `","model":"m","stopReason":"toolUse"}}`
	file := `{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"2026-04-25T17:40:15.990Z","cwd":"` + esc + `"}
{"type":"message","id":"a1a1a1a1","parentId":null,"timestamp":"2026-04-25T17:40:16.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"` + esc + `"}]}}
` + line + "\n" + `{"type":"message","id":"c1c1c1c1","parentId":"b1b1b1b1","timestamp":"2026-04-25T17:40:19.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"toolResult","toolUseId":"t1","content":"` + esc + `"}]}}
`
	s, err := Open(strings.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Log.Nodes) != 3 {
		t.Fatalf("the attack session has %d valid entries, want 3: %+v", len(s.Log.Nodes), s.Log.Invalid)
	}
	var out bytes.Buffer
	if err := s.WriteHTML(&out, s.Log.Path(s.Log.Leaf()), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	for _, bad := range []string{"<script", "<img", "</style></details>", `href="javascript`, "\xff"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	if n := strings.Count(page, "&lt;script&gt;alert(1)&lt;/script&gt;"); n < 6 {
		t.Errorf("the attack shows as text %d times, want it in the cwd, the prompt, the thinking, the text, the tool name and the result", n)
	}
}

// TestPieces: a text is cut into pieces of at most pieceMax bytes that
// join back to it, never inside a character.
func TestPieces(t *testing.T) {
	for _, in := range []string{"", "a", strings.Repeat("a", pieceMax), strings.Repeat("a", pieceMax+1),
		strings.Repeat("é", pieceMax), "a" + strings.Repeat("😀", pieceMax/2), strings.Repeat("\x80", 3*pieceMax)} {
		got := pieces(in)
		if strings.Join(got, "") != in {
			t.Fatalf("%d bytes: pieces do not join back", len(in))
		}
		for _, p := range got {
			if len(p) > pieceMax || utf8.ValidString(in) && !utf8.ValidString(p) {
				t.Fatalf("%d bytes: a piece of %d bytes (valid %v)", len(in), len(p), utf8.ValidString(p))
			}
		}
	}
}

// TestHugeToolResult: a page and a transcript of a session with a tool
// result of 48 MiB (with escapes) show all of it, and hold it about once at a time: the
// message is read without copies (gjson over the line read back, not a
// copy of it), the text escaped and written piece by piece, and the line
// not read ahead while the call beside its result is shown. Before, a page
// allocated over 8 times the line.
func TestHugeToolResult(t *testing.T) {
	const huge = 48 << 20
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":1,"id":"s","timestamp":"t","cwd":"/"}` + "\n")
	b.WriteString(`{"type":"message","id":"a","parentId":null,"timestamp":"t","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"cat it"}]}}` + "\n")
	b.WriteString(`{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"assistant","content":[{"type":"toolUse","id":"t1","name":"bash","input":"{}"}],"provider":"p","model":"m","stopReason":"toolUse"}}` + "\n")
	b.WriteString(`{"type":"message","id":"c","parentId":"b","timestamp":"t","provider":"p","model":"m","message":{"role":"user","content":[{"type":"toolResult","toolUseId":"t1","content":"` + strings.Repeat(`xxx\n`, huge/5) + `"}]}}` + "\n") // escapes: unescaped once, not twice
	b.WriteString(`{"type":"message","id":"d","parentId":"c","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"provider":"p","model":"m","stopReason":"stop"}}` + "\n")
	s := openSession(t, filepath.Join(t.TempDir(), "s.jsonl"), b.Bytes())
	p := s.Log.Path(s.Log.Leaf())
	for _, tc := range []struct {
		name  string
		write func(w io.Writer) error
		reads int // how many times the line is read back, and its text unescaped once
	}{
		{"html", func(w io.Writer) error { return s.WriteHTML(w, p, HTMLOptions{}) }, 3}, // its result's id, beside its call, in its turn
		{"markdown", func(w io.Writer) error { return s.WriteMarkdown(w, p) }, 1},
	} {
		x := &countX{}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		w := bufio.NewWriter(x)
		err := tc.write(w)
		runtime.ReadMemStats(&after)
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := 3 * (huge / 5); x.n < want || x.n > want+100 {
			t.Errorf("%s: shows %d x of the %d of the result", tc.name, x.n, want)
		}
		alloc, limit := after.TotalAlloc-before.TotalAlloc, uint64((tc.reads+1)*huge+huge/2)
		t.Logf("%s: allocated %d MiB (bound %d MiB)", tc.name, alloc>>20, limit>>20)
		if alloc > limit {
			t.Errorf("%s: allocated %d MiB for a line of %d MiB, want under %d MiB", tc.name, alloc>>20, huge>>20, limit>>20)
		}
	}
}

// countX counts the x written to it.
type countX struct{ n int }

func (c *countX) Write(p []byte) (int, error) {
	c.n += bytes.Count(p, []byte("x"))
	return len(p), nil
}

// TestTextField: the text of a block's string member read in place or
// unescaped once is gjson's, for text of every kind of escape.
func TestTextField(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 25))
	cases := []string{`{"text":"plain"}`, `{"text":"a\nb\u00e9\ud83d\ude00\"\\\/"}`, `{"\u0074ext":"escaped key"}`,
		`{"text":1}`, `{"other":"x"}`, `{"text":"first","text":"second"}`, `{"text":"lone \ud800 surrogate"}`, `{}`}
	for range 500 {
		cases = append(cases, `{"type":"text","text":`+string(rawjson.AppendString(nil, randText(r)))+`}`)
	}
	for _, c := range cases {
		if got, want := textField(gjson.Parse(c), "text"), gjson.Get(c, "text").Str; got != want {
			t.Fatalf("%s: %q, gjson %q", c, got, want)
		}
	}
}
