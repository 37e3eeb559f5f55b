package agents

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestSweepCopies: a copy of a user's database left by a process that was
// killed (the kill -9 of a read taking a snapshot) is removed by the next
// read; a copy of a process still running, this one's included, is not.
func TestSweepCopies(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "60") // a process that holds a copy, for the test's length
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()

	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := func(pid int, name string) string {
		d := filepath.Join(tmp, tmpPrefix+strconv.Itoa(pid)+"-"+name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "opencode.db"), []byte("SQLite format 3\x00"), 0o600); err != nil {
			t.Fatal(err)
		}
		return d
	}
	killed := dir(dead.Process.Pid, "1")
	running := dir(live.Process.Pid, "2")
	mine := dir(os.Getpid(), "3")
	other := filepath.Join(tmp, "panto-opencode-notapid")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}

	made, err := copyDir()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(made) != tmp {
		t.Fatalf("the copy's directory %s is not in TMPDIR %s", made, tmp)
	}
	for _, c := range []struct {
		dir  string
		kept bool
	}{{killed, false}, {running, true}, {mine, true}, {other, true}, {made, true}} {
		_, err := os.Stat(c.dir)
		if kept := err == nil; kept != c.kept {
			t.Errorf("%s: kept %v, want %v", filepath.Base(c.dir), kept, c.kept)
		}
	}
}
