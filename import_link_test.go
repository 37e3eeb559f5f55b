package panto_test

import (
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportOpenCodeLink: an opencode.db reached by a symbolic link (a
// dotfiles setup), open in OpenCode (its WAL beside the real file), is
// imported again after OpenCode wrote to it: import looked for the WAL
// beside the link, saw the database file unchanged, and called the log
// "unchanged" (its mark), leaving OpenCode's newest messages out of the
// import with no word; the site and a follower missed them so too.
func TestImportOpenCodeLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := append(os.Environ(), "HOME="+dir, "XDG_CACHE_HOME="+filepath.Join(dir, ".cache"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "XDG_DATA_HOME="+filepath.Join(dir, ".data"),
		"PANTO_SESSION_DIR="+filepath.Join(dir, "sessions"))
	real := filepath.Join(dir, "dotfiles", "opencode.db")
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+real+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, f := range []string{"schema.sql", "shapes.sql"} {
		if _, err := db.Exec(readFile(t, filepath.Join("testdata", "opencode", f))); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "opencode.db")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	imp := func() string {
		cmd := exec.Command("panto-log", "import", link)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil && !strings.Contains(string(out), "new") {
			t.Fatalf("import: %v\n%s", err, out)
		}
		return string(out)
	}
	imp()
	if _, err := db.Exec(`INSERT INTO message VALUES
		('msg_c3', 'ses_C', 1780000301000, 1780000301000, '{"role":"user","time":{"created":1780000301000},"agent":"build","model":{"providerID":"openai","modelID":"gpt-5"}}');
		INSERT INTO part VALUES
		('prt_c3_1', 'msg_c3', 'ses_C', 1780000301000, 1780000301000, '{"type":"text","text":"And once more"}')`); err != nil {
		t.Fatal(err)
	}
	out := imp()
	if !strings.Contains(out, " 1 grown") {
		t.Fatalf("imported again after OpenCode wrote to ses_C (into its WAL), want 1 grown:\n%s", out)
	}
	if got := sh(t, env, "", "panto-log", "search", "--from", "panto", "once more"); !strings.Contains(got, `"session":"`) {
		t.Errorf("the new prompt is not in the import:\n%s", got)
	}
}
