package panto_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/costcmd"
	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/internal/replaycmd"
	"github.com/panto-dev/panto/pkg/session"
)

// The pages are checked in a real browser: Debian's Chromium, headless,
// loading each page from a file. scripts/test runs these when chromium is
// there (and says loudly when it is not); .ci/run installs it.

func chromium(t *testing.T) string {
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed: apt-get install chromium (./scripts/test says so; .ci/run installs it)")
	}
	return p
}

// browse runs headless Chromium on the page with extra flags (--dump-dom,
// --screenshot=…) and returns what it printed.
func browse(t *testing.T, page string, flags ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir=" + t.TempDir(), "--hide-scrollbars"}, flags...)
	cmd := exec.CommandContext(ctx, chromium(t), append(args, "file://"+page)...)
	cmd.Dir = t.TempDir()
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v", flags, err)
	}
	return out.String()
}

// console loads the page in Chromium with its log on stderr and returns
// the DOM and every message the page wrote to its console (a script's, a
// blocked script's or style's, a failed load): a page of panto has none.
func console(t *testing.T, page string) (dom string, msgs []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + page}
	cmd := exec.CommandContext(ctx, chromium(t), args...)
	cmd.Dir = t.TempDir()
	var out, errw bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errw
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v: %s", err, errw.String())
	}
	for _, l := range strings.Split(errw.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			msgs = append(msgs, l)
		}
	}
	return out.String(), msgs
}

// artifact is where a screenshot is kept for people to look at: under
// $PANTO_ARTIFACTS (scripts/test sets ./artifacts), else the system's
// temporary directory.
func artifact(t *testing.T, name string) string {
	dir := os.Getenv("PANTO_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "panto-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p, _ := filepath.Abs(filepath.Join(dir, name))
	t.Logf("screenshot: %s", p)
	return p
}

// page runs a command in this process and keeps what it printed as a page.
func page(t *testing.T, run func([]string, cli.IO) int, args ...string) string {
	var out, errw bytes.Buffer
	proc := cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errw, Getenv: func(string) string { return "" }, Cwd: t.TempDir()}
	if code := run(args, proc); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errw.String())
	}
	p := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(p, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

var titleRe = regexp.MustCompile(`<title>([^<]*)</title>`)

// TestBrowserTranscript: the page renders in a browser with the text of
// every message, its tool calls beside their results, and the costs.
func TestBrowserTranscript(t *testing.T) {
	t.Parallel()
	chromium(t)
	p := page(t, replaycmd.Run, "--format", "html", "--pricing", "internal/replay/testdata/html/models.toml", "internal/replay/testdata/html/tools.jsonl")
	dom := browse(t, p, "--dump-dom")
	if m := titleRe.FindStringSubmatch(dom); m == nil || m[1] != "panto session 019dc5ba-53f6-71a5-ab8f-b1f8709c2572" {
		t.Fatalf("title %v", m)
	}
	for _, want := range []string{"What files are here?", "I'll check.", "I should list them.", `"command": "ls -la"`, "n.txt", "Fourteen files, a.txt to n.txt.",
		"And now with another model: café é 日本", "model changed from anthropic/claude-x", "$0.006015", "$0.001935", "cost unknown (no usage reported)", "≥ $0.00795"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page in the browser lacks %q", want)
		}
	}
	browse(t, p, "--window-size=900,1400", "--screenshot="+artifact(t, "transcript.png"))
}

// TestBrowserTranscriptLayout: an imported session's page at a desktop's
// and a phone's width: a summary at the top (title, agent, models, time,
// turns, cost, the prompts), the replies' markdown rendered (headings, a
// table, code, links as text with their target, markup in them as text),
// the agent's own messages folded as such; nothing runs.
func TestBrowserTranscriptLayout(t *testing.T) {
	t.Parallel()
	chromium(t)
	p := page(t, replaycmd.Run, "--format", "html", "--pricing", "internal/replay/testdata/html/models.toml", "internal/replay/testdata/html/markdown.jsonl")
	dom := browse(t, p, "--dump-dom")
	for _, want := range []string{
		`<section class="summary" aria-label="summary">`, "<h2>Review the **parser** and tell me what `Scan` does</h2>", "<dd>claude</dd>", "<code>anthropic/claude-x</code>",
		`<time datetime="2026-04-25T17:40:16Z">2026-04-25 17:40 UTC</time> – <time datetime="2026-04-25T19:00:20Z">2026-04-25 19:00 UTC</time> (1h20m0s)`, "2 prompts, 2 replies; 3 of the agent's own messages folded", `<a href="#e-c5c5c5c5">And the index? Keep it short.</a>`,
		"<h3>Deep Analysis</h3>", "<strong>three</strong>", "<em>parallel</em>", "<code>256 KiB</code>", "<th>stage</th>",
		"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;raw&lt;/b&gt;", `<span class="target">(https://example.test/scan?a=1&amp;b=2)</span>`,
		"javascript:alert(1)", "// &lt;not a tag&gt;", `<article class="user internal" id="e-c1c1c1c1">`, "The agent's own message &lt;system-reminder&gt;",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page in the browser lacks %q", want)
		}
	}
	if strings.Contains(dom, "<script") || strings.Contains(dom, "<a href=\"javascript") {
		t.Errorf("markup of the session became the page's")
	}
	browse(t, p, "--window-size=1280,1600", "--screenshot="+artifact(t, "transcript_markdown_1280.png"))
	browse(t, p, "--window-size=390,1600", "--screenshot="+artifact(t, "transcript_markdown_390.png"))
}

// TestBrowserSubagents: a Claude Code session's page nests each subagent's
// conversation, folded, under the Task call that started it (from its
// subagents/ file, its progress lines, its sidechain lines), the
// subagent's markup shown as text; the page writes nothing to the
// browser's console (no script ran or was blocked, nothing failed).
func TestBrowserSubagents(t *testing.T) {
	t.Parallel()
	chromium(t)
	prices := filepath.Join(t.TempDir(), "models.toml")
	if err := os.WriteFile(prices, []byte("[anthropic.\"m\"]\ninput = 1\noutput = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := page(t, replaycmd.Run, "--format", "html", "--pricing", prices, "internal/agents/testdata/subagents/p/0a9a8045-53e9-44b1-83fb-aafc6e1f4f0b.jsonl")
	dom, msgs := console(t, p)
	if len(msgs) > 0 {
		t.Errorf("the page wrote to the console:\n%s", strings.Join(msgs, "\n"))
	}
	// The DOM as the browser built it: each call's block holds its result
	// and then its subagent, whose messages are articles inside it.
	calls := strings.Split(dom, "<b>Tool call</b> <code>Task</code>")
	if len(calls) != 4 {
		t.Fatalf("%d Task calls on the page, want 3", len(calls)-1)
	}
	for i, want := range [][]string{
		{"toolu_F", `<details class="subagent"><summary>The subagent's conversation (agent <code>a1</code>): 2 messages, 1 reply`, `<div class="subagent-body">`, "<article class=\"assistant\"", "Found 3 tests: &lt;script&gt;alert(1)&lt;/script&gt; is text.", "agent-a1.jsonl"},
		{"toolu_P", "(agent <code>p1</code>): 3 messages, 2 replies", "<code>Bash</code>", "42 total", "There are <strong>42</strong> lines."},
		{"toolu_S", "The subagent's conversation: 2 messages, 1 reply", "The docs are fine.", "sidechain lines"},
	} {
		part := calls[i+1]
		if j := strings.Index(part, "</details>\n</div>"); j >= 0 {
			part = part[:j] // this call's block, to the end of its subagent
		}
		for _, w := range want {
			if !strings.Contains(part, w) {
				t.Errorf("call %d (%s): its block lacks %q", i+1, want[0], w)
			}
		}
	}
	if !strings.Contains(dom, `<dd class="subagents">3 conversations (under their calls), 4 replies, cost $0.000238; with the session's, $0.000336</dd>`) {
		t.Error("the summary does not count the subagents")
	}
	if strings.Contains(dom, "<script") || strings.Contains(dom, "Something else") {
		t.Error("a subagent's markup became the page's, or a file no call names is shown")
	}
	browse(t, p, "--window-size=1280,1400", "--screenshot="+artifact(t, "transcript_subagents_1280.png"))
	browse(t, p, "--window-size=390,1400", "--screenshot="+artifact(t, "transcript_subagents_390.png"))
}

// TestBrowserCostLayout: the cost report at a desktop's and a phone's
// width: the cost is the table's second column (in the viewport of a
// phone, the rest scrolls in its box), the time axis is proportional (the
// two months between 2025-12-10 and 2026-02-10 are a gap), and a report by
// session draws a bar a session, not a day.
func TestBrowserCostLayout(t *testing.T) {
	t.Parallel()
	chromium(t)
	day := page(t, costcmd.Run, "--format", "html", "--by", "day", "--pricing", "internal/replay/testdata/html/models.toml", "internal/costcmd/testdata/gap")
	dom := browse(t, day, "--dump-dom")
	for _, want := range []string{"<thead><tr><th>day</th><th>cost</th><th>turns</th>", "2025-12-09", "2026-02-10", `class="scroll chartbox"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the report by day lacks %q", want)
		}
	}
	// The bars of 2025-12-09 and -10 are next to each other, and that of
	// 2026-02-10 is 62 days after: its x is far more than one slot away.
	xs := regexp.MustCompile(`<g class="bar"><title>(\d{4}-\d\d-\d\d):[^<]*</title><rect x="([0-9.]+)"`).FindAllStringSubmatch(dom, -1)
	if len(xs) != 3 {
		t.Fatalf("bars %q", xs)
	}
	x := func(i int) float64 { f, _ := strconv.ParseFloat(xs[i][2], 64); return f }
	if slot := x(1) - x(0); slot <= 0 || x(2)-x(1) < 50*slot {
		t.Errorf("the axis is not proportional: x %v %v %v", x(0), x(1), x(2))
	}
	browse(t, day, "--window-size=1280,900", "--screenshot="+artifact(t, "cost_gap_day_1280.png"))
	browse(t, day, "--window-size=390,900", "--screenshot="+artifact(t, "cost_gap_day_390.png"))
	sess := page(t, costcmd.Run, "--format", "html", "--by", "session", "--pricing", "internal/replay/testdata/html/models.toml", "internal/costcmd/testdata/gap")
	dom = browse(t, sess, "--dump-dom")
	if n := strings.Count(dom, `<g class="bar">`); n != 3 {
		t.Errorf("the report by session draws %d bars, want one a session (3)", n)
	}
	if strings.Contains(dom, "<b>flaky</b>") {
		t.Errorf("a title's markup became the page's")
	}
	browse(t, sess, "--window-size=390,900", "--screenshot="+artifact(t, "cost_gap_session_390.png"))
}

// TestBrowserAttack: a session made to attack its page (markup, scripts,
// event handlers, javascript: links, a closing style or details tag,
// frames, invalid UTF-8, in the user's text, a tool's input and output,
// thinking, names of models and tools and the cwd) shows every payload as
// text and runs none: each payload would change the title or the DOM if
// it ran, and neither changed.
func TestBrowserAttack(t *testing.T) {
	t.Parallel()
	chromium(t)
	payloads := []string{
		`<script>document.title='PWNED';document.documentElement.setAttribute('data-pwned','1')</script>`,
		`<img src=x onerror="document.title='PWNED'">`,
		`</style><script>document.title='PWNED'</script>`,
		`</details></pre><svg onload="document.title='PWNED'"></svg>`,
		`<a id="jslink" href="javascript:document.title='PWNED'">click</a>`,
		`<iframe srcdoc="<script>parent.document.title='PWNED'</script>"></iframe>`,
		`<meta http-equiv="refresh" content="0;url=javascript:document.title='PWNED'">`,
		"INVALID-UTF8",
	}
	attack := strings.Join(payloads, " ")
	str := func(s string) string { return string(rawjson.AppendString(nil, s)) }
	var b []byte
	b = session.Header{ID: "019dc5ba-53f6-71a5-ab8f-b1f8709c2572", Timestamp: "2026-04-25T17:40:15.990Z", Cwd: "/tmp/" + attack}.AppendLine(b)
	b = session.Entry{ID: "a1a1a1a1", Timestamp: "2026-04-25T17:40:16.000Z", Provider: "p", Model: attack,
		Message: []byte(`{"role":"user","content":[{"type":"text","text":` + str(attack) + `}]}`)}.AppendLine(b)
	b = session.Entry{ID: "b2b2b2b2", ParentID: "a1a1a1a1", Timestamp: "2026-04-25T17:40:18.000Z",
		Message: []byte(`{"role":"assistant","content":[{"type":"thinking","thinking":` + str(attack) + `},{"type":"text","text":` + str(attack) + `},` +
			`{"type":"toolUse","id":"t1","name":` + str(attack) + `,"input":` + str(`{"command":`+str(attack)+`}`) + `}],"provider":"p","model":` + str(attack) + `,"stopReason":"toolUse","usage":{"input":1,"output":1}}`)}.AppendLine(b)
	b = session.Entry{ID: "c3c3c3c3", ParentID: "b2b2b2b2", Timestamp: "2026-04-25T17:40:19.000Z", Provider: "p", Model: "m",
		Message: []byte(`{"role":"user","content":[{"type":"toolResult","toolUseId":"t1","content":` + str(attack) + `},{"type":"text","text":` + str(attack) + `}]}`)}.AppendLine(b)
	b = bytes.ReplaceAll(b, []byte("INVALID-UTF8"), []byte("caf\xc3\xa9 \xff\xfe"))
	src := filepath.Join(t.TempDir(), "attack.jsonl")
	if err := os.WriteFile(src, b, 0o600); err != nil {
		t.Fatal(err)
	}
	p := page(t, replaycmd.Run, "--format", "html", src)
	raw, _ := os.ReadFile(p)
	if bytes.Contains(raw, []byte("<script")) || bytes.Contains(raw, []byte("\xff")) {
		t.Fatal("the page holds a script tag or an invalid byte")
	}
	dom := browse(t, p, "--dump-dom")
	if m := titleRe.FindStringSubmatch(dom); m == nil || m[1] != "panto session 019dc5ba-53f6-71a5-ab8f-b1f8709c2572" {
		t.Fatalf("the title changed: %v", m)
	}
	for _, ran := range []string{`data-pwned="1"`, "<img", "<svg onload", "<iframe", `<a id="jslink"`, "<script", `<meta http-equiv="refresh"`} {
		if strings.Contains(dom, ran) {
			t.Errorf("a payload became part of the page: %q is in the DOM", ran)
		}
	}
	// Each payload is there as text, in every place it was put: the cwd,
	// the prompt, the stamps, the thinking, the reply, the tool's name,
	// input and result.
	for _, pl := range payloads[:len(payloads)-1] {
		esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(pl)
		if n := strings.Count(dom, esc); n < 7 {
			t.Errorf("payload %q shows as text %d times, want at least 7", pl, n)
		}
	}
	if !strings.Contains(dom, "café \uFFFD") {
		t.Error("the invalid bytes do not show as a replacement character")
	}
	browse(t, p, "--window-size=900,1400", "--screenshot="+artifact(t, "attack.png"))
}

// TestBrowserCostReport: the cost report renders with its numbers, its
// chart, and unknown costs marked as such.
func TestBrowserCostReport(t *testing.T) {
	t.Parallel()
	chromium(t)
	p := page(t, costcmd.Run, "--format", "html", "--by", "day", "--pricing", "internal/replay/testdata/html/models.toml", "internal/replay/testdata/html/tools.jsonl")
	dom := browse(t, p, "--dump-dom")
	for _, want := range []string{"Cost by day", "2026-04-25", "<svg", "anthropic/claude-x", "openai/gpt-x", "1,710", "≥ $0.008", "unknown"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the report in the browser lacks %q", want)
		}
	}
	browse(t, p, "--window-size=900,700", "--screenshot="+artifact(t, "cost.png"))
}
