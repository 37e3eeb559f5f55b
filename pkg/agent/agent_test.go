package agent_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/panto-dev/panto/internal/fsck"
	"github.com/panto-dev/panto/internal/pgtest"
	"github.com/panto-dev/panto/pkg/agent"
	"github.com/panto-dev/panto/pkg/provider"
	"github.com/panto-dev/panto/pkg/store"
	"github.com/tidwall/gjson"
)

// The test binary doubles as an embedder's process, so that the tests can
// kill a real one with SIGKILL in the middle of Step (see helper).
func TestMain(m *testing.M) {
	switch os.Getenv("PANTO_AGENT_HELPER") {
	case "":
	case "round":
		os.Exit(roundHelper())
	default:
		os.Exit(helper())
	}
	os.Exit(m.Run())
}

// backend is a store the tests run on; reads is false for null:.
type backend struct {
	name  string
	url   func(t *testing.T) string
	reads bool
}

var backends = []backend{
	{"files", func(t *testing.T) string { return "" }, true},
	{"null", func(t *testing.T) string { return "null:" }, false},
	{"postgres", testDB, true},
}

// env is the environment a store is opened with: sessions and caches in
// the test's directories.
func env(dir string) func(string) string {
	return func(k string) string {
		switch k {
		case "PANTO_SESSION_DIR":
			return dir + "/sessions"
		case "XDG_CACHE_HOME":
			return dir + "/cache"
		}
		return os.Getenv(k)
	}
}

func open(t *testing.T, url, dir string) store.Store {
	t.Helper()
	st, err := store.Open(url, env(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// answered is a new agent on st, offline, each of whose prompts got its
// reply.
func answered(t *testing.T, st store.Store, prompts ...string) *agent.Agent {
	t.Helper()
	ctx := context.Background()
	a, err := agent.New(ctx, agent.Config{Store: st, Cwd: "/p", Provider: offline})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prompts {
		a.Submit(ctx, p)
		if _, err := a.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// testDB is a new, empty database on the test server (PANTO_TEST_PG).
func testDB(t *testing.T) string { return pgtest.New(t, "agent") }

var offline = provider.Config{Provider: provider.Offline}

// lsTool is a bash tool that prints two file names.
func lsTool(ran *int) agent.Tool {
	return agent.Tool{
		Spec: provider.Tool{Name: "bash", Description: "run a command", InputSchema: []byte(`{"type":"object"}`)},
		Run: func(_ context.Context, input string) (string, error) {
			*ran++
			if gjson.Get(input, "command").Str != "ls" {
				return "", errors.New("unexpected input " + input)
			}
			return "a.txt\nb.txt", nil
		},
	}
}

// entries reads the session's entry lines (the header left out).
func entries(t *testing.T, st store.Store, name string) []gjson.Result {
	t.Helper()
	r, err := st.Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	a, err := fsck.Check(bytes.NewReader(b), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Damaged() {
		t.Errorf("fsck finds damage: %+v", a.Findings)
	}
	var out []gjson.Result
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if i > 0 {
			out = append(out, gjson.Parse(line))
		}
	}
	return out
}

// shape is the entries as "role:text" (or the type of other entries),
// the path of each entry given by its parent.
func shape(es []gjson.Result) string {
	var parts []string
	for _, e := range es {
		if e.Get("type").Str != "message" {
			parts = append(parts, e.Get("type").Str)
			continue
		}
		m := e.Get("message")
		p := m.Get("role").Str
		m.Get("content").ForEach(func(_, b gjson.Result) bool {
			switch b.Get("type").Str {
			case "text":
				p += ":" + b.Get("text").Str
			case "toolUse":
				p += ":toolUse"
			case "toolResult":
				p += ":result=" + b.Get("content").Str
			}
			return true
		})
		parts = append(parts, p)
	}
	return strings.Join(parts, " | ")
}

func lastText(r *provider.Reply) string {
	var s []string
	for _, b := range r.Blocks {
		if b.Type == "text" {
			s = append(s, b.Text)
		}
	}
	return strings.Join(s, "")
}

func TestToolRound(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			st := open(t, b.url(t), t.TempDir())
			ran := 0
			a, err := agent.New(ctx, agent.Config{Store: st, Cwd: "/proj", Provider: offline, Tools: []agent.Tool{lsTool(&ran)}})
			if err != nil {
				t.Fatal(err)
			}
			if a.Name() != "" {
				t.Fatalf("Name before the first reply = %q, want \"\"", a.Name())
			}
			if err := a.Submit(ctx, "$ ls"); err != nil {
				t.Fatal(err)
			}
			reply, err := a.Step(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ran != 1 || lastText(reply) != `The tool printed 2 lines. The first: "a.txt".` {
				t.Fatalf("ran %d, reply %q", ran, lastText(reply))
			}
			if n := len(a.Conversation()); n != 4 {
				t.Fatalf("conversation has %d messages, want 4", n)
			}
			if a.Name() == "" {
				t.Fatal("no name after the first reply")
			}
			if !b.reads {
				return
			}
			got := shape(entries(t, st, a.Name()))
			want := `user:$ ls | assistant:I'll run ` + "`ls`" + `.:toolUse | toolRound | user:result=a.txt
b.txt | assistant:The tool printed 2 lines. The first: "a.txt".`
			if got != want {
				t.Fatalf("session:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// flaky serves the offline model, but fails every request after the
// first ok ones with a 500.
func flaky(t *testing.T, ok int) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	off := provider.OfflineHandler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > int64(ok) {
			w.Header().Set("content-type", "application/json")
			w.WriteHeader(500)
			io.WriteString(w, `{"type":"error","error":{"type":"api_error","message":"down for the test"}}`)
			return
		}
		off.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestFailureAfterToolRound(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			url := b.url(t)
			st := open(t, url, dir)
			srv, _ := flaky(t, 1)
			cfg := provider.Config{Provider: provider.Anthropic, Model: "offline-1", BaseURL: srv.URL, APIKey: "test"}
			ran := 0
			a, err := agent.New(ctx, agent.Config{Store: st, Cwd: "/proj", Provider: cfg, Tools: []agent.Tool{lsTool(&ran)}})
			if err != nil {
				t.Fatal(err)
			}
			a.Submit(ctx, "$ ls")
			if _, err := a.Step(ctx); err == nil || !strings.Contains(err.Error(), "down for the test") {
				t.Fatalf("Step: %v, want the provider's error", err)
			}
			conv := a.Conversation()
			if len(conv) != 3 || conv[2].Blocks[0].Type != "toolResult" {
				t.Fatalf("conversation after the failure: %+v", conv)
			}
			if !b.reads {
				return
			}
			want := `user:$ ls | assistant:I'll run ` + "`ls`" + `.:toolUse | toolRound | user:result=a.txt
b.txt`
			if got := shape(entries(t, st, a.Name())); got != want {
				t.Fatalf("session:\n%s\nwant:\n%s", got, want)
			}
			// Resumed, the tool results are the conversation's end: no
			// dangling prompt, and Step sends them again.
			r, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: a.Name(), Provider: offline, Tools: []agent.Tool{lsTool(&ran)}})
			if err != nil {
				t.Fatal(err)
			}
			if r.Dangling() != nil {
				t.Fatalf("dangling %+v after tool results", r.Dangling())
			}
			reply, err := r.Step(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(lastText(reply), "The tool printed 2 lines") || ran != 1 {
				t.Fatalf("reply %q, tool ran %d times", lastText(reply), ran)
			}
		})
	}
}

func TestStepAgainAfterFailure(t *testing.T) {
	// On the null store too, a failed Step is retried from memory.
	ctx := context.Background()
	srv, n := flaky(t, 0)
	st := open(t, "null:", t.TempDir())
	cfg := provider.Config{Provider: provider.Anthropic, Model: "offline-1", BaseURL: srv.URL, APIKey: "test"}
	a, err := agent.New(ctx, agent.Config{Store: st, Provider: cfg})
	if err != nil {
		t.Fatal(err)
	}
	a.Submit(ctx, "hello")
	if _, err := a.Step(ctx); err == nil {
		t.Fatal("Step did not fail")
	}
	n.Store(-10) // the server is back
	reply, err := a.Step(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := lastText(reply); got != `Offline reply 1 to: "hello"` {
		t.Fatalf("reply %q", got)
	}
}

func TestNullKeepsConversation(t *testing.T) {
	ctx := context.Background()
	a, err := agent.New(ctx, agent.Config{Store: open(t, "null:", t.TempDir()), Provider: offline, System: "be brief"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`Offline reply 1 to: "one"`, `Offline reply 2 to: "two"`, `Offline reply 3 to: "three"`} {
		if err := a.Submit(ctx, strings.Fields("one two three")[i]); err != nil {
			t.Fatal(err)
		}
		reply, err := a.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := lastText(reply); got != want {
			t.Fatalf("turn %d: %q, want %q", i+1, got, want)
		}
	}
	if c := a.Conversation(); len(c) != 7 || c[0].Role != "system" {
		t.Fatalf("conversation: %+v", c)
	}
}

func TestResume(t *testing.T) {
	for _, b := range backends {
		if !b.reads {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			url := b.url(t)
			a, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Cwd: "/proj", Provider: offline})
			if err != nil {
				t.Fatal(err)
			}
			a.Submit(ctx, "first")
			if _, err := a.Step(ctx); err != nil {
				t.Fatal(err)
			}
			name := a.Name()

			// Without a dangling prompt: the whole conversation.
			r, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: name, Provider: offline})
			if err != nil {
				t.Fatal(err)
			}
			if r.Dangling() != nil || len(r.Conversation()) != 2 {
				t.Fatalf("dangling %+v, conversation %d", r.Dangling(), len(r.Conversation()))
			}

			// A prompt written, then the process gone before its reply.
			if err := r.Submit(ctx, "lost"); err != nil {
				t.Fatal(err)
			}
			r, err = agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: name, Provider: offline})
			if err != nil {
				t.Fatal(err)
			}
			d := r.Dangling()
			es := entries(t, open(t, url, dir), name)
			if d == nil || d.Text != "lost" || d.ID != es[2].Get("id").Str || d.ParentID != es[1].Get("id").Str {
				t.Fatalf("dangling %+v, entries %v", d, es)
			}
			if len(r.Conversation()) != 2 {
				t.Fatalf("the dangling prompt is in the conversation: %+v", r.Conversation())
			}
			// Submitting after it makes a sibling, never a merge.
			r.Submit(ctx, "again")
			reply, err := r.Step(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := lastText(reply); got != `Offline reply 2 to: "again"` {
				t.Fatalf("reply %q", got)
			}
			es = entries(t, open(t, url, dir), name)
			if len(es) != 5 || es[3].Get("parentId").Str != d.ParentID || es[4].Get("parentId").Str != es[3].Get("id").Str {
				t.Fatalf("not a sibling: %v", es)
			}
			r, err = agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: name, Provider: offline})
			if err != nil {
				t.Fatal(err)
			}
			if r.Dangling() != nil || len(r.Conversation()) != 4 {
				t.Fatalf("after the branch: dangling %+v, %d messages", r.Dangling(), len(r.Conversation()))
			}
		})
	}
}

func TestSystem(t *testing.T) {
	for _, b := range backends {
		if !b.reads {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			url := b.url(t)
			turn := func(session, system, prompt string) string {
				t.Helper()
				a, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: session, Cwd: "/p", Provider: offline, System: system})
				if err != nil {
					t.Fatal(err)
				}
				if err := a.Submit(ctx, prompt); err != nil {
					t.Fatal(err)
				}
				if _, err := a.Step(ctx); err != nil {
					t.Fatal(err)
				}
				return a.Name()
			}
			name := turn("", "be brief", "one")
			es := entries(t, open(t, url, dir), name)
			if got := shape(es); got != `system:be brief | user:one | assistant:Offline reply 1 to: "one"` {
				t.Fatalf("seeded: %s", got)
			}
			if es[0].Get("parentId").Type != gjson.Null || es[0].Get("provider").Exists() {
				t.Fatalf("system entry %s", es[0].Raw)
			}
			turn(name, "be brief", "two") // unchanged: nothing written
			turn(name, "", "three")       // none given: nothing written
			turn(name, "be long", "four") // changed: a new system entry
			got := shape(entries(t, open(t, url, dir), name))
			want := `system:be brief | user:one | assistant:Offline reply 1 to: "one" | user:two | assistant:Offline reply 2 to: "two" | user:three | assistant:Offline reply 3 to: "three" | system:be long | user:four | assistant:Offline reply 4 to: "four"`
			if got != want {
				t.Fatalf("reconciled:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestCompact(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			url := b.url(t)
			a, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Cwd: "/p", Provider: offline, System: "sys"})
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Compact(ctx, ""); !errors.Is(err, agent.ErrNothingToCompact) {
				t.Fatalf("Compact of nothing: %v", err)
			}
			for _, p := range []string{"one", "two", "three"} {
				a.Submit(ctx, p)
				if _, err := a.Step(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Compact(ctx, "keep the numbers"); err != nil {
				t.Fatal(err)
			}
			conv := a.Conversation()
			if len(conv) != 4 || conv[0].Role != "system" || !strings.HasPrefix(conv[1].Blocks[0].Text, "The conversation before this point was compacted") || conv[2].Blocks[0].Text != "three" {
				t.Fatalf("conversation after Compact: %+v", conv)
			}
			// The next request is the system prompt (sent apart, Anthropic's
			// way), the summary, the kept entries and the prompt: four
			// messages, the offline model's turn 2.
			a.Submit(ctx, "four")
			reply, err := a.Step(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := lastText(reply); got != `Offline reply 2 to: "four"` {
				t.Fatalf("reply after Compact %q", got)
			}
			if !b.reads {
				return
			}
			es := entries(t, open(t, url, dir), a.Name())
			c := es[len(es)-3]
			if c.Get("type").Str != "compaction" || c.Get("firstKeptEntryId").Str != es[5].Get("id").Str || c.Get("parentId").Str != es[6].Get("id").Str ||
				c.Get("tokensBefore").Int() <= 0 || c.Get("summary").Str == "" {
				t.Fatalf("compaction entry %s", c.Raw)
			}
			var keys []string
			c.ForEach(func(k, _ gjson.Result) bool { keys = append(keys, k.Str); return true })
			if got := strings.Join(keys, ","); got != "type,id,parentId,timestamp,summary,firstKeptEntryId,tokensBefore,provider,model,usage" {
				t.Fatalf("compaction fields %s", got)
			}
			// Resumed, the conversation is the same.
			r, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: a.Name(), Provider: offline, System: "sys"})
			if err != nil {
				t.Fatal(err)
			}
			if g, w := fmt.Sprint(r.Conversation()), fmt.Sprint(a.Conversation()); g != w {
				t.Fatalf("resumed conversation\n%s\nwant\n%s", g, w)
			}
		})
	}
}

// The helper: an embedder's process. PANTO_AGENT_HELPER=tool runs a turn
// whose tool blocks (the test kills it there); =request resumes the session
// PANTO_AGENT_SESSION and submits a prompt to a provider that never answers.
func helper() int {
	ctx := context.Background()
	st, err := store.Open(os.Getenv("PANTO_AGENT_URL"), env(os.Getenv("PANTO_AGENT_DIR")))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	out := bufio.NewWriter(os.Stdout)
	say := func(s string) { fmt.Fprintln(out, s); out.Flush() }
	block := agent.Tool{
		Spec: provider.Tool{Name: "bash", InputSchema: []byte(`{"type":"object"}`)},
		Run: func(context.Context, string) (string, error) {
			say("tool")
			time.Sleep(time.Minute)
			return "", nil
		},
	}
	cfg := agent.Config{Store: st, Cwd: "/p", Provider: offline, Tools: []agent.Tool{block}}
	if os.Getenv("PANTO_AGENT_HELPER") == "request" {
		cfg.Session = os.Getenv("PANTO_AGENT_SESSION")
		cfg.Provider = provider.Config{Provider: provider.Anthropic, Model: "m", BaseURL: os.Getenv("PANTO_AGENT_BASE"), APIKey: "k"}
	}
	a, err := agent.New(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	if cfg.Session == "" {
		a.Submit(ctx, "warm up")
		if _, err := a.Step(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		say(a.Name())
		a.Submit(ctx, "$ sleep 60")
	} else {
		a.Submit(ctx, "never answered")
	}
	_, err = a.Step(ctx)
	fmt.Fprintln(os.Stderr, "Step returned", err)
	return 3
}

// start runs the helper and returns its stdout's lines as they come.
func start(t *testing.T, url, dir string, vars ...string) (*exec.Cmd, *bufio.Scanner) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"PANTO_AGENT_URL=" + url, "PANTO_AGENT_DIR=" + dir}, vars...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewScanner(out)
}

func next(t *testing.T, sc *bufio.Scanner) string {
	t.Helper()
	if !sc.Scan() {
		t.Fatalf("the helper ended early: %v", sc.Err())
	}
	return sc.Text()
}

func TestKillDuringStep(t *testing.T) {
	for _, b := range backends {
		if !b.reads {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			url := b.url(t)

			// Killed while its tool runs: the prompt and the reply that
			// asked for the tool are there.
			cmd, sc := start(t, url, dir, "PANTO_AGENT_HELPER=tool")
			name := next(t, sc)
			if got := next(t, sc); got != "tool" {
				t.Fatalf("helper said %q", got)
			}
			cmd.Process.Kill()
			cmd.Wait()
			want := `user:warm up | assistant:Offline reply 1 to: "warm up" | user:$ sleep 60 | assistant:I'll run ` + "`sleep 60`" + `.:toolUse | toolRound`
			if got := shape(entries(t, open(t, url, dir), name)); got != want {
				t.Fatalf("after kill -9 in a tool:\n%s\nwant:\n%s", got, want)
			}

			// Killed while its request is on the wire: the prompt is there.
			sent := make(chan struct{}, 1)
			hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body) // so the server sees the client go
				sent <- struct{}{}
				select {
				case <-r.Context().Done():
				case <-time.After(time.Minute):
				}
			}))
			defer hang.Close()
			cmd, _ = start(t, url, dir, "PANTO_AGENT_HELPER=request", "PANTO_AGENT_SESSION="+name, "PANTO_AGENT_BASE="+hang.URL)
			select {
			case <-sent:
			case <-time.After(30 * time.Second):
				t.Fatal("no request came")
			}
			cmd.Process.Kill()
			cmd.Wait()
			es := entries(t, open(t, url, dir), name)
			// The tool had started (its round's mark is there): the
			// model is told its result was lost, never "not run".
			started := es[4].Get("timestamp").Str
			if got, want := shape(es[5:]), `user:result=Started at `+started+`; its result was lost: it may have run.:never answered`; got != want {
				t.Fatalf("after kill -9 mid-request:\n%s\nwant:\n%s", got, want)
			}

			// Resume works: the prompt is dangling, and a new one goes on
			// beside it, answering the tool call again.
			a, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: name, Provider: offline})
			if err != nil {
				t.Fatal(err)
			}
			if d := a.Dangling(); d == nil || d.Text != "never answered" || d.ParentID != es[4].Get("id").Str {
				t.Fatalf("dangling %+v", d)
			}
			if err := a.Submit(ctx, "again"); err != nil {
				t.Fatal(err)
			}
			reply, err := a.Step(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(lastText(reply), "The tool printed 1 lines") {
				t.Fatalf("reply %q", lastText(reply))
			}
			entries(t, open(t, url, dir), name) // fsck-clean
		})
	}
}

func TestCancelDuringTool(t *testing.T) {
	// A cancelled Step still writes the results of the round it ran (the
	// tool saw the cancellation), and says why it stopped.
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	st := open(t, "", dir)
	tool := agent.Tool{
		Spec: provider.Tool{Name: "bash", InputSchema: []byte(`{"type":"object"}`)},
		Run: func(ctx context.Context, _ string) (string, error) {
			cancel()
			<-ctx.Done()
			return "partial", ctx.Err()
		},
	}
	a, err := agent.New(context.Background(), agent.Config{Store: st, Cwd: "/p", Provider: offline, Tools: []agent.Tool{tool}})
	if err != nil {
		t.Fatal(err)
	}
	a.Submit(ctx, "$ sleep 9")
	if _, err := a.Step(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Step: %v, want context.Canceled", err)
	}
	want := `user:$ sleep 9 | assistant:I'll run ` + "`sleep 9`" + `.:toolUse | toolRound | user:result=partial
Error: context canceled`
	if got := shape(entries(t, st, a.Name())); got != want {
		t.Fatalf("session:\n%s\nwant:\n%s", got, want)
	}
}

func TestSecondWriter(t *testing.T) {
	// Two agents on one session: the one that writes second fails, and
	// its conversation does not take in what was not written.
	ctx := context.Background()
	for _, b := range backends {
		if !b.reads {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			dir := t.TempDir()
			url := b.url(t)
			a, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Cwd: "/p", Provider: offline})
			if err != nil {
				t.Fatal(err)
			}
			a.Submit(ctx, "one")
			if _, err := a.Step(ctx); err != nil {
				t.Fatal(err)
			}
			x, _ := agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: a.Name(), Provider: offline})
			y, _ := agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: a.Name(), Provider: offline})
			if err := x.Submit(ctx, "from x"); err != nil {
				t.Fatal(err)
			}
			if err := y.Submit(ctx, "from y"); !errors.Is(err, store.ErrLeafMoved) {
				t.Fatalf("second writer: %v, want store.ErrLeafMoved", err)
			}
			if n := len(y.Conversation()); n != 2 {
				t.Fatalf("the failed prompt entered the conversation: %d messages", n)
			}
		})
	}
}

func TestCompactAfterDanglingPrompt(t *testing.T) {
	// A compaction written after a prompt that got no reply (the REPL's
	// /compact keeps it): the prompt is no longer the session's last entry,
	// so it is sent, not set aside, and nothing after it is lost.
	ctx := context.Background()
	dir := t.TempDir()
	st := open(t, "", dir)
	a := answered(t, st, "one", "two")
	a.Submit(ctx, "three")
	if err := a.Compact(ctx, ""); err != nil {
		t.Fatal(err)
	}
	r, err := agent.New(ctx, agent.Config{Store: open(t, "", dir), Session: a.Name(), Provider: offline})
	if err != nil {
		t.Fatal(err)
	}
	if r.Dangling() != nil {
		t.Fatalf("dangling %+v: the compaction after it would be lost", r.Dangling())
	}
	reply, err := r.Step(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The summary and the prompt, two user messages, reach Anthropic's
	// protocol as one: the model's first turn, quoting both.
	if got := lastText(reply); !strings.HasPrefix(got, "Offline reply 1 to: ") || !strings.HasSuffix(got, `\nthree"`) {
		t.Fatalf("reply %q", got)
	}
}

func TestResumeNoSession(t *testing.T) {
	// A Session that names a file that is no panto session (a text file,
	// an empty file, another agent's log) is refused by New; it made an
	// agent with an empty conversation, whose Submit then failed (hostile
	// pass, issue 24).
	ctx := context.Background()
	dir := t.TempDir()
	st := open(t, "", dir)
	for name, body := range map[string]string{
		"text":   "root:x:0:0:root:/root:/bin/bash\n",
		"empty":  "",
		"json":   `{"a":1}` + "\n",
		"claude": `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"11111111-2222-4333-8444-555555555555","cwd":"/p","timestamp":"2026-02-10T10:00:01.000Z","message":{"role":"user","content":"hi"}}` + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(dir, name+".jsonl")
			if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			a, err := agent.New(ctx, agent.Config{Store: st, Session: f, Provider: offline})
			if err == nil {
				t.Fatalf("New of %s: no error, an agent of %d messages", name, len(a.Conversation()))
			}
			if !strings.Contains(err.Error(), "no panto session") {
				t.Fatalf("New of %s: %v", name, err)
			}
			if b, _ := os.ReadFile(f); string(b) != body {
				t.Fatalf("%s was changed: %q", name, b)
			}
		})
	}
}
