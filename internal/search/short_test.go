package search

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/agents"
)

// TestShortLinesAtEnd: a log that ends in lines shorter than the offset
// of the query's rarest byte in its run (empty lines, a torn "}") is
// searched to its end; the finder looked past the buffer's end for that
// byte and panicked (slice bounds out of range), as a database session
// read with its candidates only (a run of empty lines) showed first.
func TestShortLinesAtEnd(t *testing.T) {
	dir := t.TempDir()
	line := `{"type":"message","id":"a","parentId":null,"timestamp":"2026-11-01T10:00:00.000Z","message":{"role":"user","content":"eeeeeeeeeq here"}}`
	for _, c := range []struct{ name, body string }{
		{"tiny", "{}\n"},
		{"empty lines", line + "\n\n\n\n\n"},
		{"torn", line + "\n}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".jsonl")
			head := `{"type":"session","version":1,"id":"019a0000-0000-7000-8000-0000000000aa","timestamp":"2026-11-01T10:00:00.000Z","cwd":"/p"}` + "\n"
			if err := os.WriteFile(path, []byte(head+c.body), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, mode := range []Case{Smart, Sensitive} {
				hits, _ := search(t, []File{{Path: path, Format: agents.Panto}}, []string{"eeeeeeeeeq"}, nil, mode, Options{})
				if want := strings.Count(c.body, "eeeeeeeeeq"); len(hits) != want {
					t.Fatalf("%d hits, want %d", len(hits), want)
				}
			}
		})
	}
}
