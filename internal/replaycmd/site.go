package replaycmd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/costcmd"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/internal/filecmp"
	"github.com/panto-dev/panto/internal/pricing"
	"github.com/panto-dev/panto/internal/replay"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/pkg/catalog"
)

// Why the site is panto-replay's: a site is pages of sessions, and
// panto-replay is the command that reads a session and makes its page
// (SPEC §12); panto-log writes sessions, and a site writes none.

// siteEntry is what the site keeps of one source: the file it was made
// from, as it was then, and what its page says.
type siteEntry struct {
	Source  string    `json:"source"`
	Size    int64     `json:"size"`
	ModTime int64     `json:"modTime"` // UnixNano
	Page    string    `json:"page"`    // relative to the site
	ID      string    `json:"id"`
	Origin  string    `json:"origin,omitempty"` // agent/id of the log it came from
	Agent   string    `json:"agent"`
	Cwd     string    `json:"cwd"`
	Title   string    `json:"title"`
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
	Prompts int       `json:"prompts"`
	Replies int       `json:"replies"`
	Pico    int64     `json:"picodollars"`
	Known   bool      `json:"known"`
	Priced  bool      `json:"priced"`
	Pages   int       `json:"pages,omitempty"` // how many pages (0: one, a manifest of before pages were split)
}

// pageNames are the files of a session's pages: the first is page
// ("s/HASH.html"), the others beside it (s/HASH-2.html, …).
func pageNames(page string, n int) []string {
	out := []string{page}
	for k := 1; k < n; k++ {
		out = append(out, strings.TrimSuffix(page, ".html")+"-"+strconv.Itoa(k+1)+".html")
	}
	return out
}

// A huge session is split into pages (replay.Pages): at most
// sitePageEntries entries a page, or sitePageBytes bytes of their lines,
// and of one text (a tool's result, an input) siteTextMax bytes shown.
// A 1 GB session is some 250 pages of a few MiB, never one page of 1 GB.
const (
	sitePageEntries = 500
	sitePageBytes   = 4 << 20
	siteTextMax     = 1 << 20
)

// manifestName is the site's record of its pages, beside the index.
const manifestName = ".panto-site.json"

// site writes or updates the site in g.Site: a page per session of the
// store and per log at the agents' places (the registry's), rendered only
// when its source changed since the last run; pages of sources gone are
// removed; the index is rewritten only when it changes.
func (g *grammar) site(proc cli.IO, out *bufio.Writer) (int, error) {
	if g.File != "" || g.Format != "" || g.Info || g.Tree || g.Leaf != "" || g.Get != "" {
		return 0, exitcode.Usagef("--site DIR writes pages of every session: give no file, --format, --info, --tree or --leaf")
	}
	dir := g.Site
	if err := os.MkdirAll(filepath.Join(dir, "s"), 0o700); err != nil {
		return 0, exitcode.Failuref("site: %v", err)
	}
	sweepTemps(dir)
	sweepTemps(filepath.Join(dir, "s"))
	old := map[string]siteEntry{}
	if b, err := os.ReadFile(filepath.Join(dir, manifestName)); err == nil {
		var list []siteEntry
		if json.Unmarshal(b, &list) == nil {
			for _, e := range list {
				old[e.Source] = e
			}
		}
	}
	// The sources: the logs at every agent's places, then the store's
	// sessions (an import of a log already listed is that log).
	var sources []string
	for _, place := range agents.Places(agents.Unknown, proc.Getenv) {
		catalog.WalkWith(place, agents.IsLogPath, func(p string, err error) error {
			if err != nil {
				return nil
			}
			// A log of several sessions (an OpenCode database): a
			// page each, DB#SESSION; whole, it is no one session.
			// (Not a FIFO: opening one waits for a writer.)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && strings.HasSuffix(p, ".db") {
				if ids, _ := agents.Sessions(p); len(ids) > 1 {
					for _, id := range ids {
						sources = append(sources, p+"#"+id)
					}
					return nil
				}
			}
			sources = append(sources, p)
			return nil
		})
	}
	st, err := stores.Open(g.Store, proc)
	if err != nil {
		return 0, err
	}
	list, err := st.List(context.Background(), proc.Cwd, true, func(error) {})
	st.Close()
	if err != nil {
		return 0, exitcode.Failuref("site: list the sessions: %v", err)
	}
	for _, s := range list {
		sources = append(sources, s.Path)
	}
	_, from, _ := pricing.ForFlag(g.Pricing, proc.Getenv, func(string) {})
	var entries, all []siteEntry // the sessions listed; every source (a copy of a listed session too)
	seen := map[string]bool{}
	unread := map[string]bool{} // sources whose render failed, their last page kept
	written, kept, failed := 0, 0, 0
	for _, src := range sources {
		size, mod, err := sourceStat(src)
		sum := sha256.Sum256([]byte(src))
		page := "s/" + hex.EncodeToString(sum[:8]) + ".html"
		e, ok := old[src]
		if ok && err == nil && e.Size == size && e.ModTime == mod && e.Page == page {
			if _, err := os.Stat(filepath.Join(dir, page)); err == nil {
				kept++
				all = append(all, e)
				if !seen[e.key()] {
					seen[e.key()] = true
					entries = append(entries, e)
				}
				continue
			}
		}
		e, err = g.sitePage(proc, src, dir, page)
		if err != nil {
			failed++
			// A page a reader had is never lost to a render that
			// failed (a log unreadable a moment, cut, rewritten): the
			// last one stays, listed as it was, until its source goes.
			o, had := old[src]
			if _, serr := os.Stat(filepath.Join(dir, o.Page)); had && o.Page == page && serr == nil {
				cli.Warnf(proc.Stderr, name, "site: %s: %v: its last page kept", src, err)
				kept++
				unread[src] = true
				all = append(all, o)
				if !seen[o.key()] {
					seen[o.key()] = true
					entries = append(entries, o)
				}
				continue
			}
			cli.Warnf(proc.Stderr, name, "site: %s: %v: left out", src, err)
			continue
		}
		e.Source, e.Size, e.ModTime, e.Page = src, size, mod, page
		written++
		if o, ok := old[src]; ok { // pages it had and has no more
			for _, p := range pageNames(o.Page, max(o.Pages, 1))[max(e.Pages, 1):] {
				os.Remove(filepath.Join(dir, p))
			}
		}
		all = append(all, e)
		if !seen[e.key()] {
			seen[e.key()] = true
			entries = append(entries, e)
		}
	}
	// Pages of sources no longer there go.
	removed := 0
	live := map[string]bool{}
	for _, e := range all {
		live[e.Page] = true
	}
	for _, e := range old {
		if !live[e.Page] {
			for k, p := range pageNames(e.Page, max(e.Pages, 1)) {
				if os.Remove(filepath.Join(dir, p)) == nil && k == 0 {
					removed++
				}
			}
		}
	}
	// The cost report of the same sessions, each linked to its page.
	links := map[string]string{}
	var paths []string
	for _, e := range all {
		links[e.ID] = e.Page
		if _, id, ok := strings.Cut(e.Origin, "/"); ok {
			links[id] = e.Page
		}
		if _, _, err := sourceStat(e.Source); err == nil && !unread[e.Source] {
			paths = append(paths, e.Source)
		}
	}
	report := false
	if len(paths) > 0 {
		args := []string{"--format", "html", "--by", "session"}
		if g.Pricing != "" {
			args = append(args, "--pricing", g.Pricing)
		}
		var rep, errs bytes.Buffer
		cio := proc
		cio.Stdout, cio.Stderr, cio.Stdin = &rep, &errs, strings.NewReader("")
		if code := costcmd.RunLinked(append(args, paths...), cio, links); code == exitcode.OK || code == exitcode.Findings {
			if _, err := writeIfChanged(filepath.Join(dir, "cost.html"), func(w io.Writer) error { _, err := w.Write(rep.Bytes()); return err }); err == nil {
				report = true
			}
		} else {
			cli.Warnf(proc.Stderr, name, "site: the cost report: %s", strings.TrimSpace(errs.String()))
		}
	}
	changed, err := writeIfChanged(filepath.Join(dir, "index.html"), func(w io.Writer) error { return writeIndex(w, entries, from, report) })
	if err != nil {
		return 0, exitcode.Failuref("site: %v", err)
	}
	if b, err := json.MarshalIndent(all, "", " "); err == nil {
		writeIfChanged(filepath.Join(dir, manifestName), func(w io.Writer) error { _, err := w.Write(b); return err })
	}
	idx := "index unchanged"
	if changed {
		idx = "index written"
	}
	fmt.Fprintf(out, "%s: %d sessions: %d pages written, %d unchanged, %d removed, %s\n", filepath.Join(dir, "index.html"), len(entries), written, kept, removed, idx)
	if failed > 0 {
		return exitcode.Findings, nil
	}
	return exitcode.OK, nil
}

// key tells the same session apart from its copies: an import is the log
// it came from.
func (e siteEntry) key() string {
	if e.Origin != "" {
		return e.Origin
	}
	return e.ID
}

// sitePage renders src's pages into dir, the first at page, the others
// beside it (pageNames), and returns what they say. Each is streamed into
// a file beside its name and renamed over it when its bytes changed: the
// memory of the writer does not grow with the session (a page is never
// held whole).
func (g *grammar) sitePage(proc cli.IO, src, dir, page string) (siteEntry, error) {
	var sum replay.PageSummary
	var e siteEntry
	var files []*os.File
	var bufs []*bufio.Writer
	done := func(k int) error { // page k is written whole
		if bufs[k] == nil {
			return nil
		}
		err := bufs[k].Flush()
		if cerr := files[k].Close(); err == nil {
			err = cerr
		}
		bufs[k] = nil
		return err
	}
	defer func() { // on an error, the files not yet renamed
		for _, f := range files {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	create := func() (*bufio.Writer, error) {
		f, err := os.CreateTemp(filepath.Join(dir, "s"), tempPattern())
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		bufs = append(bufs, bufio.NewWriterSize(f, 64<<10))
		return bufs[len(bufs)-1], nil
	}
	first, err := create()
	if err != nil {
		return e, err
	}
	pages := &replay.Pages{MaxEntries: sitePageEntries, MaxBytes: sitePageBytes, MaxText: siteTextMax,
		Name: func(k int) string { return filepath.Base(pageNames(page, k+1)[k]) },
		Next: func(k int) (io.Writer, error) {
			if k >= 2 { // the page before is done (the first is not: its end comes last)
				if err := done(k - 1); err != nil {
					return nil, err
				}
			}
			return create()
		}}
	sub := grammar{File: src, Format: "html", Pricing: g.Pricing, StoreFlag: g.StoreFlag, summary: &sum, localTimes: true, pages: pages, index: "../index.html"}
	var errs bytes.Buffer
	sio := proc
	sio.Stderr = &errs
	sio.Stdin = strings.NewReader("")
	if _, err := sub.run(sio, first); err != nil {
		return e, err
	}
	if sum.ID == "" {
		return e, fmt.Errorf("no session in it")
	}
	names := pageNames(page, len(files))
	for k := range files {
		if err := done(k); err != nil {
			return e, err
		}
	}
	for k, f := range files {
		if err := replaceIfChanged(f.Name(), filepath.Join(dir, names[k])); err != nil {
			return e, err
		}
	}
	n := len(files)
	files = nil
	e = siteEntry{ID: sum.ID, Origin: sub.origin, Agent: sum.Agent, Cwd: sum.Cwd, Title: sum.Title, First: sum.First, Last: sum.Last,
		Prompts: sum.Prompts, Replies: sum.Replies, Pico: sum.Cost.Pico, Known: sum.Cost.Known, Priced: sum.Priced, Pages: n}
	return e, nil
}

// replaceIfChanged renames the file tmp over path unless path holds the
// same bytes (compared a block at a time), when tmp is removed.
func replaceIfChanged(tmp, path string) error {
	if filecmp.Files(tmp, path) {
		return os.Remove(tmp)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// writeIfChanged writes what fn writes to path, atomically (a file beside
// it, renamed over it), unless path already holds exactly that; it says
// whether it wrote.
func writeIfChanged(path string, fn func(io.Writer) error) (bool, error) {
	var b bytes.Buffer
	if err := fn(&b); err != nil {
		return false, err
	}
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, b.Bytes()) {
		return false, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), tempPattern())
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		os.Remove(tmp)
		return false, err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return false, err
	}
	os.Chmod(tmp, 0o600)
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return false, err
	}
	return true, nil
}

// indexScript is the index's one script: the filter box, and times in
// the reader's zone (replay.TimeScript, as on the session pages). The
// page's CSP allows it by its hash, and nothing else: the titles it
// filters are text the page escaped.
const indexScript = filterScript + "\n" + replay.TimeScript

const filterScript = `(function(){
var q=document.getElementById("q"),rows=document.querySelectorAll("tr[data-s]"),groups=document.querySelectorAll("section.project"),n=document.getElementById("shown");
function f(){var t=q.value.toLowerCase(),c=0;rows.forEach(function(r){var m=r.getAttribute("data-s").indexOf(t)>=0;r.hidden=!m;if(m)c++;});
groups.forEach(function(g){g.hidden=!g.querySelector("tr[data-s]:not([hidden])");});n.textContent=c;}
q.addEventListener("input",f);
})();`

// IndexCSP allows the index's script by its hash and nothing else.
var IndexCSP = replay.ScriptCSP(indexScript)

type indexRow struct {
	Page, Agent, Title, Search, Time, TimeText, Cost string
	Messages                                         int
	Unknown                                          bool
}

type indexProject struct {
	Cwd  string
	Rows []indexRow
	Cost string
	last time.Time
}

// writeIndex writes the site's index: the sessions by project (the
// project of the newest session first), newest first in each.
func writeIndex(w io.Writer, entries []siteEntry, prices string, report bool) error {
	byCwd := map[string]*indexProject{}
	var projects []*indexProject
	total := pricing.Zero()
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].Last.After(entries[j].Last) })
	costs := map[*indexProject]pricing.Cost{}
	for _, e := range entries {
		p := byCwd[e.Cwd]
		if p == nil {
			p = &indexProject{Cwd: e.Cwd, last: e.Last}
			byCwd[e.Cwd] = p
			projects = append(projects, p)
			costs[p] = pricing.Zero()
		}
		title := e.Title
		if title == "" {
			title = "(untitled) " + e.ID
		}
		r := indexRow{Page: e.Page, Agent: e.Agent, Title: title, Messages: e.Prompts + e.Replies, Search: strings.ToLower(e.Agent + " " + title + " " + e.Cwd + " " + e.ID + " " + e.Origin)}
		if !e.Last.IsZero() {
			r.Time = e.Last.UTC().Format(time.RFC3339)
			r.TimeText = e.Last.UTC().Format("2006-01-02 15:04 UTC")
		}
		c := pricing.Cost{Pico: e.Pico, Known: e.Known}
		if e.Priced {
			r.Cost, r.Unknown = costText(c), !c.Known
			pc := costs[p]
			if pc.Add(c) != nil {
				pc.Known = false
			}
			costs[p] = pc
			if total.Add(c) != nil {
				total.Known = false
			}
		}
		p.Rows = append(p.Rows, r)
	}
	for _, p := range projects {
		p.Cost = costText(costs[p])
	}
	return indexTemplate().Execute(w, map[string]any{"CSP": IndexCSP, "Script": template.JS(indexScript), "Projects": projects, "Count": len(entries),
		"Total": costText(total), "Report": report, "Prices": prices, "Generator": name + " " + cli.Version})
}

func costText(c pricing.Cost) string {
	if c.Known {
		return pricing.Dollars(c.Pico)
	}
	return "≥" + pricing.Dollars(c.Pico) + "*"
}

var indexTemplate = sync.OnceValue(func() *template.Template { // parsed when first used, not at every start
	return template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>panto sessions</title>
<style>
:root { color-scheme: light dark; --fg: #1d1d1f; --bg: #fcfcfa; --muted: #6b6b6b; --line: #e3e3e0; --accent: #2f5fb3; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8e8e6; --bg: #161617; --muted: #a0a0a0; --line: #333; --accent: #8fb3ff; } }
body { margin: 0 auto; max-width: 72rem; padding: 1rem; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 1.3rem; margin: .2rem 0 .6rem; }
h2 { font-size: 1rem; margin: 1.4rem 0 .3rem; overflow-wrap: anywhere; }
h2 .cost { color: var(--muted); font-weight: normal; }
input#q { width: 100%; max-width: 30rem; font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); color: var(--fg); box-sizing: border-box; }
table { border-collapse: collapse; width: 100%; }
td, th { padding: .25rem .5rem; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { font-size: .8rem; color: var(--muted); font-weight: 600; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.t { overflow-wrap: anywhere; }
td.w { white-space: nowrap; color: var(--muted); }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
.unknown { color: #b06d00; }
.note { color: var(--muted); font-size: .85rem; }
.wt { display: none; }
@media (max-width: 600px) { td.w, th.w { display: none; } .wt { display: block; color: var(--muted); font-size: .8rem; } td, th { padding: .25rem .3rem; } }
</style>
</head>
<body>
<h1>panto sessions</h1>
<p><input id="q" type="search" placeholder="Filter by title, agent, project or id" aria-label="Filter sessions"> <span class="note"><span id="shown">{{.Count}}</span> of {{.Count}} sessions · total {{.Total}}{{if .Report}} · <a href="cost.html">the cost report</a>{{end}}</span></p>
{{range .Projects}}<section class="project">
<h2>{{.Cwd}} <span class="cost">{{.Cost}}</span></h2>
<table>
<thead><tr><th>title</th><th>agent</th><th class="w">last activity</th><th class="n">messages</th><th class="n">cost</th></tr></thead>
<tbody>
{{range .Rows}}<tr data-s="{{.Search}}"><td class="t"><a href="{{.Page}}">{{.Title}}</a>{{if .Time}}<span class="wt"><time datetime="{{.Time}}">{{.TimeText}}</time></span>{{end}}</td><td>{{.Agent}}</td><td class="w">{{if .Time}}<time datetime="{{.Time}}">{{.TimeText}}</time>{{end}}</td><td class="n">{{.Messages}}</td><td class="n{{if .Unknown}} unknown{{end}}">{{.Cost}}</td></tr>
{{end}}</tbody>
</table>
</section>
{{end}}<p class="note">Prices: {{.Prices}}. * a price or usage is unknown: the known part is shown. Made by {{.Generator}}.</p>
<script>{{.Script}}</script>
</body>
</html>
`))
})

// tempPrefix names the files a page or the index is written into before
// it is renamed over its name: .site-PID-RANDOM.
const tempPrefix = ".site-"

func tempPattern() string { return tempPrefix + strconv.Itoa(os.Getpid()) + "-*" }

// sweepTemps removes the files in dir a site run that no longer exists
// was writing: a run killed (kill -9, the OOM killer) never removed them,
// and a huge session's pages are as large as the session. A live run's
// (this one's, another writing the same site) and one whose process
// cannot be told dead (EPERM) are left alone.
func sweepTemps(dir string) {
	names, err := filepath.Glob(filepath.Join(dir, tempPrefix+"*-*"))
	if err != nil {
		return
	}
	for _, name := range names {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(filepath.Base(name), tempPrefix), "-", 2)[0])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.Remove(name)
		}
	}
}

// sourceStat is the size and time of a source as a page was made of it:
// of its file; for one session of a database (DB#SESSION) of the
// database and its WAL together, where SQLite writes first.
func sourceStat(src string) (size, mod int64, err error) {
	file, _, several := catalog.SplitSession(src)
	if !several {
		file = src
	}
	fi, err := os.Stat(file)
	if err != nil {
		return 0, 0, err
	}
	size, mod = fi.Size(), fi.ModTime().UnixNano()
	if several {
		if w, err := os.Stat(agents.WALOf(file)); err == nil {
			size, mod = size+w.Size(), max(mod, w.ModTime().UnixNano())
		}
	}
	return size, mod, nil
}
