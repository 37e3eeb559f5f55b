package agents

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/panto-dev/panto/pkg/session"
)

// Codex as it changed (SPEC §16, reference/more-agents.md §4): paged
// rollouts, spawned sub-agents, forks carrying their parent's baseline.
// The fixtures are in testdata/codex-threads; the costs of the same files
// are worked by hand in testdata/script/codex_threads.txtar.

const (
	threadP = "019ca8d7-2d00-7000-8000-0000000000a1" // paged, three pages
	threadA = "019ca8d7-2d00-7000-8000-0000000000c1" // a parent
	threadF = "019ca90e-1b80-7000-8000-0000000000f1" // A forked: its first total carries A's
	threadS = "019ca945-0a00-7000-8000-0000000000d1" // a sub-agent A spawned, forked from A
)

// codexRead reads the log at path: its header, its entries' ids and
// texts, and the sum of its replies' usage.
type codexRead struct {
	h       Header
	ids     []string
	texts   []string
	replies int
	usage   session.Usage
	st      *Stats
}

func readCodex(t *testing.T, path string) (codexRead, error) {
	t.Helper()
	var r codexRead
	_, st, err := Read(fileSource(t, path), Unknown, Options{Content: true},
		func(h *Header) error { r.h = *h; return nil },
		func(e *Entry) error {
			r.ids = append(r.ids, e.ID)
			r.texts = append(r.texts, string(e.Body))
			if e.Reply != nil {
				r.replies++
				r.usage = usageOf([]Reply{{Usage: r.usage}, *e.Reply})
			}
			return nil
		})
	r.st = st
	return r, err
}

func threadFile(dir, glob string) string {
	m, _ := filepath.Glob(filepath.Join("testdata/codex-threads", dir, glob))
	if len(m) != 1 {
		panic(dir + "/" + glob + ": not one file")
	}
	return m[0]
}

// A paged rollout is one session, whichever page is named: every page's
// messages in order, the usage the advance of the thread's one counter
// (input 6000 of which 2800 cached, output 600), not each page's total
// again (1000+3000+6000 input); its origin the thread and its first page.
// Before pages were read together each page was a session of its own,
// its first total counted from zero.
func TestCodexPages(t *testing.T) {
	want := session.Usage{Input: 6000 - 2800, CacheRead: 2800, Output: 600}
	var first []string
	for _, name := range []string{"*a1.jsonl", "*a2.jsonl", "*a3.jsonl"} {
		path := threadFile("paged", name)
		r, err := readCodex(t, path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.usage != want || r.replies != 3 {
			t.Errorf("%s: %d replies, usage %+v; want 3, %+v", name, r.replies, r.usage, want)
		}
		if r.h.Origin.ID != threadP || filepath.Base(r.h.Origin.Path) != "rollout-2026-03-01T10-00-00-"+threadP+".jsonl" {
			t.Errorf("%s: origin %+v: not the thread and its first page", name, r.h.Origin)
		}
		text := strings.Join(r.texts, "\n")
		for _, q := range []string{"first page question", "page two reply", "third page question", "page three reply"} {
			if !strings.Contains(text, q) {
				t.Errorf("%s: %q not read", name, q)
			}
		}
		if r.st.Torn != 0 || len(r.st.Corrupt) != 0 {
			t.Errorf("%s: torn %d, corrupt %v", name, r.st.Torn, r.st.Corrupt)
		}
		if first == nil {
			first = r.ids
		} else if !slices.Equal(first, r.ids) {
			t.Errorf("%s: ids %v, from the first page %v", name, r.ids, first)
		}
	}
	// The first page alone (before the others were written) gives the
	// ids its entries keep: an import grows, it is not rewritten.
	dir := t.TempDir()
	b, err := os.ReadFile(threadFile("paged", "*a1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(dir, "rollout-2026-03-01T10-00-00-"+threadP+".jsonl")
	if err := os.WriteFile(alone, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := readCodex(t, alone)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ids) == 0 || !slices.Equal(r.ids, first[:len(r.ids)]) {
		t.Errorf("the first page alone: ids %v, not the start of %v", r.ids, first)
	}
	if r.usage != (session.Usage{Input: 1000, Output: 100}) {
		t.Errorf("the first page alone: usage %+v", r.usage)
	}
}

// A walk takes a paged thread's last page alone (it reads the others):
// the pages before it are passed by; another thread's pages beside them
// are its own.
func TestCodexPagesWalk(t *testing.T) {
	for _, c := range []struct {
		glob string
		log  bool
	}{
		{"*a1.jsonl", false}, {"*a2.jsonl", false}, {"*a3.jsonl", true},
		{"*b1.jsonl", false}, {"*b2.jsonl", true},
	} {
		if got := IsLogPath(threadFile("mixed", c.glob)); got != c.log {
			t.Errorf("IsLogPath(%s) = %v, want %v", c.glob, got, c.log)
		}
	}
	// Two threads in one folder: each its own pages, its own usage.
	r, err := readCodex(t, threadFile("mixed", "*b2.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if r.h.Origin.ID != "019ca8d7-2d00-7000-8000-0000000000b1" || r.usage != (session.Usage{Input: 1100, CacheRead: 400, Output: 100}) {
		t.Errorf("the other thread: origin %s, usage %+v", r.h.Origin.ID, r.usage)
	}
	if strings.Contains(strings.Join(r.texts, "\n"), "page") {
		t.Error("the other thread reads the first thread's pages")
	}
	r, err = readCodex(t, threadFile("mixed", "*a3.jsonl"))
	if err != nil || r.usage != (session.Usage{Input: 3200, CacheRead: 2800, Output: 600}) || strings.Contains(strings.Join(r.texts, "\n"), "other") {
		t.Errorf("the paged thread beside another: usage %+v, %v", r.usage, err)
	}
}

// A page missing from the middle: the thread is not read (said, exit 1),
// whichever of its pages is named; never its pages joined across the gap.
func TestCodexPageMissing(t *testing.T) {
	for _, name := range []string{"*a1.jsonl", "*a3.jsonl"} {
		_, err := readCodex(t, threadFile("missing", name))
		var pm *PageMissingError
		if !errors.As(err, &pm) || !errors.Is(err, ErrNotALog) || pm.Base != "019ca90e-1b80-7000-8000-0000000000a2" {
			t.Errorf("%s: %v; want the page missing named", name, err)
		}
	}
}

// The last page's last line torn (a writer mid-append): said, the rest
// read; the reply it would have priced has no usage (unknown).
func TestCodexPagesTorn(t *testing.T) {
	r, err := readCodex(t, threadFile("torn", "*a3.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if r.st.Torn != 18 || len(r.st.Corrupt) != 0 {
		t.Errorf("torn %d, corrupt %v; want line 18 torn", r.st.Torn, r.st.Corrupt)
	}
	if r.usage != (session.Usage{Input: 2200, CacheRead: 800, Output: 300}) || r.replies != 3 {
		t.Errorf("%d replies, usage %+v", r.replies, r.usage)
	}
}

// A fork whose first total carries its parent's (1000 input, 100 output
// of A's): its own usage is its request's (last_token_usage), so A and
// its fork cost what was billed. Before, the fork counted A's baseline
// again (input 2500, output 150).
func TestCodexForkBaseline(t *testing.T) {
	r, err := readCodex(t, threadFile("tree", "*f1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (session.Usage{Input: 1500 - 900, CacheRead: 900, Output: 50}); r.usage != want {
		t.Errorf("the fork's usage %+v, want %+v (its own, not its parent's again)", r.usage, want)
	}
	if r.h.Origin.Parent != threadA || r.h.Origin.Subagent || r.h.Origin.SubagentOf() != "" {
		t.Errorf("the fork's origin %+v: a session of its own, forked from A", r.h.Origin)
	}
}

// A spawned sub-agent: forked from A, it replays A's history (A's total
// among it), then its own counter starts again at zero (400 input, 40
// output) and advances (to 1000, 300 cached, 90): its usage is its own,
// once; it is A's sub-agent (its cost A's unless --subagents).
func TestCodexSubagent(t *testing.T) {
	r, err := readCodex(t, threadFile("tree", "*d1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (session.Usage{Input: 1000 - 300, CacheRead: 300, Output: 90}); r.usage != want {
		t.Errorf("the sub-agent's usage %+v, want %+v", r.usage, want)
	}
	if r.h.Origin.ID != threadS || r.h.Origin.Parent != threadA || !r.h.Origin.Subagent || r.h.Origin.SubagentOf() != threadA {
		t.Errorf("the sub-agent's origin %+v: not A's sub-agent", r.h.Origin)
	}
	if !strings.Contains(string(r.h.Line()), `"parent":"`+threadA+`","subagent":true}`) {
		t.Errorf("header %s: the sub-agent not said", r.h.Line())
	}
}

// A sub-agent thread that is no fork (thread_spawn, its counter from
// zero), and a review sub-agent named by forked_from_id alone.
func TestCodexSpawner(t *testing.T) {
	for _, c := range []struct{ meta, want string }{
		{`{"id":"c","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p","depth":1}}}}`, "p"},
		{`{"id":"c","parent_thread_id":"p","thread_source":"subagent"}`, "p"},
		{`{"id":"c","forked_from_id":"p","source":{"subagent":"review"}}`, "p"},
		{`{"id":"c","session_id":"root","thread_source":"subagent"}`, "root"},
		{`{"id":"c","forked_from_id":"p","source":"cli"}`, ""},
		{`{"id":"c","session_id":"c","source":"vscode"}`, ""},
	} {
		log := `{"timestamp":"2026-03-01T10:00:00.000Z","type":"session_meta","payload":` + c.meta + "}\n" +
			`{"timestamp":"2026-03-01T10:00:01.000Z","type":"turn_context","payload":{"model":"gpt-x","turn_id":"019ca8d7-2d00-7000-8000-0000000000ff"}}` + "\n" +
			`{"timestamp":"2026-03-01T10:00:02.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":400,"output_tokens":40},"last_token_usage":{"input_tokens":400,"output_tokens":40}}}}` + "\n"
		var h Header
		var u session.Usage
		_, _, err := Read(Source{Path: "x.jsonl", R: strings.NewReader(log), Size: int64(len(log))}, Codex, Options{},
			func(hh *Header) error { h = *hh; return nil },
			func(e *Entry) error {
				if e.Reply != nil {
					u = usageOf([]Reply{{Usage: u}, *e.Reply})
				}
				return nil
			})
		if err != nil || h.Origin.SubagentOf() != c.want || u != (session.Usage{Input: 400, Output: 40}) {
			t.Errorf("%s: sub-agent of %q, usage %+v, %v; want %q", c.meta, h.Origin.SubagentOf(), u, err, c.want)
		}
	}
}

func TestCodexPageName(t *testing.T) {
	for _, c := range []struct{ name, thread, page string }{
		{"rollout-2026-03-01T10-00-00-" + threadP + ".jsonl", threadP, ""},
		{"rollout-2026-03-01T11-00-00-" + threadP + "_019ca90e-1b80-7000-8000-0000000000a2.jsonl", threadP, "019ca90e-1b80-7000-8000-0000000000a2"},
		{"rollout-2026-03-01T11-00-00-" + threadP + "_2.jsonl", threadP, "2"},
		{"rollout-x.jsonl", "", ""},
		{threadP + ".jsonl", "", ""},
		{"rollout-2026-03-01T11-00-00-" + threadP + "_.jsonl", "", ""},
	} {
		thread, page, ok := codexPageName(c.name)
		if thread != c.thread || page != c.page || ok != (c.thread != "") {
			t.Errorf("codexPageName(%s) = %q, %q, %v", c.name, thread, page, ok)
		}
	}
}

// A sub-agent whose counter, started again at zero, is above its
// parent's replayed total after its first request (a short parent, a
// long first prompt): its first count is its request's (1200 input, 150
// output), not the advance over the parent's total (200, 50); the next
// is the advance of its own counter (300, 30).
func TestCodexSubagentRestartAbove(t *testing.T) {
	tok := func(ts string, in, out, lin, lout int) string {
		return `{"timestamp":"` + ts + `","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":` + itoa(in) + `,"output_tokens":` + itoa(out) + `},"last_token_usage":{"input_tokens":` + itoa(lin) + `,"output_tokens":` + itoa(lout) + `}}}}` + "\n"
	}
	log := `{"timestamp":"2026-03-01T12:00:00.000Z","type":"session_meta","payload":{"id":"` + threadS + `","forked_from_id":"` + threadA + `","source":{"subagent":{"thread_spawn":{"parent_thread_id":"` + threadA + `","depth":1}}}}}` + "\n" +
		`{"timestamp":"2026-03-01T12:00:00.010Z","type":"session_meta","payload":{"id":"` + threadA + `","source":"cli"}}` + "\n" +
		`{"timestamp":"2026-03-01T12:00:00.020Z","type":"turn_context","payload":{"model":"gpt-x","turn_id":"019ca8d7-2d00-7000-8000-0000000000c2"}}` + "\n" +
		`{"timestamp":"2026-03-01T12:00:00.030Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"parent reply"}]}}` + "\n" +
		tok("2026-03-01T12:00:00.040Z", 1000, 100, 1000, 100) +
		`{"timestamp":"2026-03-01T12:00:01.000Z","type":"turn_context","payload":{"model":"gpt-x","turn_id":"019ca945-0a00-7000-8000-0000000000d2"}}` + "\n" +
		`{"timestamp":"2026-03-01T12:00:02.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"step"}]}}` + "\n" +
		tok("2026-03-01T12:00:02.100Z", 1200, 150, 1200, 150) +
		`{"timestamp":"2026-03-01T12:00:03.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}` + "\n" +
		tok("2026-03-01T12:00:03.100Z", 1500, 180, 300, 30)
	rs, err := replies(t, []byte(log), Codex, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := usageOf(rs), (session.Usage{Input: 1500, Output: 180}); got != want {
		t.Errorf("usage %+v, want %+v (its own counter's, once)", got, want)
	}
}

// A review's findings, copied into the thread that asked for them
// (review_rollout_assistant), are no request of this thread: the reviewer's
// rollout bills them and no token count follows them here. The thread's
// cost stays known (it was unknown: a reply without usage), and its usage
// is its own token counts, once.
func TestCodexReviewOutput(t *testing.T) {
	const ts = `{"timestamp":"2026-03-01T10:00:0`
	log := ts + `0.000Z","type":"session_meta","payload":{"id":"019ca8d7-2d00-7000-8000-000000000001","source":"cli"}}` + "\n" +
		ts + `1.000Z","type":"turn_context","payload":{"model":"gpt-x"}}` + "\n" +
		ts + `2.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]}}` + "\n" +
		ts + `3.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"fixed"}]}}` + "\n" +
		ts + `4.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":400,"output_tokens":40},"last_token_usage":{"input_tokens":400,"output_tokens":40}}}}` + "\n" +
		ts + `5.000Z","type":"response_item","payload":{"type":"message","id":"review_rollout_user","role":"user","content":[{"type":"input_text","text":"<user_action> review </user_action>"}]}}` + "\n" +
		ts + `6.000Z","type":"event_msg","payload":{"type":"exited_review_mode","review_output":{"findings":[]}}}` + "\n" +
		ts + `6.000Z","type":"response_item","payload":{"type":"message","id":"review_rollout_assistant","role":"assistant","content":[{"type":"output_text","text":"Review comment: none"}]}}` + "\n" +
		ts + `7.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"}]}}` + "\n" +
		ts + `8.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"welcome"}]}}` + "\n" +
		ts + `9.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000,"output_tokens":100},"last_token_usage":{"input_tokens":600,"output_tokens":60}}}}` + "\n"
	var replies []Reply
	var texts []string
	_, _, err := Read(Source{Path: "x.jsonl", R: strings.NewReader(log), Size: int64(len(log))}, Codex, Options{Content: true}, func(*Header) error { return nil },
		func(e *Entry) error {
			if e.Reply != nil {
				replies = append(replies, *e.Reply)
				texts = append(texts, string(e.Body))
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(replies) != 3 {
		t.Fatalf("%d replies, want 3 (the review's output one of its own): %q", len(replies), texts)
	}
	for i, r := range replies {
		if !r.HasUsage {
			t.Errorf("reply %d %s has no usage: the thread's cost unknown", i, texts[i])
		}
	}
	if !strings.Contains(texts[1], "Review comment") || replies[1].Usage != (session.Usage{}) {
		t.Errorf("the review's output %s has usage %+v, want none here", texts[1], replies[1].Usage)
	}
	if u := usageOf(replies); u != (session.Usage{Input: 1000, Output: 100}) {
		t.Errorf("the thread's usage %+v, want its token counts once (1000 in, 100 out)", u)
	}
}
