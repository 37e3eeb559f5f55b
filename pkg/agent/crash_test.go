package agent_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/panto-dev/panto/internal/pgtest"
	"github.com/panto-dev/panto/pkg/agent"
	"github.com/panto-dev/panto/pkg/provider"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
	"github.com/tidwall/gjson"
)

// watched is a store that tells its hook of every batch before writing it.
type watched struct {
	store.Store
	hook func(msgs []store.Msg)
}

func (w *watched) Append(ctx context.Context, name string, msgs []store.Msg, o store.AppendOptions) (*store.Result, error) {
	w.hook(msgs)
	return w.Store.Append(ctx, name, msgs, o)
}

func isMark(msgs []store.Msg) bool {
	for _, m := range msgs {
		if m.Type == session.TypeToolRound {
			return true
		}
	}
	return false
}

func hasResults(msgs []store.Msg) bool {
	for _, m := range msgs {
		if m.Role == "user" && strings.Contains(string(m.Raw), `"type":"toolResult"`) {
			return true
		}
	}
	return false
}

// effect counts the runs of the tests' deploy tool: one line each in the
// file effects.
func effect(dir string) {
	f, err := os.OpenFile(filepath.Join(dir, "effects"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		panic(err)
	}
	f.WriteString("deployed\n")
	f.Close()
}

func effects(t *testing.T, dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "effects"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func deployTool(dir string, run func() (string, error)) agent.Tool {
	return agent.Tool{
		Spec: provider.Tool{Name: "bash", InputSchema: []byte(`{"type":"object"}`)},
		Run: func(context.Context, string) (string, error) {
			effect(dir)
			return run()
		},
	}
}

// roundHelper is an embedder's process stopped at one point of a tool
// round (PANTO_AGENT_STOP), where the test kills it with SIGKILL: "mark"
// before the round's mark is written, "tool" while the tool runs, "ran"
// after it finished (its result not written), "result" while its result
// (32 MiB) is written, "answered" after the result was written (the
// follow-up reply not written); "prompt" is a crash before the round, its
// prompt written, its reply not. It says the session's id first.
func roundHelper() int {
	ctx := context.Background()
	dir := os.Getenv("PANTO_AGENT_DIR")
	st, err := store.Open(os.Getenv("PANTO_AGENT_URL"), env(dir))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	out := bufio.NewWriter(os.Stdout)
	say := func(s string) { fmt.Fprintln(out, s); out.Flush() }
	stop := os.Getenv("PANTO_AGENT_STOP")
	halt := func(s string) { say(s); time.Sleep(time.Minute) } // the test kills it here
	replies := 0
	w := &watched{Store: st, hook: func(msgs []store.Msg) {
		switch {
		case stop == "mark" && isMark(msgs):
			halt("mark")
		case stop == "ran" && hasResults(msgs):
			halt("ran")
		case stop == "result" && hasResults(msgs):
			say("writing") // and writes: the test kills it meanwhile
		case store.HasReply(msgs):
			if replies++; replies == 2 && (stop == "answered" || stop == "prompt") {
				halt(stop)
			}
		}
	}}
	tool := deployTool(dir, func() (string, error) {
		switch stop {
		case "tool":
			halt("tool")
		case "result":
			return strings.Repeat("x", 32<<20), nil
		}
		return "deployed", nil
	})
	a, err := agent.New(ctx, agent.Config{Store: w, Cwd: "/p", Provider: offline, System: "sys-A", Tools: []agent.Tool{tool}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	say(a.ID())           // before the first reply: a service stores it first
	if stop == "prompt" { // a turn first, so that the next prompt is written before its request
		a.Submit(ctx, "hi")
		if _, err := a.Step(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	}
	if err := a.Submit(ctx, "$ deploy --prod"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	_, err = a.Step(ctx)
	say(fmt.Sprint("Step returned ", err))
	time.Sleep(time.Minute)
	return 3
}

// validOrder fails when a system message, or anything but the results,
// comes between a reply's tool calls and their results: what no provider
// accepts.
func validOrder(t *testing.T, conv []provider.Message) {
	t.Helper()
	for k, m := range conv {
		if m.Role != "assistant" || len(toolCalls(m)) == 0 || k == len(conv)-1 {
			continue
		}
		next := conv[k+1]
		answered := map[string]bool{}
		for _, b := range next.Blocks {
			if b.Type == "toolResult" {
				answered[b.ID] = true
			}
		}
		for _, id := range toolCalls(m) {
			if next.Role != "user" || !answered[id] {
				t.Fatalf("message %d answers no call %s of message %d: %+v", k+1, id, k, next)
			}
		}
	}
}

func toolCalls(m provider.Message) []string {
	var ids []string
	for _, b := range m.Blocks {
		if b.Type == "toolUse" {
			ids = append(ids, b.ID)
		}
	}
	return ids
}

func TestKillInToolRound(t *testing.T) {
	// A real process killed at each point of a tool round, then resumed
	// with a changed system prompt: the pending calls and whether they
	// started are right, nothing runs again unless asked, the session is
	// fsck-clean and the conversation stays one every provider accepts.
	for _, b := range backends {
		if !b.reads {
			continue
		}
		for _, stop := range []string{"prompt", "mark", "tool", "ran", "result", "answered"} {
			t.Run(b.name+"/"+stop, func(t *testing.T) {
				ctx := context.Background()
				dir := t.TempDir()
				url := b.url(t)
				cmd, sc := start(t, url, dir, "PANTO_AGENT_HELPER=round", "PANTO_AGENT_STOP="+stop)
				id := next(t, sc)
				if !session.IsUUID(id) {
					t.Fatalf("ID() before the first reply: %q", id)
				}
				said := next(t, sc)
				if want := map[string]string{"result": "writing"}[stop]; said != stop && said != want {
					t.Fatalf("helper said %q", said)
				}
				if stop == "result" && b.name == "files" {
					// Kill it in the middle of its write when it can be
					// caught there: once the file grows.
					files, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", id+".jsonl"))
					if len(files) == 1 {
						fi, _ := os.Stat(files[0])
						for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
							if now, err := os.Stat(files[0]); err != nil || now.Size() != fi.Size() {
								break
							}
						}
					}
				}
				cmd.Process.Kill()
				cmd.Wait()
				ran := effects(t, dir)
				if before := stop == "mark" || stop == "prompt"; before && ran != 0 || !before && ran != 1 {
					t.Fatalf("the tool ran %d times before the kill", ran)
				}

				// Resumed by a prefix of its id, with another system prompt.
				tool := deployTool(dir, func() (string, error) { return "deployed again", nil })
				a, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: id[:13], Provider: offline, System: "sys-B", Tools: []agent.Tool{tool}})
				if err != nil {
					t.Fatal(err)
				}
				if a.ID() != id || !strings.Contains(a.Name(), id) {
					t.Fatalf("ID() %q, Name() %q: want the full id %s", a.ID(), a.Name(), id)
				}
				p := a.Pending()
				switch {
				case stop == "prompt":
					if d := a.Dangling(); len(p) != 0 || d == nil || d.Text != "$ deploy --prod" {
						t.Fatalf("pending %+v, dangling %+v", p, d)
					}
				case stop == "answered" || stop == "result" && len(p) == 0:
					if len(p) != 0 {
						t.Fatalf("pending %+v after the results were written", p)
					}
					t.Logf("the kill came after the write")
				case len(p) != 1 || p[0].Name != "bash" || !strings.Contains(string(p[0].Input), "deploy --prod"):
					t.Fatalf("pending %+v", p)
				case stop == "mark" && !p[0].Started.IsZero():
					t.Fatalf("a call killed before its round's mark started at %v", p[0].Started)
				case stop != "mark" && p[0].Started.IsZero():
					t.Fatalf("a call that ran is told as never started")
				}
				if len(p) > 0 {
					if _, err := a.Step(ctx); !errors.Is(err, agent.ErrPending) {
						t.Fatalf("Step with pending calls: %v, want agent.ErrPending", err)
					}
					if effects(t, dir) != ran {
						t.Fatal("Step ran a pending call again")
					}
				}
				var result string
				switch {
				case stop == "prompt":
					if err := a.Submit(ctx, a.Dangling().Text); err != nil { // sent again, after the new system prompt
						t.Fatal(err)
					}
				case len(p) == 0:
				case stop == "mark":
					if err := a.RunPending(ctx); err != nil { // asked: it runs
						t.Fatal(err)
					}
					result = "deployed again"
					ran++
				case stop == "ran":
					if err := a.ResolvePending(ctx, map[string]string{p[0].ID: "deployed (told by the user)"}); err != nil {
						t.Fatal(err)
					}
					result = "deployed (told by the user)"
				default:
					if err := a.ResolvePending(ctx, nil); err != nil {
						t.Fatal(err)
					}
					result = "Started at " + session.Timestamp(p[0].Started) + "; its result was lost: it may have run."
				}
				if effects(t, dir) != ran {
					t.Fatalf("the tool ran %d times, want %d", effects(t, dir), ran)
				}
				if _, err := a.Step(ctx); err != nil {
					t.Fatal(err)
				}
				if stop == "prompt" && effects(t, dir) != 1 {
					t.Fatalf("the prompt sent again ran the tool %d times", effects(t, dir))
				}
				validOrder(t, a.Conversation())
				es := entries(t, open(t, url, dir), a.Name()) // fsck-clean
				got := shape(es)
				if result != "" && !strings.Contains(got, "user:result="+result+" | system:sys-B | assistant:") {
					t.Fatalf("session:\n%s\nwant the result %q, then the new system prompt", got, result)
				}
				if !strings.Contains(got, "| system:sys-B |") || strings.Contains(got, "toolUse | system") || strings.Contains(got, "toolRound | system") {
					t.Fatalf("session:\n%s", got)
				}
				// Resumed again: nothing pending, nothing dangling.
				r, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: id, Provider: offline, System: "sys-B"})
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Pending()) != 0 || r.Dangling() != nil {
					t.Fatalf("pending %+v, dangling %+v", r.Pending(), r.Dangling())
				}
			})
		}
	}
}

func TestServerRestart(t *testing.T) {
	// A service's agent and store live through two restarts of their
	// server: one between turns, one while a tool runs. The call that
	// meets the dead connection fails as the store being unreachable; the
	// next one works, and nothing is lost or run twice.
	ctx := context.Background()
	srv := pgtest.Own(t) // its own: restarting the shared one fails other packages' tests
	restart := func(t *testing.T) {
		t.Helper()
		if err := srv.Ctl("restart -m fast"); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	st := open(t, srv.URL, dir)
	ran := 0
	tool := agent.Tool{
		Spec: provider.Tool{Name: "bash", InputSchema: []byte(`{"type":"object"}`)},
		Run: func(context.Context, string) (string, error) {
			ran++
			restart(t) // the store fails while the tool runs
			return "deployed", nil
		},
	}
	a, err := agent.New(ctx, agent.Config{Store: st, Cwd: "/p", Provider: offline, Tools: []agent.Tool{tool}})
	if err != nil {
		t.Fatal(err)
	}
	a.Submit(ctx, "one")
	if _, err := a.Step(ctx); err != nil {
		t.Fatal(err)
	}
	restart(t)
	if err := a.Submit(ctx, "two"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("the first call after a restart: %v, want store.ErrUnavailable", err)
	}
	if err := a.Submit(ctx, "two"); err != nil {
		t.Fatalf("the next call: %v", err)
	}
	if _, err := a.Step(ctx); err != nil {
		t.Fatal(err)
	}
	// The tool's results cannot be written: they are held, and the next
	// Step writes them and goes on.
	a.Submit(ctx, "$ deploy")
	if _, err := a.Step(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Step while the server restarted: %v, want store.ErrUnavailable", err)
	}
	if c := a.Conversation(); c[len(c)-1].Blocks[0].Text != "deployed" {
		t.Fatalf("the results are not held: %+v", c[len(c)-1])
	}
	reply, err := a.Step(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ran != 1 || !strings.HasPrefix(lastText(reply), "The tool printed 1 lines") {
		t.Fatalf("tool ran %d times, reply %q", ran, lastText(reply))
	}
	got := shape(entries(t, st, a.Name()))
	want := `user:one | assistant:Offline reply 1 to: "one" | user:two | assistant:Offline reply 2 to: "two" | user:$ deploy | assistant:I'll run ` + "`deploy`" + `.:toolUse | toolRound | user:result=deployed | assistant:The tool printed 1 lines. The first: "deployed".`
	if got != want {
		t.Fatalf("session:\n%s\nwant:\n%s", got, want)
	}
}

// failing fails every Append whose batch hook says so.
type failing struct {
	store.Store
	fail func(msgs []store.Msg) bool
}

func (f *failing) Append(ctx context.Context, name string, msgs []store.Msg, o store.AppendOptions) (*store.Result, error) {
	if f.fail(msgs) {
		return nil, store.Mark(errors.New("injected: the store failed"), store.ErrUnavailable)
	}
	return f.Store.Append(ctx, name, msgs, o)
}

func TestStoreFailsInRound(t *testing.T) {
	// The store fails to write a round's results (hostile #2): they are
	// held, the next Step writes them and goes on, the tool ran once; a
	// process that dies instead leaves calls told as started. The store
	// fails to write the round's mark: the tool never runs, and the call
	// is pending, never started.
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			url := b.url(t)
			down := false
			st := &failing{Store: open(t, url, dir), fail: func(msgs []store.Msg) bool { return down && hasResults(msgs) }}
			ran := 0
			tool := deployTool(dir, func() (string, error) { ran++; down = true; return "paid 100 EUR", nil })
			a, err := agent.New(ctx, agent.Config{Store: st, Cwd: "/p", Provider: offline, Tools: []agent.Tool{tool}})
			if err != nil {
				t.Fatal(err)
			}
			a.Submit(ctx, "$ pay")
			if _, err := a.Step(ctx); !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("Step: %v", err)
			}
			if b.reads {
				// Seen from another process now: started, result lost.
				r, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: a.ID(), Provider: offline})
				if err != nil {
					t.Fatal(err)
				}
				if p := r.Pending(); len(p) != 1 || p[0].Started.IsZero() {
					t.Fatalf("pending %+v: want one call, started", p)
				}
			}
			down = false
			reply, err := a.Step(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ran != 1 || lastText(reply) != `The tool printed 1 lines. The first: "paid 100 EUR".` {
				t.Fatalf("ran %d, reply %q", ran, lastText(reply))
			}
			if b.reads {
				got := shape(entries(t, open(t, url, dir), a.Name()))
				if want := `user:$ pay | assistant:I'll run ` + "`pay`" + `.:toolUse | toolRound | user:result=paid 100 EUR | assistant:The tool printed 1 lines. The first: "paid 100 EUR".`; got != want {
					t.Fatalf("session:\n%s\nwant:\n%s", got, want)
				}
			}

			// The mark cannot be written: nothing runs.
			st.fail = func(msgs []store.Msg) bool { return isMark(msgs) }
			a.Submit(ctx, "$ pay again")
			if _, err := a.Step(ctx); !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("Step: %v", err)
			}
			if p := a.Pending(); ran != 1 || len(p) != 1 || !p[0].Started.IsZero() {
				t.Fatalf("ran %d, pending %+v: want one call never started", ran, p)
			}
			if _, err := a.Step(ctx); !errors.Is(err, agent.ErrPending) {
				t.Fatalf("Step: %v, want agent.ErrPending", err)
			}
			st.fail = func([]store.Msg) bool { return false }
			if err := a.ResolvePending(ctx, map[string]string{"nope": "x"}); err == nil {
				t.Fatal("ResolvePending took an id no call has")
			}
			if err := a.ResolvePending(ctx, nil); err != nil {
				t.Fatal(err)
			}
			c := a.Conversation()
			if got := c[len(c)-1].Blocks[0].Text; got != "Not run: this tool call never started." {
				t.Fatalf("result %q", got)
			}
			if _, err := a.Step(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestDanglingPrompts(t *testing.T) {
	// A dangling prompt sent again as it is stays one entry; another
	// prompt is its sibling, also when it is the session's root (it was
	// merged with it, hostile #14); Dangling() is nil once a reply came
	// (it stayed, seed audit F5).
	for _, b := range backends {
		if !b.reads {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			url := b.url(t)
			st := open(t, url, dir)
			name, err := st.NewName("/p")
			if err != nil {
				t.Fatal(err)
			}
			user := session.TextMessage("user", "only prompt")
			if _, err := st.Append(ctx, name, []store.Msg{{Raw: user, Role: "user"}}, store.AppendOptions{Provider: "offline", Model: "offline-1", AllowEmpty: true, Cwd: "/p"}); err != nil {
				t.Fatal(err)
			}
			a, err := agent.New(ctx, agent.Config{Store: st, Session: name, Provider: offline})
			if err != nil {
				t.Fatal(err)
			}
			if d := a.Dangling(); d == nil || d.Text != "only prompt" || d.ParentID != "" {
				t.Fatalf("dangling %+v", d)
			}
			a.Submit(ctx, "second")
			reply, err := a.Step(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := lastText(reply); got != `Offline reply 1 to: "second"` {
				t.Fatalf("reply %q: the dangling root was sent too", got)
			}
			if a.Dangling() != nil {
				t.Fatalf("Dangling() %+v after a reply", a.Dangling())
			}
			es := entries(t, st, name) // fsck-clean: a root beside a root prompt
			if es[1].Get("parentId").Type != gjson.Null || es[2].Get("parentId").Str != es[1].Get("id").Str {
				t.Fatalf("second prompt not a root sibling: %s", shape(es))
			}

			// Sent again as it is: one entry.
			a.Submit(ctx, "third")
			r, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: name, Provider: offline})
			if err != nil {
				t.Fatal(err)
			}
			if d := r.Dangling(); d == nil || d.Text != "third" {
				t.Fatalf("dangling %+v", d)
			}
			r.Submit(ctx, "third")
			if _, err := r.Step(ctx); err != nil {
				t.Fatal(err)
			}
			if got := shape(entries(t, st, name)); strings.Count(got, "user:third") != 1 || r.Dangling() != nil {
				t.Fatalf("session %s, dangling %+v", got, r.Dangling())
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	// New refuses what no write could go on (hostile #10), with the
	// reason; it made an agent whose Submit then failed.
	ctx := context.Background()
	dir := t.TempDir()
	st := open(t, "", dir)
	a := answered(t, st, "q1", "q2")
	good, err := os.ReadFile(a.Name())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	pi := `{"type":"session","version":3,"id":"7a2c3b9e-1b7d-4c1e-9a57-3d1f0b2c4e5b","timestamp":"2026-03-02T10:00:00.000Z","cwd":"/u"}
{"type":"message","id":"10000001","parentId":null,"timestamp":"2026-03-02T10:00:01.000Z","message":{"role":"user","content":"first","timestamp":1}}
`
	for name, c := range map[string]struct{ body, want string }{
		"mid":    {lines[0] + lines[1] + "garbage{\n" + strings.Join(lines[2:], ""), "line 3 is not valid JSON, and entries follow it: run panto-fsck"},
		"v2":     {strings.Replace(string(good), `"version":1`, `"version":2`, 1), "is format version 2 (a newer panto's, or another agent's log)"},
		"pi":     {pi, "is format version 3 (a newer panto's, or another agent's log)"},
		"header": {string(good) + lines[0], "a second session header at line 6: run panto-fsck"},
	} {
		t.Run(name, func(t *testing.T) {
			f := filepath.Join(dir, name+".jsonl")
			if err := os.WriteFile(f, []byte(c.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := agent.New(ctx, agent.Config{Store: st, Session: f, Provider: offline})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New: %v, want %q", err, c.want)
			}
		})
	}
	// A torn tail is no damage: the next write cuts it.
	f := filepath.Join(dir, "torn.jsonl")
	os.WriteFile(f, append(good, `{"type":"message","id":"dea`...), 0o600)
	if _, err := agent.New(ctx, agent.Config{Store: st, Session: f, Provider: offline}); err != nil {
		t.Fatalf("a torn tail: %v", err)
	}
}

func TestNames(t *testing.T) {
	// ID() from New on, on every store; a session resumed by a prefix is
	// named by its full id, so a later session sharing the prefix changes
	// nothing (hostile #11).
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			url := b.url(t)
			a, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Cwd: "/p", Provider: offline})
			if err != nil {
				t.Fatal(err)
			}
			id := a.ID()
			if !session.IsUUID(id) || a.Name() != "" {
				t.Fatalf("ID() %q, Name() %q before the first reply", id, a.Name())
			}
			a.Submit(ctx, "one")
			if _, err := a.Step(ctx); err != nil {
				t.Fatal(err)
			}
			if a.ID() != id || !strings.Contains(a.Name(), id) {
				t.Fatalf("ID() %q, Name() %q", a.ID(), a.Name())
			}
			if !b.reads {
				return
			}
			r, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: id[:8], Provider: offline})
			if err != nil {
				t.Fatal(err)
			}
			if r.Name() != a.Name() || r.ID() != id {
				t.Fatalf("resumed by %s: Name() %q, ID() %q", id[:8], r.Name(), r.ID())
			}
			c, _ := agent.New(ctx, agent.Config{Store: open(t, url, dir), Cwd: "/p", Provider: offline})
			c.Submit(ctx, "a teammate's session")
			if _, err := c.Step(ctx); err != nil {
				t.Fatal(err)
			}
			if c.ID()[:8] == id[:8] { // two sessions started in the same ~65 s
				if _, err := agent.New(ctx, agent.Config{Store: open(t, url, dir), Session: id[:8], Provider: offline}); !errors.Is(err, store.ErrAmbiguousID) {
					t.Fatalf("an ambiguous prefix: %v", err)
				}
			}
			if err := r.Submit(ctx, "two"); err != nil {
				t.Fatalf("the agent resumed by a prefix: %v", err)
			}
		})
	}
}

// BenchmarkToolRound measures a Step with one tool round on the file
// store: the prompt, the reply, the round's mark, the results, the reply
// after them (four appends, each fsynced, and two offline requests).
func BenchmarkToolRound(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	st, err := store.Open("", env(dir))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	tool := agent.Tool{Spec: provider.Tool{Name: "bash", InputSchema: []byte(`{"type":"object"}`)}, Run: func(context.Context, string) (string, error) { return "ok", nil }}
	a, err := agent.New(ctx, agent.Config{Store: st, Cwd: "/b", Provider: offline, Tools: []agent.Tool{tool}})
	if err != nil {
		b.Fatal(err)
	}
	a.Submit(ctx, "hi")
	if _, err := a.Step(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		a.Submit(ctx, "$ true")
		if _, err := a.Step(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func TestToolPanics(t *testing.T) {
	// A tool that panics: its result says so, and the session goes on (it
	// took the process down; seed audit F11).
	ctx := context.Background()
	st := open(t, "", t.TempDir())
	tool := agent.Tool{Spec: provider.Tool{Name: "bash", InputSchema: []byte(`{"type":"object"}`)}, Run: func(context.Context, string) (string, error) { panic("boom") }}
	a, err := agent.New(ctx, agent.Config{Store: st, Cwd: "/p", Provider: offline, Tools: []agent.Tool{tool}})
	if err != nil {
		t.Fatal(err)
	}
	a.Submit(ctx, "$ explode")
	if _, err := a.Step(ctx); err != nil {
		t.Fatal(err)
	}
	if got := shape(entries(t, st, a.Name())); !strings.Contains(got, "toolRound | user:result=Error: the tool panicked: boom | assistant:") {
		t.Fatalf("session %s", got)
	}
}

func TestAddSystemWhilePending(t *testing.T) {
	// AddSystem with calls pending waits for their results: it wrote the
	// system entry between the call and its result, what no provider
	// takes (orphanToolUse).
	ctx := context.Background()
	dir := t.TempDir()
	st := &failing{Store: open(t, "", dir), fail: isMark}
	tool := deployTool(dir, func() (string, error) { return "ok", nil })
	a, err := agent.New(ctx, agent.Config{Store: st, Cwd: "/p", Provider: offline, Tools: []agent.Tool{tool}})
	if err != nil {
		t.Fatal(err)
	}
	a.Submit(ctx, "$ deploy")
	if _, err := a.Step(ctx); !errors.Is(err, store.ErrUnavailable) || len(a.Pending()) != 1 {
		t.Fatalf("Step: %v, pending %+v", err, a.Pending())
	}
	st.fail = func([]store.Msg) bool { return false }
	if err := a.AddSystem(ctx, "be careful"); err != nil {
		t.Fatal(err)
	}
	if err := a.RunPending(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Step(ctx); err != nil {
		t.Fatal(err)
	}
	validOrder(t, a.Conversation())
	if got := shape(entries(t, st, a.Name())); !strings.Contains(got, "toolRound | user:result=ok | system:be careful | assistant:") {
		t.Fatalf("session %s", got)
	}
}
