package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/panto-dev/panto/pkg/store"
)

const cycleID = "01b33333-3333-7333-8333-333333333333"

func cycleHeader() string {
	return `{"type":"session","version":1,"id":"` + cycleID + `","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/p"}` + "\n"
}

func cycleEntry(id, parent, role string) string {
	p := `null`
	if parent != "" {
		p = `"` + parent + `"`
	}
	if role == "user" {
		return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"2026-04-25T14:00:01.000Z","provider":"anthropic","model":"m","message":{"role":"user","content":[{"type":"text","text":"A"}]}}` + "\n"
	}
	return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"2026-04-25T14:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"B"}],"provider":"anthropic","model":"m","stopReason":"stop","usage":{"input":1,"output":1}}}` + "\n"
}

// TestReceiveRefusesCycles is hostile report §2: a session whose entry is
// its own parent (or two that are each other's) is refused on push, and
// nothing reaches the database.
func TestReceiveRefusesCycles(t *testing.T) {
	p := open(t, testDB(t))
	ctx := context.Background()
	for name, src := range map[string]string{
		"self":  cycleHeader() + cycleEntry("aaaaaaaa", "", "user") + cycleEntry("cccccccc", "cccccccc", "assistant"),
		"two":   cycleHeader() + cycleEntry("aaaaaaaa", "bbbbbbbb", "user") + cycleEntry("bbbbbbbb", "aaaaaaaa", "assistant"),
		"later": cycleHeader() + cycleEntry("aaaaaaaa", "", "user") + cycleEntry("bbbbbbbb", "cccccccc", "assistant") + cycleEntry("cccccccc", "aaaaaaaa", "user"),
	} {
		if _, err := p.Receive(ctx, strings.NewReader(src)); !errors.Is(err, store.ErrNeedsFsck) || !strings.Contains(err.Error(), "parent cycle") {
			t.Errorf("%s: %v, want a refused parent cycle", name, err)
		}
	}
	var n int
	if err := p.conn.QueryRow(ctx, `SELECT count(*) FROM panto_sessions`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d sessions in the database (%v), want 0", n, err)
	}
}

// TestReceiveRacingCreators is hostile report §17: two pushes of one new
// session at once; the loser reported a false "other bytes" conflict.
func TestReceiveRacingCreators(t *testing.T) {
	u := testDB(t)
	path := sessionFile(t, t.TempDir(), 300)
	want, _ := os.ReadFile(path)
	ps := []*PG{open(t, u), open(t, u), open(t, u)}
	var wg sync.WaitGroup
	errs := make([]error, len(ps))
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = pushFile(context.Background(), p, path)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Errorf("a racing push: %v", err)
		}
	}
	id := strings.TrimSuffix(path[strings.LastIndexByte(path, '/')+1:], ".jsonl")
	if got := readAll(t, ps[0], id); string(got) != string(want) {
		t.Fatalf("the session differs from the file (%d bytes, want %d)", len(got), len(want))
	}
}

// TestReceiveBehind: a src the database holds all of, and more, adds
// nothing and is no conflict (the file store does the same).
func TestReceiveBehind(t *testing.T) {
	p := open(t, testDB(t))
	ctx := context.Background()
	two := cycleHeader() + cycleEntry("aaaaaaaa", "", "user") + cycleEntry("bbbbbbbb", "aaaaaaaa", "assistant")
	three := two + cycleEntry("cccccccc", "bbbbbbbb", "user")
	if _, err := p.Receive(ctx, strings.NewReader(three)); err != nil {
		t.Fatal(err)
	}
	res, err := p.Receive(ctx, strings.NewReader(two))
	if err != nil || res.Entries != 0 || res.Had != 3 {
		t.Fatalf("behind: %+v %v", res, err)
	}
	if got := readAll(t, p, cycleID); string(got) != three {
		t.Fatalf("session\n%s", got)
	}
}

// gated is a session's bytes whose second pass (Receive checks the whole
// source first, then copies it) stops at the middle until released.
type gated struct {
	r        *bytes.Reader
	mu       sync.Mutex
	high     bool          // the first pass read past the middle
	again    bool          // a second pass began
	blocked  chan struct{} // closed when the second pass reaches the middle
	once     sync.Once
	released chan struct{}
}

func (g *gated) Size() int64 { return g.r.Size() }

func (g *gated) ReadAt(b []byte, off int64) (int, error) {
	half := g.r.Size() / 2
	g.mu.Lock()
	stop := false
	switch {
	case off+int64(len(b)) > half && g.again:
		stop = true
	case off+int64(len(b)) > half:
		g.high = true
	case g.high:
		g.again = true
	}
	g.mu.Unlock()
	if stop {
		g.once.Do(func() { close(g.blocked) })
		<-g.released
	}
	return g.r.ReadAt(b, off)
}

// TestReceiveConnectionTerminated: the server ends the connection (an
// administrator's pg_terminate_backend, a shutdown) while a push copies
// its entries. pgx 5.7.5's CopyFrom closed a closed channel on the FATAL
// message and panicked (jackc/pgx#2364): panto-log push died with a stack
// trace (exit 2), and a push --follow archiver with it. Receive now fails
// with an error, the session absent, and pushed again it is whole.
func TestReceiveConnectionTerminated(t *testing.T) {
	u := testDB(t)
	path := sessionFile(t, t.TempDir(), 300)
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSuffix(path[strings.LastIndexByte(path, '/')+1:], ".jsonl")
	admin, p := open(t, u), open(t, u)
	g := &gated{r: bytes.NewReader(want), blocked: make(chan struct{}), released: make(chan struct{})}
	var release sync.Once
	defer release.Do(func() { close(g.released) })
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		_, err := p.Receive(context.Background(), g)
		done <- err
	}()
	<-g.blocked // the copy is under way, stopped at the middle of the file
	ctx := context.Background()
	if _, err := admin.conn.Exec(ctx, `SELECT pg_terminate_backend($1)`, p.conn.PgConn().PID()); err != nil {
		t.Fatal(err)
	}
	// The read goes on once the server has ended the connection (the
	// client has its FATAL message by then): a file is never read forever.
	for gone := false; !gone; {
		if err := admin.conn.QueryRow(ctx, `SELECT NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $1)`, p.conn.PgConn().PID()).Scan(&gone); err != nil {
			t.Fatal(err)
		}
	}
	release.Do(func() { close(g.released) })
	err = <-done
	if err == nil || strings.HasPrefix(err.Error(), "panic") {
		t.Fatalf("Receive on a terminated connection: %v, want an error", err)
	}
	var n int
	if err := admin.conn.QueryRow(ctx, `SELECT count(*) FROM panto_sessions`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d sessions after the failed push (%v), want 0", n, err)
	}
	if _, err := pushFile(ctx, open(t, u), path); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, admin, id); !bytes.Equal(got, want) {
		t.Fatalf("pushed again: %d bytes, want the file's %d", len(got), len(want))
	}
}
