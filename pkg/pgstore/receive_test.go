package pgstore

import (
	"context"
	"errors"
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
