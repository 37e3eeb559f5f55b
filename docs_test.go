package panto_test

import (
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
// (it was 1,243 lines; the rest is in docs/).
func TestDocsStandAlone(t *testing.T) {
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "README.md")
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
