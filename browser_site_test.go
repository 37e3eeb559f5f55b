package panto_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/internal/replaycmd"
)

// TestBrowserSite: panto-replay --site writes an index whose one script
// (the filter box, times in the reader's zone) runs under the page's CSP,
// allowed by its hash, and nothing a log holds runs: a Claude Code
// session whose prompt and directory are attacks is listed with them as
// text. Times are shown in the reader's zone on the index and the
// session's page (the browser runs in Asia/Tokyo: 10:20 UTC is 19:20
// there), by the pages' one script each. Screenshots at 1280 and 390 px.
func TestBrowserSite(t *testing.T) {
	chromium(t)
	t.Setenv("TZ", "Asia/Tokyo") // the browser's zone: UTC+9, no summer time
	home := t.TempDir()
	attack := `<script>document.title='PWNED';document.documentElement.setAttribute('data-pwned','1')</script><img src=x onerror="document.title='PWNED'">`
	str := func(s string) string { return string(rawjson.AppendString(nil, s)) }
	// The images: a png shown; an SVG that would run a script, bad
	// base64, a png named a jpeg, a gif over 1 MiB, and a data: URL's
	// breakout, each named and not shown.
	img := func(media, data string) string {
		return `{"type":"image","source":{"type":"base64","media_type":` + str(media) + `,"data":` + str(data) + `}}`
	}
	images := strings.Join([]string{img("image/png", sitePNG), img("image/svg+xml", siteSVG), img("image/png", `x" onerror="document.title='PWNED'`),
		img("image/jpeg", sitePNG), img("image/gif", strings.Repeat("R0lG", 400_000)), img(`image/png;base64,AAAA" onerror="document.title='PWNED'`, sitePNG)}, ",")
	cwd := "/p/" + attack
	dir := filepath.Join(home, ".claude", "projects", "-p-attack")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	log := `{"parentUuid":null,"cwd":` + str(cwd) + `,"sessionId":"0a9a8045-53e9-44b1-83fb-aafc6e1f4f0c","type":"user","uuid":"u1","timestamp":"2026-02-10T10:20:00.000Z","message":{"role":"user","content":` + str(attack) + `}}
{"parentUuid":"u1","cwd":` + str(cwd) + `,"sessionId":"0a9a8045-53e9-44b1-83fb-aafc6e1f4f0c","type":"assistant","uuid":"u2","timestamp":"2026-02-10T10:20:01.000Z","requestId":"r1","message":{"id":"m1","type":"message","role":"assistant","model":"claude-opus-4-6","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":1000,"output_tokens":100}}}
{"parentUuid":"u2","cwd":` + str(cwd) + `,"sessionId":"0a9a8045-53e9-44b1-83fb-aafc6e1f4f0c","type":"user","uuid":"u3","timestamp":"2026-02-10T10:20:02.000Z","message":{"role":"user","content":[{"type":"text","text":"images"},` + images + `]}}
`
	// And 500 entries more, each an attack too: the session is split,
	// 500 entries a page.
	parent := "u3"
	for i := range 250 {
		u, a := fmt.Sprintf("x%d", i), fmt.Sprintf("y%d", i)
		log += `{"parentUuid":"` + parent + `","cwd":` + str(cwd) + `,"sessionId":"0a9a8045-53e9-44b1-83fb-aafc6e1f4f0c","type":"user","uuid":"` + u + `","timestamp":"2026-02-10T10:20:02.000Z","message":{"role":"user","content":` + str(fmt.Sprintf("more %d %s", i, attack)) + `}}
{"parentUuid":"` + u + `","cwd":` + str(cwd) + `,"sessionId":"0a9a8045-53e9-44b1-83fb-aafc6e1f4f0c","type":"assistant","uuid":"` + a + `","timestamp":"2026-02-10T10:20:02.000Z","requestId":"r` + a + `","message":{"id":"m` + a + `","type":"message","role":"assistant","model":"claude-opus-4-6","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":1}}}
`
		parent = a
	}
	if err := os.WriteFile(filepath.Join(dir, "0a9a8045-53e9-44b1-83fb-aafc6e1f4f0c.jsonl"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(t.TempDir(), "site")
	env := map[string]string{"HOME": home, "PANTO_SESSION_DIR": filepath.Join(home, "sessions"), "XDG_CONFIG_HOME": filepath.Join(home, ".config")}
	var out, errw bytes.Buffer
	proc := cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errw, Getenv: func(k string) string { return env[k] }, Cwd: home}
	if code := replaycmd.Run([]string{"--site", site}, proc); code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	index := filepath.Join(site, "index.html")
	raw, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(raw, []byte("<script")); n != 1 {
		t.Fatalf("the index holds %d script tags, want its own one", n)
	}
	if !bytes.Contains(raw, []byte("script-src &#39;sha256-")) {
		t.Fatal("the index's CSP allows no script by hash")
	}
	page := regexp.MustCompile(`href="(s/[0-9a-f]+\.html)"`).FindSubmatch(raw)
	if page == nil {
		t.Fatal("the index links no session page")
	}
	if _, err := os.Stat(filepath.Join(site, string(page[1]))); err != nil {
		t.Fatalf("the linked page: %v", err)
	}
	dom, msgs := console(t, index)
	if len(msgs) > 0 {
		t.Errorf("the index wrote to the console (a blocked script?): %v", msgs)
	}
	if m := titleRe.FindStringSubmatch(dom); m == nil || m[1] != "panto sessions" {
		t.Fatalf("the title changed: %v", m)
	}
	if strings.Contains(dom, `data-pwned="1"`) || strings.Contains(dom, `<img src="x"`) {
		t.Error("the attack became part of the index")
	}
	if !strings.Contains(dom, `&lt;script&gt;document.title='PWNED'`) {
		t.Error("the attack is not shown as text")
	}
	// The script ran: the time is in the reader's zone, its UTC form its
	// tooltip.
	if !strings.Contains(dom, `<time datetime="2026-02-10T10:20:02Z" title="2026-02-10T10:20:02Z">2026-02-10 19:20 UTC+09:00</time>`) {
		t.Error("the index's script did not run (no time in the reader's zone)")
	}
	browse(t, index, "--window-size=1280,900", "--screenshot="+artifact(t, "site-1280.png"))
	browse(t, index, "--window-size=390,900", "--screenshot="+artifact(t, "site-390.png"))
	p := filepath.Join(site, string(page[1]))
	praw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(praw, []byte("<script")); n != 1 {
		t.Fatalf("the session's page holds %d script tags, want its own one", n)
	}
	if !bytes.Contains(praw, []byte(`<time datetime="2026-02-10T10:20:00Z">2026-02-10 10:20:00 UTC</time>`)) {
		t.Error("the session's page does not say its times in UTC for a reader without scripts")
	}
	pdom, pmsgs := console(t, p)
	if len(pmsgs) > 0 {
		t.Errorf("the session's page wrote to the console (a blocked script?): %v", pmsgs)
	}
	if strings.Contains(pdom, `data-pwned="1"`) || strings.Contains(pdom, `<img src="x"`) {
		t.Error("the attack became part of the session's page")
	}
	if m := titleRe.FindStringSubmatch(pdom); m == nil || !strings.HasPrefix(m[1], "panto session ") || strings.Contains(m[1], "PWNED") {
		t.Fatalf("the session's title changed: %v", m)
	}
	for _, want := range []string{
		`<time datetime="2026-02-10T10:20:00Z" title="2026-02-10T10:20:00Z">2026-02-10 19:20:00 UTC+09:00</time>`, // a message
		`<time datetime="2026-02-10T10:20:02Z" title="2026-02-10T10:20:02Z">2026-02-10 19:20 UTC+09:00</time>`,    // the summary's span
	} {
		if !strings.Contains(pdom, want) {
			t.Errorf("the session's page does not show %s (its script did not run?)", want)
		}
	}
	// One image shown, as a data: URL of a png; the others named.
	if n := strings.Count(pdom, "<img "); n != 1 || !strings.Contains(pdom, `<img src="data:image/png;base64,`+sitePNG+`"`) {
		t.Errorf("the page shows %d images, want the png alone", n)
	}
	for _, want := range []string{"not shown, a page shows png, jpeg, gif and webp only", "its data is not valid base64, not shown",
		"its bytes are not a jpeg image, not shown", "(image/gif, 1.1 MiB): larger than 1.0 MiB, not shown"} {
		if !strings.Contains(pdom, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
	if strings.Contains(pdom, "data:image/svg") || strings.Contains(pdom, siteSVG) {
		t.Error("the SVG is in the page")
	}
	browse(t, p, "--window-size=1280,900", "--screenshot="+artifact(t, "site-session-1280.png"))
	browse(t, p, "--window-size=390,900", "--screenshot="+artifact(t, "site-session-390.png"))
	// Its second page: linked from the first, linking back, with the
	// summary at its end and its own script.
	next := regexp.MustCompile(`<a href="([0-9a-f]+-2\.html)" rel="next">`).FindStringSubmatch(pdom)
	if next == nil {
		t.Fatal("the first page links no next page")
	}
	p2 := filepath.Join(filepath.Dir(p), next[1])
	dom2, msgs2 := console(t, p2)
	if len(msgs2) > 0 {
		t.Errorf("the second page wrote to the console (a blocked script?): %v", msgs2)
	}
	if m := titleRe.FindStringSubmatch(dom2); m == nil || strings.Contains(m[1], "PWNED") || strings.Contains(dom2, `data-pwned="1"`) {
		t.Fatalf("the attack ran on the second page: %v", m)
	}
	for _, want := range []string{"Page 2 of 2 · <a href=\"" + filepath.Base(p) + "\" rel=\"prev\">← previous</a>", `<a href="../index.html">All sessions</a>`,
		`<dt>Turns</dt><dd>252 prompts, 251 replies</dd>`, `title="2026-02-10T10:20:02Z">2026-02-10 19:20:02 UTC+09:00</time>`, "more 249 &lt;script&gt;"} {
		if !strings.Contains(dom2, want) {
			t.Errorf("the second page lacks %s", want)
		}
	}
	if n := strings.Count(dom2, "<article "); n != 3 {
		t.Errorf("the second page holds %d entries, want the 3 past the first 500", n)
	}
	browse(t, p2, "--window-size=1280,900", "--screenshot="+artifact(t, "site-session-page2-1280.png"))
	browse(t, p2, "--window-size=390,900", "--screenshot="+artifact(t, "site-session-page2-390.png"))
}

// sitePNG is a 96×48 png of four coloured bands; siteSVG an SVG whose
// script would set the title.
const (
	sitePNG = "iVBORw0KGgoAAAANSUhEUgAAAGAAAAAwCAIAAABhdOiYAAAAb0lEQVR42u3QMQ0AIAwAMOTswwBKeLCBHDxgAiXowMQekiZV0FLHTnFnpIjVU5xoKYogQYIECRIkSJAgQYIECRIkSJAgQYIECRIkSJAgQYIECRIkSJAgQYIECRIkSJAgQYIECRIkSJAgQYIE/RH0AKim38tUot/iAAAAAElFTkSuQmCC"
	siteSVG = "PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIG9ubG9hZD0iZG9jdW1lbnQudGl0bGU9J1BXTkVEJyI+PHNjcmlwdD5kb2N1bWVudC50aXRsZT0nUFdORUQnPC9zY3JpcHQ+PC9zdmc+"
)
