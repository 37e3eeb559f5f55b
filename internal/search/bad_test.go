package search

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/panto-dev/panto/internal/memtest"
)

// TestLimitAfterFilters: --limit 1 --agent codex finds the Codex hit
// though 1,000 Claude hits come first (newer).
func TestLimitAfterFilters(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	lines := claudeLines("x")
	b.WriteString(lines[1] + "\n")
	for i := range 1000 {
		fmt.Fprintf(&b, `{"type":"assistant","uuid":"u%d","sessionId":%q,"cwd":"/p","timestamp":"2026-11-05T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"zqlimit %d"}]}}`+"\n", i, claudeID, i)
	}
	claude := filepath.Join(dir, "claude.jsonl")
	os.WriteFile(claude, []byte(b.String()), 0o600)
	codex := filepath.Join(dir, "codex.jsonl")
	cl := codexLines("zqlimit in codex")
	os.WriteFile(codex, []byte(strings.Join(cl, "\n")+"\n"), 0o600)
	files := []File{{Path: claude}, {Path: codex}}
	hits, sum := search(t, files, []string{"zqlimit"}, nil, Smart, Options{Limit: 1, Filter: Filter{Agents: map[string]bool{"codex": true}}})
	if len(hits) != 1 || hits[0].Agent != "codex" || sum.Capped {
		t.Fatalf("hits %v, capped %v: want the one Codex hit, not capped", hits, sum.Capped)
	}
	hits, sum = search(t, files, []string{"zqlimit"}, nil, Smart, Options{Limit: 5})
	if len(hits) != 5 || !sum.Capped || hits[0].Agent != "claude" {
		t.Fatalf("%d hits, capped %v: want 5 Claude hits, capped", len(hits), sum.Capped)
	}
	hits, sum = search(t, files, []string{"zqlimit"}, nil, Smart, Options{Limit: 1000})
	if len(hits) != 1000 || !sum.Capped {
		t.Fatalf("%d hits, capped %v: want 1000, capped (the Codex hit is left)", len(hits), sum.Capped)
	}
	hits, sum = search(t, files, []string{"zqlimit"}, nil, Smart, Options{Limit: 1001})
	if len(hits) != 1001 || sum.Capped {
		t.Fatalf("%d hits, capped %v: want 1001, not capped", len(hits), sum.Capped)
	}
}

// TestBadSources: a file that cannot be read (gone, a directory) is a
// problem said for it, a FIFO is skipped without blocking, and the
// readable files are still searched.
func TestBadSources(t *testing.T) {
	files := writeLogs(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "gone.jsonl")
	os.Symlink(filepath.Join(dir, "nothing"), gone)
	bad := []File{{Path: fifo}, {Path: gone}, {Path: dir}}
	var problems []string
	var mu sync.Mutex
	q, _ := Parse([]string{"zquser"}, nil, Smart)
	n := 0
	sum := Run(context.Background(), q, append(bad, files...), Options{Problem: func(p string, err error) {
		mu.Lock()
		problems = append(problems, p)
		mu.Unlock()
	}}, func(*Hit) bool { n++; return true })
	if n != len(files) {
		t.Errorf("%d hits, want %d (the readable files)", n, len(files))
	}
	if len(problems) != 1 || sum.Problems != 1 || sum.Skipped["not a regular file"] != 2 {
		t.Errorf("problems %q (%d), skipped %v: want the gone file, the FIFO and the directory skipped", problems, sum.Problems, sum.Skipped)
	}
}

// TestHugeLine: a 200 MB tool result, its needle at the end written with
// escapes, is found as a tool result and read as a stream: the heap stays
// far below the line's size. Under the race detector the line is 16 MB
// (four times maxLine: the same way through the code, raced) and the heap
// is not measured: 200 MB took 45 s of CPU there; the plain build measures
// it (scripts/test runs this package without -race too).
func TestHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 200 MB")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, claudeID+".jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := claudeLines("x")
	fmt.Fprintln(f, lines[1])
	fmt.Fprintf(f, `{"parentUuid":"a","type":"user","sessionId":%q,"cwd":"/p","uuid":"bbbb","timestamp":"2026-11-05T00:00:00.000Z","message":{"role":"user","content":[{"tool_use_id":"toolu_zqhuge","type":"tool_result","content":"`, claudeID)
	chunk := bytes.Repeat([]byte(`line of output \"quoted\" \u00e9\n`), 1<<12)
	size := 200 << 20
	if raceBuild {
		size = 16 << 20
	}
	for written := 0; written < size; written += len(chunk) {
		f.Write(chunk)
	}
	f.WriteString(`the end: zqhu\u0067e \"found\""}]}}` + "\n")
	fmt.Fprintln(f, lines[3])
	f.Close()

	var hits []*Hit
	var sum Summary
	peak := memtest.PeakHeap(func() {
		hits, sum = search(t, []File{{Path: p}}, []string{`zqhuge "found"`}, nil, Smart, Options{})
	})
	t.Logf("read %d MB, heap in use at most %d MB", sum.Bytes>>20, peak>>20)
	if len(hits) != 1 || hits[0].Kind != KindToolResult || hits[0].Role != "tool" || hits[0].Entry != "bbbb" || !strings.Contains(hits[0].Snippet, `zqhuge "found"`) {
		t.Fatalf("hits %+v: want the tool result", hits)
	}
	if !raceBuild && peak > 64<<20 {
		t.Errorf("heap in use reached %d MB searching a 200 MB line", peak>>20)
	}
	// the line after it is still read
	if hits, _ := search(t, []File{{Path: p}}, []string{"zqassistant"}, nil, Smart, Options{}); len(hits) != 1 {
		t.Errorf("the line after the huge one: %d hits", len(hits))
	}
	// a huge line holding the needle only in a key or an id is no hit
	if hits, _ := search(t, []File{{Path: p}}, []string{"toolu_zqhuge"}, nil, Smart, Options{}); len(hits) != 0 {
		t.Errorf("an id in a huge line: %d hits", len(hits))
	}
}

// TestAppendedWhileSearched: a log written to while it is searched gives
// the hits of the lines it held, and no error.
func TestAppendedWhileSearched(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, claudeID+".jsonl")
	line := func(i int) string {
		return fmt.Sprintf(`{"type":"assistant","uuid":"u%d","sessionId":%q,"cwd":"/p","timestamp":"2026-11-05T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"zqgrow %d %s"}]}}`+"\n", i, claudeID, i, strings.Repeat("pad ", 200))
	}
	var b strings.Builder
	for i := range 2000 {
		b.WriteString(line(i))
	}
	os.WriteFile(p, []byte(b.String()), 0o600)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 2000; i < 20000; i++ { // bounded: about 16 MB
			select {
			case <-done:
				return
			default:
			}
			s := line(i)
			f.WriteString(s[:len(s)/2]) // a torn line, then its end
			f.WriteString(s[len(s)/2:])
		}
	}()
	for range 5 {
		hits, sum := search(t, []File{{Path: p}}, []string{"zqgrow"}, nil, Smart, Options{})
		if len(hits) < 2000 || sum.Problems != 0 {
			t.Errorf("%d hits, %d problems: want every line there at the start", len(hits), sum.Problems)
		}
		for _, h := range hits {
			if !strings.HasPrefix(h.Snippet, "zqgrow ") {
				t.Fatalf("a hit %q", h.Snippet)
			}
		}
	}
	close(done)
	wg.Wait()
}

// TestLimitStops: a search stopped by its limit ends, whatever the number
// of files queued behind it.
func TestLimitStops(t *testing.T) {
	files := writeLogs(t)
	for range 6 {
		files = append(files, files...)
	}
	for range 20 {
		hits, sum := search(t, files, []string{"zquser"}, nil, Smart, Options{Limit: 1, Workers: 2})
		if len(hits) != 1 || !sum.Capped {
			t.Fatalf("%d hits, capped %v", len(hits), sum.Capped)
		}
	}
}

// TestHugeLineInTime: a line over maxLine (read as a stream) is held to
// --since, --until and --model as any other: by its own timestamp, which
// Claude Code writes after the message, and its model. They were not
// applied to it: its hit came whatever the dates.
func TestHugeLineInTime(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, claudeID+".jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, `{"type":"user","sessionId":%q,"cwd":"/p","uuid":"aaaa","timestamp":"2026-11-01T00:00:00.000Z","message":{"role":"user","content":"first"}}`+"\n", claudeID)
	fmt.Fprintf(f, `{"parentUuid":"aaaa","type":"assistant","sessionId":%q,"cwd":"/p","message":{"role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"`, claudeID)
	chunk := bytes.Repeat([]byte(`some words of a long reply `), 1<<12)
	for written := 0; written < maxLine+(2<<20); written += len(chunk) {
		f.Write(chunk)
	}
	f.WriteString(`zqlate"}]},"uuid":"bbbb","timestamp":"2026-11-05T12:00:00.000Z","toolUseResult":{"timestamp":"2026-11-09T00:00:00.000Z"}}` + "\n")
	fmt.Fprintf(f, `{"type":"user","sessionId":%q,"cwd":"/p","uuid":"cccc","timestamp":"2026-11-06T00:00:00.000Z","message":{"role":"user","content":"last"}}`+"\n", claudeID)
	f.Close()
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, c := range []struct {
		fl   Filter
		want int
	}{
		{Filter{}, 1},
		{Filter{Since: day("2026-11-05")}, 1},
		{Filter{Since: day("2026-11-06")}, 0},
		{Filter{Until: day("2026-11-05")}, 0},
		{Filter{Until: day("2026-11-06")}, 1},
		{Filter{Since: day("2026-11-04"), Until: day("2026-11-06")}, 1},
		{Filter{Model: "opus"}, 1},
		{Filter{Model: "gpt"}, 0},
	} {
		hits, _ := search(t, []File{{Path: p}}, []string{"zqlate"}, nil, Smart, Options{Filter: c.fl})
		if len(hits) != c.want {
			t.Errorf("%+v: %d hits, want %d", c.fl, len(hits), c.want)
			continue
		}
		if len(hits) == 1 && (hits[0].Timestamp != "2026-11-05T12:00:00.000Z" || hits[0].Entry != "bbbb") {
			t.Errorf("%+v: the hit is %s at %s, want bbbb at 2026-11-05T12:00:00.000Z", c.fl, hits[0].Entry, hits[0].Timestamp)
		}
	}
}
