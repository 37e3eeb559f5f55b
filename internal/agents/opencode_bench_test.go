package agents

import (
	"os"
	"testing"
)

// BenchmarkOpenCodeCost reads $PANTO_OC_DB as panto-cost does (no content;
// the first prompts, for --by session's titles).
func BenchmarkOpenCodeCost(b *testing.B) {
	path := os.Getenv("PANTO_OC_DB")
	if path == "" {
		b.Skip("PANTO_OC_DB not set")
	}
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		fi, _ := f.Stat()
		n := 0
		_, _, err = Read(Source{Path: path, R: f, Size: fi.Size()}, OpenCode, Options{Prompts: true},
			func(*Header) error { return nil }, func(e *Entry) error { n++; return nil })
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
}
