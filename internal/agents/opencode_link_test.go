package agents

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenCodeSymlinkWAL: a database reached by a symbolic link (a dotfiles
// setup links ~/.local/share/opencode/opencode.db) while OpenCode runs: its
// newest commits are in the WAL beside the real file, where SQLite keeps
// it. The -wal was looked for beside the link, found missing, and the file
// read immutable: the commits in the WAL were left out (costs too low, the
// newest messages missing) with no word.
func TestOpenCodeSymlinkWAL(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	real := filepath.Join(dir, "data", "opencode.db")
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	ocMakeDB(t, real, ocSchema, ocShapes)
	link := filepath.Join(dir, "opencode.db")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	// OpenCode running: a commit in the WAL, not checkpointed (the
	// connection stays open, as OpenCode's does).
	db, err := sql.Open("sqlite", "file:"+uriPath(real)+"?_pragma=journal_mode(wal)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO message VALUES ('msg_inwal', 'ses_A', 1780000060000, 1780000060000, '{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":1780000060000},"tokens":{"input":7,"output":7,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}')`); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(real + "-wal"); err != nil {
		t.Fatalf("no WAL beside the database: %v", err)
	}
	read := func(path string) string {
		_, es, _, err := ocRead(t, fileSource(t, path), Options{Content: true})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var all []string
		for _, s := range es {
			all = append(all, s...)
		}
		return strings.Join(all, "\n")
	}
	direct, linked := read(real), read(link)
	if !strings.Contains(direct, "msg_inwal") {
		t.Fatalf("the commit in the WAL is not read from the database itself")
	}
	if linked != direct {
		t.Errorf("read through the link differs from the database read directly (the WAL's commit: %v)", strings.Contains(linked, "msg_inwal"))
	}
}
