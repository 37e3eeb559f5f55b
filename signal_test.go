package panto_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/panto-dev/panto/internal/pgtest"
)

// stopBound is how long a command may take to end after SIGTERM: far
// above what it takes (a few milliseconds: the figures are logged), far
// below the work left (an endless pipe; a log of tens of MB in a race build).
const stopBound = 2 * time.Second

// TestSignalStops starts the long operations of the real commands (the
// test binary stands in for them) on inputs that keep them busy, an
// endless pipe or a large log, sends SIGTERM once each is at work, and
// waits, bounded, for it to end. panto-fsck on a pipe read on after the
// signal, for ever; import --once and --follow converted a log to its
// end (hostile.md #1: a log that spun was never stopped at all).
func TestSignalStops(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir+"/.config", "XDG_CACHE_HOME="+dir+"/.cache",
		"XDG_DATA_HOME="+dir+"/.data", "PANTO_SESSION_DIR="+dir+"/sessions", "NO_COLOR=1")
	line := func(i int) string {
		return fmt.Sprintf(`{"type":"message","id":"%08x","parentId":"%08x","timestamp":"2026-01-01T00:00:00.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"message %d"}]}}`+"\n", i+1, i, i)
	}
	header := `{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}` + "\n" +
		`{"type":"message","id":"00000000","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"first"}]}}` + "\n"

	// A pipe that never ends: the command is at work once it has taken
	// more than a pipe holds.
	for _, args := range [][]string{{"panto-fsck", "-"}, {"panto-cost", "-"}, {"panto-replay", "-"}} {
		t.Run(args[0]+"_pipe", func(t *testing.T) {
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = env
			w, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			taken := make(chan struct{})
			go func() {
				taken := taken
				bw := bufio.NewWriter(w)
				n, i := 0, 0
				bw.WriteString(header)
				for {
					k, err := bw.WriteString(line(i))
					if err != nil {
						return
					}
					n, i = n+k, i+1
					if n >= 4<<20 && taken != nil {
						close(taken) // 4 MiB taken: well past the pipe's buffer
						taken = nil
					}
				}
			}()
			select {
			case <-taken:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				t.Fatal("the command took nothing from its stdin in a minute")
			}
			stop(t, cmd, false)
			w.Close()
		})
	}

	// Large logs, in files.
	big := filepath.Join(dir, "big")
	os.MkdirAll(filepath.Join(big, "pi"), 0o700)
	os.MkdirAll(filepath.Join(big, "panto"), 0o700)
	pi := piLog(filepath.Join(big, "pi", "long.jsonl"), 150000)
	session := filepath.Join(big, "panto", "s.jsonl")
	f, err := os.Create(session)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	bw.WriteString(header)
	for i := range 150000 {
		bw.WriteString(line(i))
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	runs := [][]string{{"panto-fsck", session}, {"panto-fsck", "--dry-run", "--repair", session}, {"panto-cost", pi}, {"panto-replay", "--format", "html", pi}, {"panto-log", "import", pi}}
	if base := os.Getenv("PANTO_TEST_PG"); base != "" {
		db := pgDatabase(t, base)
		runs = append(runs, []string{"panto-log", "import", "--once", "--to", db, filepath.Join(big, "pi")},
			[]string{"panto-log", "import", "--follow", "--to", db, filepath.Join(big, "pi")})
	} else {
		t.Log("no PANTO_TEST_PG: import --once and --follow are not tried (scripts/test starts a server)")
	}
	for _, args := range runs {
		t.Run(strings.Join(args[:2], "_"), func(t *testing.T) {
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = env
			var errb strings.Builder
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { t.Logf("stderr: %s", errb.String()) }()
			// At work: it has spent a tenth of a second of CPU (a start
			// takes less; the log takes seconds).
			deadline := time.Now().Add(time.Minute)
			for cpu(cmd.Process.Pid) < 10 {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatal("not at work after a minute")
				}
				time.Sleep(5 * time.Millisecond) // polling a condition
			}
			stop(t, cmd, len(args) > 2 && args[2] == "--follow") // a follower stops between commits, as asked: exit 0
		})
	}
}

// stop sends cmd SIGTERM and waits, bounded, for it to end.
func stop(t *testing.T, cmd *exec.Cmd, zero bool) {
	t.Helper()
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err == nil && !zero {
			t.Errorf("exit 0 after SIGTERM: it ended its work before the signal came (a larger input is needed)")
		} else if err != nil && !errors.As(err, &ee) {
			t.Error(err)
		}
		t.Logf("ended %v after SIGTERM (%v)", time.Since(sent).Round(time.Millisecond), err)
	case <-time.After(stopBound):
		cmd.Process.Kill()
		<-done
		t.Errorf("still running %v after SIGTERM", stopBound)
	}
}

// cpu is the CPU time process pid has used, in clock ticks (1/100 s).
func cpu(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(fields[11])
	k, _ := strconv.Atoi(fields[12])
	return u + k
}

// piLog writes a pi session of n messages to path.
func piLog(path string, n int) string {
	f, err := os.Create(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	w.WriteString(`{"type":"session","version":3,"id":"7a2c3b9e-1b7d-4c1e-9a57-3d1f0b2c4e5b","timestamp":"2026-03-02T10:00:00.000Z","cwd":"/home/u/pi"}` + "\n")
	parent := "null"
	for i := range n {
		id := fmt.Sprintf("%08x", i+1)
		if i%2 == 0 {
			fmt.Fprintf(w, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-03-02T10:00:00.000Z","message":{"role":"user","content":"question %d","timestamp":1}}`+"\n", id, parent, i)
		} else {
			fmt.Fprintf(w, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-03-02T10:00:00.000Z","message":{"role":"assistant","content":[{"type":"text","text":"answer %d"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-opus-4-5","usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":110},"stopReason":"stop","timestamp":1}}`+"\n", id, parent, i)
		}
		parent = `"` + id + `"`
	}
	if err := w.Flush(); err != nil {
		panic(err)
	}
	return path
}

// pgDatabase makes a database of the test's own on the server of base.
func pgDatabase(t *testing.T, base string) string { return pgtest.On(t, base, "sig") }
