package agents

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSniffStart: a log's format told from its start in memory is the
// format Sniff tells reading the file, however much of the start is held
// (the first line whole, cut, or not reached), for every log of testdata
// and ../shared/real and for blank, unterminated and whole-document ones;
// and a first line that is one whole object, read in one pass, is told
// as the slower way for any line (sniffAny) tells it.
func TestSniffStart(t *testing.T) {
	logs := map[string][]byte{
		"empty":                {},
		"blank lines":          []byte("\n \r\n\t\n"),
		"blank then a line":    []byte("\n\n" + `{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}` + "\n"),
		"unterminated":         []byte(`{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}`),
		"a document":           []byte("{\n  \"sessionId\": \"s\",\n  \"messages\": []\n}\n"),
		"two objects, no line": []byte(`{"type":"session","version":3,"id":"x","cwd":"/p"}{"type":"message","id":"a"}` + "\n"),
		"not json":             []byte("hello\nworld\n"),
	}
	for _, root := range []string{"testdata", "../../../shared/real"} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && (filepath.Ext(p) == ".jsonl" || filepath.Ext(p) == ".json") {
				if b, err := os.ReadFile(p); err == nil {
					logs[p] = b
				}
			}
			return nil
		})
	}
	if len(logs) < 20 {
		t.Fatalf("%d logs: the testdata is missing", len(logs))
	}
	line := `{"type":"session","version":3,"id":"x","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}`
	for name, first := range map[string]string{
		"spaces around":          " \t" + line + " \r",
		"a vertical tab":         "\v" + line,
		"a no-break space after": line + "\u00a0",
		"a torn line":            line[:40],
		"an array":               "[" + line + "]",
		"a string":               `"x"`,
		"nested deep":            strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
	} {
		logs[name] = []byte(first + "\n" + `{"type":"message","id":"a1b2c3d4"}` + "\n")
	}
	for name, b := range logs {
		want, werr := Sniff(bytes.NewReader(b), int64(len(b)))
		// the one pass over a whole object tells what the passes over
		// any line tell
		if first, end, err := firstLineEnd(Source{R: bytes.NewReader(b), Size: int64(len(b))}); err == nil && first != nil {
			if f, _ := sniffAny(bytes.NewReader(b), int64(len(b)), first, end); f != want {
				t.Errorf("%s: sniffFirst says %v, sniffAny %v", name, want, f)
			}
		}
		for _, n := range []int{0, 1, 2, 40, 300, 4096, 1 << 20} {
			start := b[:min(n, len(b))]
			got, err := SniffStart(bytes.NewReader(b), int64(len(b)), start)
			if got != want || (err == nil) != (werr == nil) {
				t.Errorf("%s, start of %d bytes: %v (%v), Sniff says %v (%v)", name, len(start), got, err, want, werr)
			}
		}
	}
}

// TestTitleStart: a title told from the start of a log in memory (any
// number of its first lines) is the title Title reads, for every log of
// testdata and ../shared/real, and where the title is after a line
// longer than Title's buffer or past its 400 lines.
func TestTitleStart(t *testing.T) {
	logs := map[string][]byte{}
	for _, root := range []string{"testdata", "../../../shared/real"} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && (filepath.Ext(p) == ".jsonl" || filepath.Ext(p) == ".json") {
				if b, err := os.ReadFile(p); err == nil {
					logs[p] = b
				}
			}
			return nil
		})
	}
	prompt := `{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"the title"}}` + "\n"
	other := `{"type":"assistant","uuid":"a","sessionId":"s","message":{"role":"assistant","content":"x"}}` + "\n"
	long := `{"type":"user","uuid":"l","sessionId":"s","message":{"role":"user","content":"` + strings.Repeat("y", titleBuf) + `"}}` + "\n"
	logs["after a long line"] = []byte(other + long + prompt)
	sized := func(n int) string { // a prompt line of n bytes, its newline too
		h, e := `{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"`, `"}}`+"\n"
		return h + strings.Repeat("z", n-len(h)-len(e)) + e
	}
	logs["a line of the buffer's size"] = []byte(other + sized(titleBuf) + prompt)
	logs["a line a byte longer"] = []byte(other + sized(titleBuf+1) + prompt)
	logs["after 399 lines"] = []byte(strings.Repeat(other, 399) + prompt)
	logs["after 400 lines"] = []byte(strings.Repeat(other, 400) + prompt)
	logs["unterminated"] = []byte(other + strings.TrimSuffix(prompt, "\n"))
	for name, b := range logs {
		f, err := Sniff(bytes.NewReader(b), int64(len(b)))
		if err != nil || f == Unknown {
			continue
		}
		src := Source{Path: name, R: bytes.NewReader(b), Size: int64(len(b))}
		want := Title(src, f)
		for _, lines := range []int{0, 1, 2, 3, 5, 400, 1 << 30} {
			end := 0
			for k := 0; k < lines && end < len(b); k++ {
				i := bytes.IndexByte(b[end:], '\n')
				if i < 0 {
					break
				}
				end += i + 1
			}
			if got := TitleStart(src, f, b[:end]); got != want {
				t.Errorf("%s (%v), its first %d bytes held: title %q, Title says %q", name, f, end, got, want)
			}
		}
	}
	for name, want := range map[string]string{"after a long line": "the title", "after 399 lines": "the title", "after 400 lines": "", "unterminated": "the title", "a line a byte longer": "the title"} {
		b := logs[name]
		if got := Title(Source{R: bytes.NewReader(b), Size: int64(len(b))}, Claude); got != want {
			t.Errorf("%s: Title %q, want %q", name, got, want)
		}
	}
}
