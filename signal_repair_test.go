package panto_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalRepairSays: a repair stopped by SIGTERM finishes the file in
// hand and says that it was cancelled, as a check stopped so says: it
// ended with bit 32 and, on stderr, only "N files: … K repaired" (N all
// of them), as if the files it never started had been looked at.
func TestSignalRepairSays(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir+"/.config", "XDG_CACHE_HOME="+dir+"/.cache",
		"XDG_DATA_HOME="+dir+"/.data", "PANTO_SESSION_DIR="+dir+"/sessions", "NO_COLOR=1")
	torn := `{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}` + "\n" +
		`{"type":"message","id":"00000000","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"first"}]}}` + "\n" +
		`{"type":"mess`
	files := filepath.Join(dir, "torn")
	if err := os.Mkdir(files, 0o700); err != nil {
		t.Fatal(err)
	}
	const n = 3000
	for i := range n {
		if err := os.WriteFile(filepath.Join(files, fmt.Sprintf("%04d.jsonl", i)), []byte(torn), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("panto-fsck", "--repair", files)
	cmd.Env = env
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// At work: a cut is saved.
	deadline := time.Now().Add(time.Minute)
	for !hasCut(files) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no file repaired after a minute")
		}
		time.Sleep(5 * time.Millisecond) // polling a condition
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("exit %v after SIGTERM, want the cancelled bit", err)
	}
	code := ee.ExitCode()
	t.Logf("exit %d; stderr: %s", code, errb.String())
	if code&32 == 0 {
		t.Fatalf("exit %d after SIGTERM: no cancelled bit (32) (a larger input is needed if the repair was done)", code)
	}
	if !strings.Contains(errb.String(), "panto-fsck: error: cancelled") {
		t.Errorf("stderr does not say the repair was cancelled")
	}
}

// hasCut reports whether dir holds a cut saved by a repair.
func hasCut(dir string) bool {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if strings.Contains(de.Name(), ".cut-") {
			return true
		}
	}
	return false
}
