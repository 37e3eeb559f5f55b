package panto_test

import (
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsStandAlone: a clone needs nothing outside it. Every relative
// link of README.md and docs/*.md names a file of the repository (none
// leaves it: the README pointed at ../shared/SPEC.md, which a clone does
// not have), and the README stays short enough to read in five minutes
// (it was 1,243 lines; the rest is in docs/). Nothing a reader is given
// says "SPEC §N", a document a clone does not have: not the README,
// docs/, ARCHITECTURE.md or the scripts, and no string of the code (a
// --help text, an error message); they link the pages of docs/.
func TestDocsStandAlone(t *testing.T) {
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "README.md", "ARCHITECTURE.md")
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			p := filepath.Clean(filepath.Join(filepath.Dir(f), target))
			if strings.HasPrefix(p, "..") {
				t.Errorf("%s links %s, outside the repository", f, target)
				continue
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s links %s: %v", f, target, err)
			}
		}
		if strings.Contains(string(b), "../shared/SPEC") {
			t.Errorf("%s points at ../shared/SPEC.md, which a clone does not have", f)
		}
		if strings.Contains(string(b), "SPEC §") {
			t.Errorf("%s says \"SPEC §\": link the page of docs/ that says it", f)
		}
	}
	scripts, err := filepath.Glob("scripts/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range scripts {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "SPEC §") {
			t.Errorf("%s says \"SPEC §\" (its --help prints its head): name the page of docs/", f)
		}
	}
	// Every string of the code: help texts, error messages, pages.
	for _, dir := range []string{"cmd", "internal", "pkg"} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			src, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			var sc scanner.Scanner
			sc.Init(fset.AddFile(p, -1, len(src)), src, nil, 0)
			for {
				pos, tok, lit := sc.Scan()
				if tok == token.EOF {
					break
				}
				if tok == token.STRING && strings.Contains(lit, "SPEC §") {
					t.Errorf("%s: a string says \"SPEC §\" (a --help text or a message a reader sees): name the page of docs/", fset.Position(pos))
				}
			}
			return nil
		})
	}
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 150 {
		t.Errorf("README.md has %d lines: a newcomer reads it in five minutes at 150 at most; the rest goes in docs/", n)
	}
	for _, want := range []string{"docs/session-format.md", "docs/commands.md", "docs/stores.md", "docs/other-agents.md", "docs/guarantees.md"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("README.md does not link %s", want)
		}
	}
}
