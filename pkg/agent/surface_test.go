package agent_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSurface builds testdata/embedder, a program written against SPEC
// §13's surface only, as a module of its own (the repository replacing the
// module it requires, offline), and runs it.
func TestSurface(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/embedder/main.go")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod := "module example.com/embedder\n\ngo 1.26\n\nrequire github.com/panto-dev/panto v0.0.0\n\nreplace github.com/panto-dev/panto => " + root + "\n"
	for name, b := range map[string][]byte{"main.go": src, "go.mod": []byte(mod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "embedder")
	build := exec.Command("go", "build", "-mod=mod", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil {
		t.Fatalf("embedder: %v\n%s", err, out)
	}
	want := "Offline reply 1 to: \"hello\"\nThe tool printed 2 lines. The first: \"one\".\nOffline reply 4 to: \"more\"\n5 messages after Compact, dangling <nil> named true\n"
	if string(out) != want {
		t.Fatalf("embedder printed\n%s\nwant\n%s", out, want)
	}
}
