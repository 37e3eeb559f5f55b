package filestore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/store"
)

const rid = "019dc5ba-53f6-71a5-ab8f-b1f8709c2572"

func header(id, cwd string) string {
	return `{"type":"session","version":1,"id":"` + id + `","timestamp":"2026-04-25T17:40:15.990Z","cwd":"` + cwd + `"}` + "\n"
}

func entry(id, parent, text string) string {
	p := `null`
	if parent != "" {
		p = `"` + parent + `"`
	}
	return `{"type":"message","id":"` + id + `","parentId":` + p + `,"timestamp":"2026-04-25T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"` + text + `"}]}}` + "\n"
}

func receiver(t *testing.T) *Files {
	return &Files{Env: catalog.Env{SessionDir: filepath.Join(t.TempDir(), "sessions")}, Wait: 10 * time.Second}
}

// TestReceive: a new session is created whole; one that grew gets what it
// lacks; a local file that holds more, the same first, is left; a local
// file that differs, longer or shorter, is a conflict and is left alone.
func TestReceive(t *testing.T) {
	ctx := context.Background()
	fs := receiver(t)
	two := header(rid, "/p") + entry("a1a1a1a1", "", "A") + entry("b2b2b2b2", "a1a1a1a1", "B")
	three := two + entry("c3c3c3c3", "b2b2b2b2", "C")
	res, err := fs.Receive(ctx, strings.NewReader(two))
	if err != nil || !res.Created || res.Entries != 2 {
		t.Fatalf("new: %+v %v", res, err)
	}
	path := res.Name
	if want := filepath.Join(fs.Env.SessionDir, "--p--", rid+".jsonl"); path != want {
		t.Fatalf("placed at %s, want %s", path, want)
	}
	if res, err = fs.Receive(ctx, strings.NewReader(three)); err != nil || res.Created || res.Entries != 1 || res.Had != 2 {
		t.Fatalf("grown: %+v %v", res, err)
	}
	if res, err = fs.Receive(ctx, strings.NewReader(two)); err != nil || res.Entries != 0 || res.Had != 3 {
		t.Fatalf("the file ahead: %+v %v", res, err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != three {
		t.Fatalf("file\n%s\nwant\n%s", got, three)
	}
	// Differing, shorter than the file and longer.
	for _, other := range []string{
		header(rid, "/p") + entry("a1a1a1a1", "", "X"),
		header(rid, "/p") + entry("a1a1a1a1", "", "A") + entry("b2b2b2b2", "a1a1a1a1", "X") + entry("c3c3c3c3", "b2b2b2b2", "C") + entry("d4d4d4d4", "c3c3c3c3", "D"),
	} {
		res, err := fs.Receive(ctx, strings.NewReader(other))
		if !errors.Is(err, store.ErrConflict) || res == nil || res.Name != path {
			t.Errorf("a differing session: %+v %v, want ErrConflict naming %s", res, err, path)
		}
		if got, _ := os.ReadFile(path); string(got) != three {
			t.Fatalf("a refused receive changed the file:\n%s", got)
		}
	}
}

// TestReceiveLongerLocal is hostile report §4: a local file longer than
// the session received, with other entries, was "pulled 0 bytes".
func TestReceiveLongerLocal(t *testing.T) {
	ctx := context.Background()
	fs := receiver(t)
	local := header(rid, "/p") + entry("e1e1e1e1", "", "1") + entry("e2e2e2e2", "e1e1e1e1", "2") + entry("e3e3e3e3", "e2e2e2e2", "3")
	if _, err := fs.Receive(ctx, strings.NewReader(local)); err != nil {
		t.Fatal(err)
	}
	db := header(rid, "/p") + entry("a1a1a1a1", "", "A")
	if _, err := fs.Receive(ctx, strings.NewReader(db)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a longer local file that differs: %v, want ErrConflict", err)
	}
}

// TestReceiveRefuses: what is no clean session, or would be written
// outside the sessions base, is refused and nothing is made.
func TestReceiveRefuses(t *testing.T) {
	ctx := context.Background()
	for name, src := range map[string]string{
		"traversal id":  header("01b00000-0000-7000-8000-000000000000/../../../../evil", "/p") + entry("a1a1a1a1", "", "A"),
		"not a uuid":    header("deadbeef", "/p") + entry("a1a1a1a1", "", "A"),
		"no header":     entry("a1a1a1a1", "", "A"),
		"not json":      header(rid, "/p") + "not json at all\n" + entry("a1a1a1a1", "", "A"),
		"self parent":   header(rid, "/p") + entry("a1a1a1a1", "", "A") + entry("c3c3c3c3", "c3c3c3c3", "C"),
		"two cycle":     header(rid, "/p") + entry("a1a1a1a1", "b2b2b2b2", "A") + entry("b2b2b2b2", "a1a1a1a1", "B"),
		"repeated id":   header(rid, "/p") + entry("a1a1a1a1", "", "A") + entry("a1a1a1a1", "a1a1a1a1", "B"),
		"second header": header(rid, "/p") + header(rid, "/p") + entry("a1a1a1a1", "", "A"),
	} {
		fs := receiver(t)
		if res, err := fs.Receive(ctx, strings.NewReader(src)); !errors.Is(err, store.ErrNeedsFsck) {
			t.Errorf("%s: %+v %v, want ErrNeedsFsck", name, res, err)
		}
		if _, err := os.Stat(fs.Env.SessionDir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the sessions base was made", name)
		}
	}
}

// TestReceiveRacing: receivers of one new session at once all succeed,
// the file whole.
func TestReceiveRacing(t *testing.T) {
	ctx := context.Background()
	fs := receiver(t)
	var b bytes.Buffer
	b.WriteString(header(rid, "/p"))
	b.WriteString(entry("a1a1a1a1", "", "A"))
	src := b.String()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = fs.Receive(ctx, strings.NewReader(src))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Errorf("a racing receiver: %v", err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(fs.Env.SessionDir, "--p--", rid+".jsonl")); string(got) != src {
		t.Fatalf("file %q", got)
	}
}
