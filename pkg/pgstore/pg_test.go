package pgstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/panto-dev/panto/internal/fsck"
	"github.com/panto-dev/panto/internal/pgtest"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/filestore"
	"github.com/panto-dev/panto/pkg/scan"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
	"github.com/panto-dev/panto/pkg/store/storetest"
)

func open(t testing.TB, u string) *PG {
	t.Helper()
	p, err := Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestConformance: the database keeps the contract every store keeps.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, testDB(t)) })
}

// TestFollowerConformance: PG is the store.Follower storetest describes.
func TestFollowerConformance(t *testing.T) {
	storetest.RunFollower(t, func(t *testing.T) store.Follower { return open(t, testDB(t)) })
}

// readAll reads a session back as a file's bytes.
func readAll(t *testing.T, p *PG, id string) []byte {
	t.Helper()
	return storetest.ReadAll(t, p, id)
}

// sessionFile writes a session of n rounds (a prompt, a tool call, its
// result, a reply; a branch; text with invalid UTF-8) as the file store
// writes it, and returns its path.
func sessionFile(t *testing.T, dir string, n int) string {
	t.Helper()
	fs := &filestore.Files{Env: catalog.Env{SessionDir: dir}}
	path, err := fs.NewName("/home/u/proj")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var first string
	for i := range n {
		msgs := []store.Msg{{Raw: session.TextMessage("user", fmt.Sprintf("round %d: caf\xc3\xa9 \xff", i)), Role: "user"}}
		for _, line := range []string{
			`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s1"},{"type":"toolUse","id":"t` + fmt.Sprint(i) + `","name":"bash","input":"{\"command\":\"ls\"}"}],"provider":"anthropic","model":"claude-x","stopReason":"toolUse","usage":{"input":10,"output":5,"cacheRead":100,"reasoning":2}}`,
			`{"role":"user","content":[{"type":"toolResult","toolUseId":"t` + fmt.Sprint(i) + `","content":"a.txt\nb.txt"}]}`,
			`{"role":"assistant","content":[{"type":"text","text":"done \"` + strings.Repeat("x", i*50) + `\""}],"provider":"anthropic","model":"claude-x","stopReason":"stop","usage":{"input":20,"output":7,"cacheWrite":30,"cacheWrite1h":10}}`,
		} {
			m, err := store.ParseMessage([]byte(line))
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, m)
		}
		res, err := fs.Append(ctx, path, msgs, store.AppendOptions{Cwd: "/home/u/proj", Provider: "anthropic", Model: "claude-x"})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = session.Classify(bytes.SplitN(res.Lines, []byte("\n"), 2)[0]).ID
		}
	}
	if _, err := fs.Append(ctx, path, []store.Msg{{Raw: session.TextMessage("user", "a branch"), Role: "user"}}, store.AppendOptions{Parent: first}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPushExport: a session pushed and exported back is byte for byte the
// file, and fsck calls it clean; a second push copies nothing; a grown
// file pushes only what it added, and the stamp at the leaf follows.
func TestPushExport(t *testing.T) {
	p := open(t, testDB(t))
	ctx := context.Background()
	path := sessionFile(t, t.TempDir(), 5)
	res, err := pushFile(ctx, p, path)
	if err != nil || res.Entries != 21 || res.Had != 0 {
		t.Fatalf("push: %+v %v", res, err)
	}
	want, _ := os.ReadFile(path)
	got := readAll(t, p, res.ID)
	if !bytes.Equal(got, want) {
		t.Fatalf("exported\n%s\nwant\n%s", got, want)
	}
	a, err := fsck.Check(bytes.NewReader(got), nil)
	if err != nil || a.Damaged() {
		t.Fatalf("fsck: %+v %v", a.Findings, err)
	}
	if again, err := pushFile(ctx, p, path); err != nil || again.Entries != 0 || again.Had != 21 {
		t.Fatalf("second push: %+v %v", again, err)
	}
	// Grown by an append to the file: only the new entries go.
	fs := &filestore.Files{}
	if _, err := fs.Append(ctx, path, []store.Msg{{Raw: session.TextMessage("user", "more"), Role: "user"}}, store.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if grown, err := pushFile(ctx, p, path); err != nil || grown.Entries != 1 {
		t.Fatalf("push of the grown file: %+v %v", grown, err)
	}
	want, _ = os.ReadFile(path)
	if got := readAll(t, p, res.ID); !bytes.Equal(got, want) {
		t.Fatal("the grown session differs")
	}
	// An append to the database now follows the file's leaf and stamp.
	out, err := p.Append(ctx, res.ID, []store.Msg{{Raw: session.TextMessage("user", "from the db"), Role: "user"}}, store.AppendOptions{})
	if err != nil || !bytes.Contains(out.Lines, []byte(`"provider":"anthropic","model":"claude-x"`)) {
		t.Fatalf("append after push: %s %v", out.Lines, err)
	}
}

// TestPushConflict: an entry the database has with other bytes (its id
// the same) stops the push, and nothing is overwritten or added.
func TestPushConflict(t *testing.T) {
	p := open(t, testDB(t))
	ctx := context.Background()
	path := sessionFile(t, t.TempDir(), 2)
	res, err := pushFile(ctx, p, path)
	if err != nil {
		t.Fatal(err)
	}
	before := readAll(t, p, res.ID)
	b, _ := os.ReadFile(path)
	i := bytes.Index(b, []byte("a.txt"))
	b[i] = 'A' // an entry the database has, with other bytes (same length)
	os.WriteFile(path, b, 0o600)
	if _, err := pushFile(ctx, p, path); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("push of a changed file: %v, want ErrConflict", err)
	}
	if after := readAll(t, p, res.ID); !bytes.Equal(after, before) {
		t.Fatal("a refused push changed the session")
	}
}

// TestPushKilled: a push killed at random points and run again copies
// every entry exactly once.
func TestPushKilled(t *testing.T) {
	u := testDB(t)
	path := sessionFile(t, t.TempDir(), 400)
	want, _ := os.ReadFile(path)
	for i := range 8 {
		cmd := client(t, u, "push", path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.IntN(60)+i*10) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	p := open(t, u)
	if _, err := pushFile(context.Background(), p, path); err != nil {
		t.Fatal(err)
	}
	id := catalog.IDFromPath(path)
	if got := readAll(t, p, id); !bytes.Equal(got, want) {
		t.Fatalf("after killed pushes the session differs (%d bytes, want %d)", len(got), len(want))
	}
}

// checkChain reads the session and checks it is one chain of whole
// batches (a prompt and its reply), holding every id in acked.
func checkChain(t *testing.T, p *PG, id string, acked map[string]bool) int {
	t.Helper()
	b := readAll(t, p, id)
	l, err := scan.Scan(bytes.NewReader(b), scan.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !l.HeaderOK || len(l.Corrupt)+len(l.Invalid)+len(l.Dangling)+len(l.DupIDs) > 0 {
		t.Fatalf("damaged: %+v", l)
	}
	for i := range l.Nodes {
		n := &l.Nodes[i]
		if i > 0 && n.Parent != int32(i-1) {
			t.Fatalf("entry %s: parent %d, want the entry before it (%d): not one chain", l.ID(int32(i)), n.Parent, i-1)
		}
		want := session.User
		if i%2 == 1 {
			want = session.Assistant
		}
		if n.Role != want {
			t.Fatalf("entry %d is %v: a batch was split", i, n.Role)
		}
		delete(acked, l.ID(int32(i)))
	}
	for id := range acked {
		t.Fatalf("acknowledged entry %s is missing", id)
	}
	return len(l.Nodes)
}

// seeded opens the database at u and creates a session of one batch in
// it, for clients to append to.
func seeded(t *testing.T, u string) (*PG, string) {
	p := open(t, u)
	id, _ := p.NewName("/t")
	if _, err := p.Append(context.Background(), id, pair("seed"), store.AppendOptions{Cwd: "/t"}); err != nil {
		t.Fatal(err)
	}
	return p, id
}

// TestConcurrentAppenders: eight client processes append to one session
// at once; the row lock makes one intact chain of every batch.
func TestConcurrentAppenders(t *testing.T) {
	u := testDB(t)
	p, id := seeded(t, u)
	acked := map[string]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 8 {
		cmd := client(t, u, "append", id, "20")
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				mu.Lock()
				acked[sc.Text()] = true
				mu.Unlock()
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("appender: %v", err)
			}
		})
	}
	wg.Wait()
	if n := checkChain(t, p, id, acked); n != 2+8*20*2 {
		t.Fatalf("%d entries, want %d", n, 2+8*20*2)
	}
}

// TestRacingCreators: two clients create the same new session at once,
// round after round: exactly one wins each time.
func TestRacingCreators(t *testing.T) {
	u := testDB(t)
	for range 10 {
		id, _ := session.NewSessionID()
		var outs [2]bytes.Buffer
		var cmds [2]interface{ Wait() error }
		for i := range 2 {
			cmd := client(t, u, "create", id)
			cmd.Stdout = &outs[i]
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds[i] = cmd
		}
		for i := range 2 {
			if err := cmds[i].Wait(); err != nil {
				t.Fatalf("creator: %v", err)
			}
		}
		got := strings.TrimSpace(outs[0].String()) + " " + strings.TrimSpace(outs[1].String())
		if got != "won lost" && got != "lost won" {
			t.Fatalf("creators said %q", got)
		}
	}
}

// acks starts an appending client and gives, once its output ends, the
// entry ids it printed: those it was told were committed.
func acks(t *testing.T, cmd *exec.Cmd) <-chan []string {
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan []string, 1)
	go func() {
		var ids []string
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			ids = append(ids, sc.Text())
		}
		done <- ids
	}()
	return done
}

// TestKillClient: clients killed by SIGKILL in the middle of their
// batches leave every acknowledged batch there, and none in part.
func TestKillClient(t *testing.T) {
	u := testDB(t)
	p, id := seeded(t, u)
	acked := map[string]bool{}
	for i := range 25 {
		cmd := client(t, u, "append", id, "1000")
		done := acks(t, cmd)
		time.Sleep(time.Duration(20+rand.IntN(80)+i) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		for _, id := range <-done {
			acked[id] = true
		}
		cmd.Wait()
	}
	checkChain(t, p, id, acked)
}

// TestServerKilled: the server stopped at once (pg_ctl stop -m immediate)
// in the middle of appends: the append in flight fails as the store being
// unreachable, no batch is there in part, and once the server is back the
// next append succeeds.
func TestServerKilled(t *testing.T) {
	s := pgtest.Own(t)
	u := newDatabase(t, s.URL)
	p, id := seeded(t, u)
	acked := map[string]bool{}
	for round := range 3 {
		cmd := client(t, u, "append", id, "100000")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		done := acks(t, cmd)
		time.Sleep(time.Duration(100+rand.IntN(200)) * time.Millisecond)
		if err := s.Ctl("stop -m immediate"); err != nil {
			t.Fatal(err)
		}
		for _, id := range <-done {
			acked[id] = true
		}
		if err := cmd.Wait(); err == nil {
			t.Fatalf("round %d: the client did not fail", round)
		}
		if msg := strings.TrimSpace(stderr.String()); !strings.Contains(msg, "cannot reach the store") || strings.Count(msg, "\n") > 0 {
			t.Fatalf("round %d: the client said %q, want one line saying the store cannot be reached", round, msg)
		}
		if err := s.Ctl("start"); err != nil {
			t.Fatal(err)
		}
		p = open(t, u)
		if _, err := p.Append(context.Background(), id, pair(fmt.Sprint("after", round)), store.AppendOptions{}); err != nil {
			t.Fatalf("round %d: the next append: %v", round, err)
		}
	}
	checkChain(t, p, id, acked)
}

// TestRefused: the server down is the store being unreachable, with where
// it tried and no password; a wrong password too; a newer schema is
// refused and left as it was.
func TestRefused(t *testing.T) {
	u := testDB(t)
	ctx := context.Background()
	_, err := Open(ctx, "postgres://panto_pw:sekret-wrong@/nowhere?host=/nonexistent-dir&connect_timeout=2")
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "/nonexistent-dir") || strings.Contains(err.Error(), "sekret-wrong") {
		t.Fatalf("server down: %v", err)
	}
	base := os.Getenv("PANTO_TEST_PG")
	host := base[strings.Index(base, "host="):]
	_, err = Open(ctx, "postgres://panto_pw:sekret-wrong@/panto?"+host)
	if !errors.Is(err, store.ErrUnavailable) || strings.Contains(err.Error(), "sekret-wrong") || !strings.Contains(err.Error(), "password") {
		t.Fatalf("a wrong password: %v", err)
	}
	if _, err := Open(ctx, "postgres://u@%zz/x"); !errors.Is(err, store.ErrBadURL) {
		t.Fatalf("a malformed URL: %v", err)
	}
	p := open(t, u)
	if _, err := p.conn.Exec(ctx, `UPDATE panto_schema SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, u); !errors.Is(err, store.ErrNewerVersion) {
		t.Fatalf("a newer schema: %v", err)
	}
	var v int
	if err := p.conn.QueryRow(ctx, `SELECT version FROM panto_schema`).Scan(&v); err != nil || v != SchemaVersion+1 {
		t.Fatalf("the newer schema was changed: %d %v", v, err)
	}
}

// TestColumns: the columns a team queries hold what the lines say.
func TestColumns(t *testing.T) {
	p := open(t, testDB(t))
	ctx := context.Background()
	path := sessionFile(t, t.TempDir(), 3)
	if _, err := pushFile(ctx, p, path); err != nil {
		t.Fatal(err)
	}
	var turns, input, output, cacheWrite1h int64
	err := p.conn.QueryRow(ctx, `SELECT count(*), sum(input), sum(output), sum(cache_write_1h) FROM panto_entries WHERE role = 'assistant' AND model = 'claude-x' AND provider = 'anthropic'`).Scan(&turns, &input, &output, &cacheWrite1h)
	if err != nil || turns != 6 || input != 90 || output != 36 || cacheWrite1h != 30 {
		t.Fatalf("usage by model: %d turns, %d in, %d out, %d 1h; %v", turns, input, output, cacheWrite1h, err)
	}
	var cwd string
	var messages int
	if err := p.conn.QueryRow(ctx, `SELECT cwd, messages FROM panto_sessions`).Scan(&cwd, &messages); err != nil || cwd != "/home/u/proj" || messages != 13 {
		t.Fatalf("session row: %s %d %v", cwd, messages, err)
	}
	rows, _ := p.conn.Query(ctx, `SELECT line FROM panto_entries ORDER BY seq`)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if want := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))[1:]; len(lines) != len(want) || !bytes.Equal(lines[0], want[0]) {
		t.Fatal("the lines are not the file's")
	}
}

// TestOpenClosedStore: a read of a store closed already fails, and leaves
// no file open behind it (the spool each read makes was closed only when
// the read itself failed, not when the connection could not be had).
func TestOpenClosedStore(t *testing.T) {
	ctx := context.Background()
	p, err := Open(ctx, testDB(t))
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(ents)
	}
	before := fds()
	for range 20 {
		if _, err := p.Open(ctx, "x"); err == nil {
			t.Fatal("Open of a closed store: no error")
		}
		if _, err := p.OpenCandidates(ctx, "x", []int64{1}); err == nil {
			t.Fatal("OpenCandidates of a closed store: no error")
		}
	}
	if after := fds(); after > before+2 {
		t.Fatalf("%d files open after 40 failed reads, %d before", after, before)
	}
}
