package replay

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/panto-dev/panto/internal/pricing"
	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// HTMLOptions say what a page shows beyond the transcript.
type HTMLOptions struct {
	Prices     pricing.Table // prices for the cost of each reply (nil: none shown)
	Branch     string        // the leaf asked for, when not the current one
	Generator  string        // what made the page, for its footer
	PricesFrom string        // where Prices came from, said under the total (pricing.Set.String)
	// Subagents are the conversations tool calls started, by the call's
	// id: each is shown folded under its call, with its cost.
	Subagents map[string]Subagent
	// Summary, when set, is filled with what the page's summary says: a
	// site's index lists it.
	Summary *PageSummary
	// LocalTimes puts TimeScript in the page, allowed by its hash in the
	// page's CSP (and no other script): each time is shown in the
	// reader's zone, its UTC form the tooltip. Without it (and with
	// scripts off) the times are UTC, and the page has no script.
	LocalTimes bool
	// Pages, when set, splits the path into pages (a site's huge
	// session): w is the first page, Pages.Next gives the others.
	Pages *Pages
	// Index, when set, is the link (relative to the page) of the index
	// the page belongs to, named at its top.
	Index string
}

// Pages say how a transcript is split into pages, so that a huge session
// is never one huge page: a page holds at most MaxEntries entries of the
// path, or (when it holds more than one) MaxBytes bytes of their lines,
// and each text of a message (a tool's result, an input, a reply) at most
// MaxText bytes, the rest said and not shown.
type Pages struct {
	MaxEntries int
	MaxBytes   int64
	MaxText    int
	// Name is the link of page k (0 is the first) from another page.
	Name func(k int) string
	// Next gives the writer of page k (k ≥ 1), when the page before is
	// done (except the first: its end, the session's summary, is written
	// to it last, after the last page's).
	Next func(k int) (io.Writer, error)
}

// splits are the nodes of path that start a page after the first: a page
// ends after p.MaxEntries entries, or before an entry that would take its
// lines past p.MaxBytes.
func (p *Pages) splits(s *Session, path []int32) []int32 {
	var out []int32
	n, size := 0, int64(0)
	for _, i := range path {
		l := s.Log.Nodes[i].Len + 1
		if n > 0 && ((p.MaxEntries > 0 && n >= p.MaxEntries) || (p.MaxBytes > 0 && size+l > p.MaxBytes)) {
			out = append(out, i)
			n, size = 0, 0
		}
		n++
		size += l
	}
	return out
}

type pageFoot struct {
	Nav    *navView
	Script template.JS
}

// navView is what a page of several says of where it stands.
type navView struct {
	Page, Pages      int // 1-based
	Prev, Next, Home string
	Index            string
}

// PageSummary is what a transcript page says of its session, for an index.
type PageSummary struct {
	ID, Cwd, Agent, Title string
	First, Last           time.Time // the first and last message's times (zero: none)
	Prompts, Replies      int
	Cost                  pricing.Cost // with the subagents'; meaningful when Priced
	Priced                bool
}

// A Subagent is a conversation that a tool call started (a Claude Code
// Task): its session and the path of it shown.
type Subagent struct {
	Agent   string   // its agent's id, when known
	From    string   // where it was read, said under it; for none, where it was looked for
	Session *Session // nil: the call names the subagent, and its conversation is nowhere
	Path    []int32
}

// PageCSP forbids every script, every fetch and every frame: a transcript
// is made of untrusted text (the model's, the tools', the user's), and a
// page made of it runs nothing and loads nothing (SPEC §12).
const PageCSP = "default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

// TimeScript rewrites each <time datetime=…> of a page into the reader's
// zone ("2026-02-10 19:20:01 UTC+09:00"), the UTC time it said kept as
// its tooltip; seconds are shown when the UTC text showed them. It reads
// only the attribute, which the page wrote from a parsed time, and sets
// text, never markup. With scripts off the UTC text stays.
const TimeScript = `(function(){function p(n){return(n<10?"0":"")+n}
document.querySelectorAll("time[datetime]").forEach(function(e){var s=e.getAttribute("datetime"),d=new Date(s);if(isNaN(d))return;
var o=-d.getTimezoneOffset(),a=Math.abs(o),t=d.getFullYear()+"-"+p(d.getMonth()+1)+"-"+p(d.getDate())+" "+p(d.getHours())+":"+p(d.getMinutes());
if(/:[0-9][0-9]:[0-9][0-9]/.test(e.textContent))t+=":"+p(d.getSeconds());
e.textContent=t+" UTC"+(o?(o<0?"-":"+")+p(Math.floor(a/60))+":"+p(a%60):"");e.title=s;});})();`

// ScriptCSP is PageCSP allowing script, by its SHA-256, and no other.
func ScriptCSP(script string) string {
	h := sha256.Sum256([]byte(script))
	return strings.Replace(PageCSP, "script-src 'none'", "script-src 'sha256-"+base64.StdEncoding.EncodeToString(h[:])+"'", 1)
}

// timeCSP is the CSP of a page that carries TimeScript.
var timeCSP = ScriptCSP(TimeScript)

// foldLines is how many lines a tool's result or input may have before it
// is folded.
const foldLines = 12

// WriteHTML writes the path as one self-contained page (SPEC §12): every
// byte of session text escaped by html/template, no script (a
// Content-Security-Policy forbids it), nothing fetched; thinking folded,
// each tool call beside its result (folded when long), usage and cost per
// reply and the session's total. The page streams: it holds one message at
// a time, and of the tool results only where they are.
func (s *Session) WriteHTML(w io.Writer, path []int32, o HTMLOptions) error {
	results, err := s.toolResults(path)
	if err != nil {
		return err
	}
	h := s.Log.Header
	page := pageData{CSP: PageCSP, ID: clean(h.ID), Cwd: clean(h.Cwd), Created: clean(h.Timestamp), Entries: len(s.Log.Nodes), OnPath: len(path), Branch: clean(o.Branch), Priced: o.Prices != nil}
	if t, err := time.Parse(time.RFC3339Nano, h.Timestamp); err == nil {
		page.Created, page.CreatedAt = t.UTC().Format("2006-01-02 15:04:05 UTC"), isoTime(t)
	}
	if o.LocalTimes {
		page.CSP = timeCSP
	}
	if len(path) > 0 {
		page.Leaf = s.Log.ID(path[len(path)-1])
	}
	var splits []int32 // the nodes that start the pages after the first
	first := w         // the first page, whose end is written last
	nav := func(k int) *navView {
		if o.Pages == nil || len(splits) == 0 {
			if o.Index == "" {
				return nil
			}
			return &navView{Index: o.Index}
		}
		v := &navView{Page: k + 1, Pages: len(splits) + 1, Index: o.Index, Home: o.Pages.Name(0)}
		if k > 0 {
			v.Prev = o.Pages.Name(k - 1)
		}
		if k < len(splits) {
			v.Next = o.Pages.Name(k + 1)
		}
		return v
	}
	if o.Pages != nil {
		splits = o.Pages.splits(s, path)
		s.maxText = o.Pages.MaxText
	}
	page.Nav = nav(0)
	if err := pageTemplates().ExecuteTemplate(w, "head", page); err != nil {
		return err
	}
	k := 0 // the page being written
	var script template.JS
	if o.LocalTimes {
		script = template.JS(TimeScript)
	}
	total := totals{Cost: pricing.Zero(), SubCost: pricing.Zero()}
	var book *pricing.Book // nil: no prices, no cost shown
	if o.Prices != nil {
		book = pricing.NewBook(o.Prices)
	}
	total.Title, _, total.Agent = session.TitleOf(s.r, math.MaxInt64) // an import's own title, or the first prompt
	total.Title, total.Agent = clean(total.Title), clean(total.Agent)
	shown := map[string]bool{}  // tool results already shown beside their calls
	nested := map[string]bool{} // the calls whose subagent is shown: once a page
	var stamp string            // the provider/model of the last request, to show changes
	err = s.EachLine(path, func(i int32, line []byte) error {
		if k < len(splits) && i == splits[k] { // the next page
			if k > 0 { // the first page's end is its summary, written last
				if err := pageTemplates().ExecuteTemplate(w, "pagefoot", pageFoot{nav(k), script}); err != nil {
					return err
				}
			}
			k++
			nw, err := o.Pages.Next(k)
			if err != nil {
				return err
			}
			w = nw
			page.Nav = nav(k)
			if err := pageTemplates().ExecuteTemplate(w, "head", page); err != nil {
				return err
			}
		}
		n := &s.Log.Nodes[i]
		if n.Kind != session.KindMessage {
			if v := compactionView(s.Log.ID(i), line); v != nil {
				return pageTemplates().ExecuteTemplate(w, "message", v)
			}
			return nil
		}
		v, err := s.view(i, line, n.Message(line), results, shown, book, &stamp, &total)
		if err != nil || v == nil {
			return err
		}
		if err := nestSubagents(v, o, book, nested, &total); err != nil {
			return err
		}
		if v.Role == "user" {
			for _, b := range v.Blocks {
				if b.Kind == "text" {
					if t := session.PromptTitle(b.Text); t != "" {
						if total.Title == "" {
							total.Title = t
						}
						if len(total.Prompts) < tocMax {
							total.Prompts = append(total.Prompts, promptItem{v.ID, v.Time, v.DateTime, t, ""})
							if k > 0 || len(splits) > 0 {
								total.Prompts[len(total.Prompts)-1].Page = o.Pages.Name(k)
							}
						} else {
							total.MorePrompts++ // memory must not grow with the session
						}
					}
					break
				}
			}
		}
		return pageTemplates().ExecuteTemplate(w, "message", v)
	})
	if err != nil {
		return err
	}
	total.Priced = o.Prices != nil
	total.Generator = o.Generator
	if o.LocalTimes {
		total.Script = template.JS(TimeScript)
	}
	total.PricesFrom = clean(o.PricesFrom)
	if o.Summary != nil {
		all := total.Cost
		if err := all.Add(total.SubCost); err != nil {
			all.Known = false
		}
		*o.Summary = PageSummary{ID: h.ID, Cwd: h.Cwd, Agent: total.Agent, Title: total.Title, First: total.first, Last: total.last,
			Prompts: total.PromptCount(), Replies: total.Replies + total.SubReplies, Cost: all, Priced: total.Priced}
	}
	// The summary ends the last page and the first: it is known only now.
	total.Nav = nav(k)
	if err := pageTemplates().ExecuteTemplate(w, "foot", total); err != nil || k == 0 {
		return err
	}
	total.Nav = nav(0)
	return pageTemplates().ExecuteTemplate(first, "foot", total)
}

// nestSubagents puts under each tool call of v that started a subagent
// that subagent's conversation, rendered, and counts it in the total; a
// call met again (a log that repeats it) is not given it twice.
func nestSubagents(v *messageView, o HTMLOptions, book *pricing.Book, nested map[string]bool, total *totals) error {
	for k := range v.Blocks {
		b := &v.Blocks[k]
		sub, ok := o.Subagents[b.ID]
		if b.Kind != "call" || !ok || nested[b.ID] {
			continue
		}
		nested[b.ID] = true
		if sub.Session == nil {
			b.Sub = &subagentView{Agent: clean(sub.Agent), From: clean(sub.From), Missing: true}
			continue
		}
		sv, t, err := sub.render(book)
		if err != nil {
			return err
		}
		b.Sub = sv
		total.Subagents++
		total.SubReplies += t.Replies
		if !t.Cost.Known {
			total.SubCost.Known = false
		}
		if err := total.SubCost.Add(t.Cost); err != nil {
			total.SubCost.Known = false
		}
	}
	return nil
}

// render writes the subagent's conversation as the page's messages, and
// says its totals.
func (sub Subagent) render(prices *pricing.Book) (*subagentView, totals, error) {
	s := sub.Session
	t := totals{Cost: pricing.Zero()}
	results, err := s.toolResults(sub.Path)
	if err != nil {
		return nil, t, err
	}
	shown := map[string]bool{}
	var stamp string
	var b strings.Builder
	sv := &subagentView{Agent: clean(sub.Agent), From: clean(sub.From)}
	err = s.EachLine(sub.Path, func(i int32, line []byte) error {
		n := &s.Log.Nodes[i]
		if n.Kind != session.KindMessage {
			return nil
		}
		v, err := s.view(i, line, n.Message(line), results, shown, prices, &stamp, &t)
		if err != nil || v == nil {
			return err
		}
		sv.Messages++
		return pageTemplates().ExecuteTemplate(&b, "message", v)
	})
	if err != nil {
		return nil, t, err
	}
	sv.HTML = template.HTML(b.String()) // the message template escaped every byte of it
	sv.Replies = t.Replies
	if prices != nil {
		sv.Cost = t.CostText()
	}
	return sv, t, nil
}

// subagentView is what a page shows of a subagent under its call.
type subagentView struct {
	Agent, From       string
	Messages, Replies int
	Cost              string // "" when not priced
	HTML              template.HTML
	Missing           bool // the call names it, and its conversation is not there
}

// toolResults finds, on the path, the message that answers each tool call
// (its node + 1; 0 for none): a call is shown beside its result.
func (s *Session) toolResults(path []int32) (map[string]int32, error) {
	out := map[string]int32{}
	var answers []int32
	for _, i := range path {
		if s.Log.Nodes[i].Tools&session.HasToolResult != 0 {
			answers = append(answers, i)
		}
	}
	err := s.EachLine(answers, func(i int32, line []byte) error {
		gjson.Get(asString(s.Log.Nodes[i].Message(line)), "content").ForEach(func(_, b gjson.Result) bool {
			if b.Get("type").Str == "toolResult" {
				if id := b.Get("toolUseId").Str; out[id] == 0 {
					out[strings.Clone(id)] = i + 1 // a copy: the key must not keep the message alive
				}
			}
			return true
		})
		return nil
	})
	return out, err
}

// compactionView shows a compaction entry of the path (nil for another
// entry): its summary, marked as what the model is sent in place of the
// messages before the entry it keeps from.
func compactionView(id string, line []byte) *messageView {
	e := gjson.ParseBytes(line)
	if e.Get("type").Str != session.TypeCompaction {
		return nil
	}
	note := fmt.Sprintf("Compacted (%d tokens before): from here on the model is sent this summary, then the messages from %s on.", e.Get("tokensBefore").Int(), e.Get("firstKeptEntryId").Str)
	if e.Get("firstKeptEntryId").Str == "" {
		note = fmt.Sprintf("Compacted (%d tokens before): from here on the model is sent this summary, then the messages after it.", e.Get("tokensBefore").Int())
	}
	v := &messageView{ID: clean(id), Role: "compaction", Time: clean(e.Get("timestamp").Str),
		Blocks: []blockView{{Kind: "text", Text: clean(note)}, summaryBlock(clean(e.Get("summary").Str))}}
	if t, err := time.Parse(time.RFC3339Nano, e.Get("timestamp").Str); err == nil {
		v.Time, v.DateTime = t.UTC().Format("2006-01-02 15:04:05 UTC"), isoTime(t)
	}
	return v
}

// summaryBlock is a compaction's summary: folded, rendered as the
// markdown it is.
func summaryBlock(t string) blockView {
	b := blockView{Kind: "foldmd", Name: "The summary (" + plural(lines(t), "line", "lines") + ")", Text: t, Lines: lines(t)}
	if len(t) <= markdownMax {
		b.HTML = Markdown(t)
	}
	return b
}

// isoTime is t as a <time> element's datetime: UTC, to the second (or
// the millisecond it has).
func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.999Z07:00") }

type pageData struct {
	CSP, ID, Cwd, Created, CreatedAt, Leaf, Branch string
	Nav                                            *navView
	Entries, OnPath                                int
	Priced                                         bool
}

type messageView struct {
	ID, Role, Time, Stamp, StampChange, Stop string
	DateTime                                 string // Time as a <time> element's datetime ("" when it did not parse)
	Internal                                 bool   // only the agent's own messages, no words of the user
	Usage                                    []usageItem
	Cost                                     string // "" when not priced
	CostUnknown                              bool
	Blocks                                   []blockView
}

type usageItem struct {
	Name  string
	Value int64
}

type blockView struct {
	Kind      string // text, md (markdown, rendered), internal, thinking, redacted, call, result
	Text      string
	HTML      template.HTML // md: the text rendered (every byte of it escaped)
	Name, ID  string
	Lines     int
	Fold      bool
	Result    *blockView    // a call's result, shown beside it
	Missing   bool          // a call with no result on the path
	Sub       *subagentView // the subagent a call started
	Signature bool
	Error     bool        // a result the tool marked as an error (is_error)
	Cut       int         // bytes of the text not shown (HTMLOptions.Pages' MaxText)
	Images    []imageView // an image block's image; a result's images
	// A call read by what its tool does (toolKind): "shell" (Cmd, and
	// its result's Exit), "edit" (Path, Diff), "read" or "write" (Path).
	Tool, Cmd, Path, Exit string
	Diff                  []diffLine
}

type totals struct {
	Replies, NoUsage                                         int
	Input, Output, CacheRead, CacheWrite, CacheWrite1h, Reas int64
	Cost                                                     pricing.Cost
	Priced                                                   bool
	Generator                                                string
	PricesFrom                                               string
	Script                                                   template.JS // TimeScript, when the page carries it
	Nav                                                      *navView

	// What the summary at the top of the page says (written at the end,
	// as the page streams, and shown first by its style).
	Title, Agent   string
	Models         []string
	first, last    time.Time
	Prompts        []promptItem // the table of contents: the first tocMax prompts
	MorePrompts    int
	InternalFolded int

	// The subagents nested under their calls: how many, their replies
	// and their cost (beside the path's, which is Cost).
	Subagents, SubReplies int
	SubCost               pricing.Cost
}

type promptItem struct{ ID, Time, DateTime, Title, Page string } // Page: the page it is on, when there are several

// tocMax is the most prompts the table of contents lists.
const tocMax = 500

// PromptCount is the number of the user's prompts.
func (t totals) PromptCount() int { return len(t.Prompts) + t.MorePrompts }

// Duration is the time from the first message to the last, "" when the
// messages carry no times.
func (t totals) Duration() string {
	if t.first.IsZero() || !t.last.After(t.first) {
		return ""
	}
	d := t.last.Sub(t.first).Round(time.Second)
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days %s", int(d.Hours())/24, (d % (24 * time.Hour)).Round(time.Minute))
	case d >= time.Hour:
		return d.Round(time.Minute).String()
	}
	return d.String()
}

// Span is when the session ran: its first and last message, UTC, each a
// <time> element (nil when the messages carry no times).
func (t totals) Span() []spanTime {
	if t.first.IsZero() {
		return nil
	}
	return []spanTime{{isoTime(t.first), t.first.UTC().Format("2006-01-02 15:04 UTC")}, {isoTime(t.last), t.last.UTC().Format("2006-01-02 15:04 UTC")}}
}

type spanTime struct{ At, Text string }

// CostText is the total's cost, exact, or its known part and a mark.
func (t totals) CostText() string {
	if t.Cost.Known {
		return "$" + pricing.USD(t.Cost.Pico)
	}
	return "≥ $" + pricing.USD(t.Cost.Pico) + " (some prices or usage unknown)"
}

// SubCostText is the subagents' cost, as CostText.
func (t totals) SubCostText() string { return totals{Cost: t.SubCost}.CostText() }

// AllCostText is the cost of the path and its subagents together.
func (t totals) AllCostText() string {
	all := t.Cost
	if err := all.Add(t.SubCost); err != nil {
		all.Known = false
	}
	if !t.SubCost.Known {
		all.Known = false
	}
	return totals{Cost: all}.CostText()
}

// clean makes text valid UTF-8 for the page: an invalid byte shows as
// U+FFFD, never as a byte the browser guesses at.
func clean(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func lines(s string) int { return strings.Count(strings.TrimSuffix(s, "\n"), "\n") + 1 }

// pretty indents a tool's JSON input for reading; other text stays.
func pretty(in string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(in), "", "  ") == nil {
		return b.String()
	}
	return in
}

// view is what the page shows of message m of node i.
func (s *Session) view(i int32, line, m []byte, results map[string]int32, shown map[string]bool, prices *pricing.Book, stamp *string, total *totals) (*messageView, error) {
	n := s.Log.Nodes[i]
	msg := gjson.Parse(asString(m)) // no copy of a message that may be a 200 MB tool result
	v := &messageView{ID: s.Log.ID(i), Role: n.Role.String()}
	if ts := gjson.GetBytes(line, "timestamp").Str; ts != "" {
		v.Time = clean(ts)
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			v.Time, v.DateTime = t.UTC().Format("2006-01-02 15:04:05 UTC"), isoTime(t)
			if total.first.IsZero() || t.Before(total.first) {
				total.first = t
			}
			if t.After(total.last) {
				total.last = t
			}
		}
	}
	switch n.Role {
	case session.User:
		if st, ok := s.Log.Active(i); ok && st.Model != agentsUnknown {
			v.Stamp = clean(st.Provider + "/" + st.Model)
			if v.Stamp != *stamp && *stamp != "" {
				v.StampChange = *stamp
			}
			*stamp = v.Stamp
		}
	case session.Assistant:
		v.Stamp = clean(msg.Get("provider").Str + "/" + msg.Get("model").Str)
		v.Stop = clean(msg.Get("stopReason").Str)
		total.Replies++
		if !slices.Contains(total.Models, v.Stamp) && len(total.Models) < 20 {
			total.Models = append(total.Models, v.Stamp)
		}
		u := msg.Get("usage")
		if !u.Exists() {
			total.NoUsage++
			total.Cost.Known = false
			if prices != nil {
				v.Cost, v.CostUnknown = "unknown (no usage reported)", true
			}
		} else {
			var pu pricing.Usage
			for _, f := range []struct {
				key string
				dst *int64
				sum *int64
			}{{"input", &pu.Input, &total.Input}, {"output", &pu.Output, &total.Output}, {"cacheRead", &pu.CacheRead, &total.CacheRead},
				{"cacheWrite", &pu.CacheWrite, &total.CacheWrite}, {"cacheWrite1h", &pu.CacheWrite1h, &total.CacheWrite1h}, {"reasoning", &pu.Reasoning, &total.Reas}} {
				if x := u.Get(f.key); x.Exists() {
					*f.dst = x.Int()
					*f.sum += x.Int()
					v.Usage = append(v.Usage, usageItem{f.key, x.Int()})
				}
			}
			if prices != nil {
				// The one pricing path (pricing.Book): the reply's billed
				// mode (a Codex service tier, Claude's fast mode) is priced
				// as panto-cost prices it, never at the standard rate.
				c, _, err := prices.Cost(pricing.Key{Provider: msg.Get("provider").Str, Model: msg.Get("model").Str}, msg.Get("billedMode").Str, pu)
				switch {
				case err != nil:
					v.Cost, v.CostUnknown = "unknown ("+err.Error()+")", true
					total.Cost.Known = false
				case c.Known:
					v.Cost = "$" + pricing.USD(c.Pico)
				default:
					v.Cost, v.CostUnknown = "≥ $"+pricing.USD(c.Pico)+" (a price is unknown)", true
				}
				if err == nil {
					if err := total.Cost.Add(c); err != nil {
						total.Cost.Known = false
					}
				}
			}
		}
	}
	beside := 0 // tool results shown beside their calls
	msg.Get("content").ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").Str {
		case "text":
			t, cut := s.cut(textField(b, "text"))
			t = clean(t)
			if img := b.Get("image"); img.IsObject() { // a text naming an image, and the image (agents.Source.Images)
				v.Blocks = append(v.Blocks, blockView{Kind: "image", Text: t, Images: []imageView{imageOf(img)}})
				return true
			}
			switch {
			case n.Role == session.User && session.Internal(t):
				v.Blocks = append(v.Blocks, blockView{Kind: "internal", Text: t, Name: internalTag(t), Lines: lines(t), Cut: cut})
				total.InternalFolded++
			case n.Role == session.System && strings.TrimSpace(t) != "":
				// The agent's own instructions (a Codex developer message,
				// a system prompt): folded, rendered.
				bv := blockView{Kind: "foldmd", Name: "The agent's instructions (" + plural(lines(t), "line", "lines") + ")", Text: t, Lines: lines(t), Cut: cut}
				if len(t) <= markdownMax && cut == 0 {
					bv.HTML = Markdown(t)
				}
				v.Blocks = append(v.Blocks, bv)
				total.InternalFolded++
			case n.Role == session.Assistant && len(t) <= markdownMax && cut == 0:
				if strings.TrimSpace(t) != "" {
					v.Blocks = append(v.Blocks, blockView{Kind: "md", HTML: Markdown(t)})
				}
			default:
				v.Blocks = append(v.Blocks, blockView{Kind: "text", Text: t, Cut: cut})
			}
		case "thinking":
			t, cut := s.cut(textField(b, "thinking"))
			t = clean(t)
			v.Blocks = append(v.Blocks, blockView{Kind: "thinking", Text: t, Lines: lines(t), Signature: b.Get("signature").Exists(), Cut: cut})
		case "redactedThinking":
			v.Blocks = append(v.Blocks, blockView{Kind: "redacted", Lines: len(b.Get("data").Str)})
		case "toolUse":
			in, cut := s.cut(textField(b, "input"))
			if cut == 0 {
				in = pretty(in)
			}
			in = clean(in)
			call := blockView{Kind: "call", Name: clean(b.Get("name").Str), ID: clean(b.Get("id").Str), Text: in, Lines: lines(in), Cut: cut}
			call.Fold = call.Lines > foldLines
			toolKind(&call, b.Get("name").Str, textField(b, "input"))
			if call.Tool != "" {
				call.Fold = true // what it does is shown; its input stays, folded
			}
			if j := results[b.Get("id").Str]; j > 0 {
				if r := s.resultOf(j-1, b.Get("id").Str); r != nil {
					call.Result = r
					shown[strings.Clone(b.Get("id").Str)] = true
				}
			} else {
				call.Missing = true
			}
			v.Blocks = append(v.Blocks, call)
		case "toolResult":
			id := b.Get("toolUseId").Str
			if shown[id] {
				beside++
				return true // shown beside its call
			}
			t, cut := s.cut(textField(b, "content"))
			t = clean(t)
			v.Blocks = append(v.Blocks, blockView{Kind: "result", ID: clean(id), Text: t, Lines: lines(t), Fold: lines(t) > foldLines, Error: b.Get("isError").Bool(), Cut: cut, Images: imagesOf(b)})
		}
		return true
	})
	if len(v.Blocks) == 0 && beside > 0 {
		return nil, nil // a message of tool results, all shown with their calls
	}
	v.Internal = len(v.Blocks) > 0
	for _, b := range v.Blocks {
		v.Internal = v.Internal && b.Kind == "internal"
	}
	return v, nil
}

// imageMax is the largest image a page shows (decoded); a larger one is
// named with its size.
const imageMax = 1 << 20

// imageMagic is how each type a page shows begins: raster images only,
// which run nothing. Never SVG, which can hold a script; an image whose
// bytes are not of its type is not shown either.
var imageMagic = map[string][]string{
	"image/png":  {"\x89PNG\r\n\x1a\n"},
	"image/jpeg": {"\xff\xd8\xff"},
	"image/gif":  {"GIF87a", "GIF89a"},
	"image/webp": {"RIFF"}, // and "WEBP" at 8
}

// imageView is an image as a page shows it: a data: URL made of bytes
// checked to be an image of its type, or a note saying why it is not
// shown.
type imageView struct {
	Src  template.URL
	Note string
}

// imagesOf is the images of a tool result block (its "images" member).
func imagesOf(b gjson.Result) []imageView {
	var out []imageView
	b.Get("images").ForEach(func(_, img gjson.Result) bool {
		out = append(out, imageOf(img))
		return true
	})
	return out
}

// imageOf checks an image ({"mimeType","data"} base64, or {"url"}) and
// makes it a data: URL when it is a png, jpeg, gif or webp of at most
// imageMax bytes whose base64 decodes and whose bytes begin as its type
// does; else a note says what it is and why it is not shown.
func imageOf(img gjson.Result) imageView {
	media := strings.ToLower(strings.TrimSpace(img.Get("mimeType").Str))
	if u := img.Get("url"); u.Exists() {
		return imageView{Note: "an image at " + clean(u.Str) + ": not fetched"}
	}
	data := img.Get("data").Str
	n := len(data)/4*3 + len(data)%4*3/4
	what := "an image (" + clean(media) + ", " + sizeText(n) + ")"
	magic, ok := imageMagic[media]
	switch {
	case !ok:
		return imageView{Note: what + ": not shown, a page shows png, jpeg, gif and webp only"}
	case n > imageMax:
		return imageView{Note: what + ": larger than " + sizeText(imageMax) + ", not shown"}
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(data)
	if err != nil || len(data)%4 != 0 || strings.ContainsAny(data, "\r\n") {
		return imageView{Note: what + ": its data is not valid base64, not shown"}
	}
	good := false
	for _, m := range magic {
		good = good || strings.HasPrefix(string(raw), m)
	}
	if media == "image/webp" && (len(raw) < 12 || string(raw[8:12]) != "WEBP") {
		good = false
	}
	if !good {
		return imageView{Note: what + ": its bytes are not a " + strings.TrimPrefix(media, "image/") + " image, not shown"}
	}
	// The URL is made of a type of the list and checked base64 only.
	return imageView{Src: template.URL("data:" + media + ";base64," + data)}
}

// cut is t as a page shows it: at most s.maxText bytes (cut at a
// character's start), and how many bytes it leaves out.
func (s *Session) cut(t string) (string, int) {
	if s.maxText <= 0 || len(t) <= s.maxText {
		return t, 0
	}
	k := s.maxText
	for k > s.maxText-utf8.UTFMax && k > 0 && !utf8.RuneStart(t[k]) {
		k--
	}
	return t[:k], len(t) - k
}

// sizeText is n bytes for a reader: "1.5 MiB".
func sizeText(n int) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return plural(n, "byte", "bytes")
}

// markdownMax is the longest text rendered as markdown; a longer one (a
// pasted log) is shown as it is.
const markdownMax = 256 << 10

// internalTag names the tag an internal message starts with.
func internalTag(t string) string {
	t = strings.TrimSpace(t)
	if i := strings.IndexByte(t, '>'); strings.HasPrefix(t, "<") && i > 0 {
		return t[1:i]
	}
	return ""
}

// pieces cuts a text into pieces of at most pieceMax bytes, at character
// boundaries, for the page to escape and write one at a time: a template
// prints a value through a buffer of its size, and a tool's result can be
// hundreds of megabytes.
func pieces(t string) []string {
	out := make([]string, 0, len(t)/pieceMax+1)
	for len(t) > pieceMax {
		k := pieceMax
		for k > 0 && !utf8.RuneStart(t[k]) {
			k--
		}
		if k == 0 { // no character starts in the piece: cut anyway
			k = pieceMax
		}
		out = append(out, t[:k])
		t = t[k:]
	}
	return append(out, t)
}

const pieceMax = 64 << 10

// asString is b as a string, without a copy: for reading a line read back
// within the call that has it (what the page keeps past the call is
// copied: ids with strings.Clone, titles and stamps built anew).
func asString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// textField is the text of the string member key of the JSON object
// block ("" when it has none), read in place when it holds no escape, and
// else unescaped once into memory of its size: gjson unescapes a string
// into a buffer and copies that into a string, twice the text of a tool's
// result of hundreds of megabytes.
func textField(block gjson.Result, key string) string {
	obj := unsafe.Slice(unsafe.StringData(block.Raw), len(block.Raw))
	var out string
	rawjson.Members(obj, func(k, v []byte) bool {
		if !rawjson.KeyIs(k, key) {
			return true
		}
		switch {
		case !rawjson.IsString(v):
		case bytes.IndexByte(v, '\\') < 0:
			out = asString(v[1 : len(v)-1])
		default:
			out = asString(rawjson.AppendText(make([]byte, 0, len(v)), v))
		}
		return false
	})
	return out
}

// resultOf reads the result of tool call id from node j.
func (s *Session) resultOf(j int32, id string) *blockView {
	m, err := s.Message(j)
	if err != nil {
		return nil
	}
	var r *blockView
	gjson.Get(asString(m), "content").ForEach(func(_, b gjson.Result) bool {
		if b.Get("type").Str == "toolResult" && b.Get("toolUseId").Str == id {
			t, cut := s.cut(textField(b, "content"))
			t = clean(t)
			r = &blockView{Kind: "result", ID: clean(id), Text: t, Lines: lines(t), Fold: lines(t) > foldLines, Error: b.Get("isError").Bool(), Exit: exitOf(t), Cut: cut, Images: imagesOf(b)}
			return false
		}
		return true
	})
	return r
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// pageTemplates are parsed when a page is first written, not when the
// program starts: every command links this package, and the parse was
// about a twentieth of a start's CPU (race-built, as the tests run them).
var pageTemplates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"pieces": pieces,
		"plural": plural,
		"size":   sizeText,
	}).Parse(pageHTML))
})

const pageHTML = `{{define "head"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>panto session {{.ID}}</title>
<style>
:root { color-scheme: light dark; --fg: #1d1f21; --bg: #fdfdfc; --muted: #6a6f75; --line: #d9dcdf; --user: #eef4fb; --asst: #f6f6f4; --tool: #f3f0fa; --warn: #a3400b; }
@media (prefers-color-scheme: dark) { :root { --fg: #e3e5e8; --bg: #16181b; --muted: #9aa0a6; --line: #34383d; --user: #1c2633; --asst: #1f2124; --tool: #262231; --warn: #f0a56b; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 52rem; padding: 1rem; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); overflow-wrap: anywhere; display: flex; flex-direction: column; }
header { order: 0; } .summary { order: 1; } main { order: 2; } footer { order: 3; }
.summary { border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem; }
.summary h2 { font-size: 1.15rem; margin: 0 0 .4rem; }
.toc ol { margin: .3rem 0; padding-left: 1.6rem; font-size: .9rem; }
.toc a { color: inherit; }
.md > :first-child { margin-top: 0; } .md > :last-child { margin-bottom: 0; }
.md h2, .md h3, .md h4, .md h5, .md h6 { font-size: 1rem; margin: .8rem 0 .3rem; }
.md h2 { font-size: 1.1rem; }
.md p, .md ul, .md ol, .md blockquote { margin: .4rem 0; }
.md ul, .md ol { padding-left: 1.4rem; }
.md blockquote { border-left: 3px solid var(--line); padding-left: .6rem; color: var(--muted); }
.md .table { overflow-x: auto; }
.md table { border-collapse: collapse; font-size: .9rem; }
.md th, .md td { border: 1px solid var(--line); padding: .2rem .5rem; text-align: left; vertical-align: top; }
.md .target { color: var(--muted); font-size: .85em; }
.md code { background: color-mix(in srgb, var(--bg) 85%, var(--line)); padding: 0 .2em; border-radius: 3px; }
.md pre code { background: none; padding: 0; }
article.user.internal { background: transparent; border-style: dashed; }
header h1 { font-size: 1.3rem; margin: 0 0 .5rem; }
dl.info { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; margin: 0 0 1rem; font-size: .9rem; }
dl.info dt { color: var(--muted); }
dl.info dd { margin: 0; }
code, pre { font: .85rem/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { white-space: pre-wrap; margin: .3rem 0; padding: .5rem .6rem; background: color-mix(in srgb, var(--bg) 85%, var(--line)); border-radius: 4px; overflow-x: auto; }
article { border: 1px solid var(--line); border-radius: 6px; padding: .6rem .8rem; margin: .8rem 0; break-inside: avoid-page; }
article.user { background: var(--user); }
article.assistant { background: var(--asst); }
.meta { display: flex; flex-wrap: wrap; gap: .2rem .8rem; font-size: .8rem; color: var(--muted); margin-bottom: .3rem; }
.meta .role { font-weight: 600; color: var(--fg); text-transform: uppercase; letter-spacing: .04em; }
.change { color: var(--warn); }
.text { white-space: pre-wrap; }
details > summary { cursor: pointer; color: var(--muted); font-size: .85rem; }
.tool { border-left: 3px solid var(--line); background: var(--tool); padding: .3rem .6rem; margin: .4rem 0; border-radius: 4px; }
.tool .result { margin-top: .3rem; }
.tool.failed, .tool.error { border-left-color: #c0392b; }
.err, .exit.bad { color: #c0392b; font-weight: 600; }
.exit { font-size: .8rem; color: var(--muted); margin-left: .4rem; }
pre.cmd { font-weight: 600; }
pre.diff .del { color: #b3261e; } pre.diff .add { color: #1e7b34; } pre.diff .sep { color: var(--muted); }
.path { margin: .2rem 0; }
details.subagent { margin-top: .4rem; border-left: 3px solid var(--muted); padding-left: .5rem; }
details.subagent > summary { color: var(--fg); }
.subagent-body article { margin: .5rem 0; }
.unknown { color: var(--warn); }
nav.pages { margin: .4rem 0; font-size: .9rem; }
nav.pages a { color: inherit; }
figure.image { margin: .4rem 0; }
figure.image img { display: block; max-width: 100%; height: auto; max-height: 36rem; border: 1px solid var(--line); border-radius: 4px; }
figure.image figcaption { font-size: .8rem; color: var(--muted); }
.cut { display: block; color: var(--warn); font-style: italic; }
footer { margin-top: 1.5rem; padding-top: .5rem; border-top: 1px solid var(--line); font-size: .85rem; color: var(--muted); }
.usage { display: flex; flex-wrap: wrap; gap: .1rem .9rem; font-size: .85rem; margin-top: .3rem; }
.usage b { font-weight: 600; font-variant-numeric: tabular-nums; }
@media print { body { max-width: none; font-size: 11pt; display: block; } details { display: block; } details > summary { display: none; } details > * { display: block !important; } article { border-color: #999; } }
</style>
</head>
<body>
<header>
<h1>Session <code>{{.ID}}</code></h1>
<dl class="info">
<dt>Directory</dt><dd><code>{{.Cwd}}</code></dd>
<dt>Created</dt><dd>{{if .CreatedAt}}<time datetime="{{.CreatedAt}}">{{.Created}}</time>{{else}}{{.Created}}{{end}}</dd>
<dt>Shown</dt><dd>{{plural .OnPath "entry" "entries"}} of {{.Entries}}, to {{if .Branch}}the branch ending at <code>{{.Branch}}</code>{{else}}the current leaf <code>{{.Leaf}}</code>{{end}}</dd>
</dl>
{{with .Nav}}{{template "nav" .}}{{end}}</header>
<main>
{{end}}{{define "images"}}{{$alt := .Text}}{{range .Images}}<figure class="image">{{if .Src}}<img src="{{.Src}}" alt="{{$alt}}">{{end}}<figcaption>{{if .Note}}{{.Note}}{{else}}{{$alt}}{{end}}</figcaption></figure>{{end}}{{end}}{{define "resultimages"}}{{range .Images}}<figure class="image">{{if .Src}}<img src="{{.Src}}" alt="an image of the tool's result">{{end}}{{if .Note}}<figcaption>{{.Note}}</figcaption>{{end}}</figure>{{end}}{{end}}{{define "nav"}}<nav class="pages">{{if .Index}}<a href="{{.Index}}">All sessions</a>{{end}}{{if .Pages}}{{if .Index}} · {{end}}Page {{.Page}} of {{.Pages}}{{if .Prev}} · <a href="{{.Prev}}" rel="prev">← previous</a>{{end}}{{if .Next}} · <a href="{{.Next}}" rel="next">next →</a>{{end}}{{if gt .Page 1}} · <a href="{{.Home}}">the first (the summary)</a>{{end}}{{end}}</nav>
{{end}}{{define "cut"}}<span class="cut">[… {{size .}} more of this text, not shown on the page: panto-replay --format entries prints the whole entry]</span>{{end}}{{define "pagefoot"}}</main>
<footer>
{{with .Nav}}{{template "nav" .}}{{end}}<p>The session goes on on the next page; its summary is on the first page and the last.</p>
</footer>
{{if .Script}}<script>{{.Script}}</script>
{{end}}</body>
</html>
{{end}}{{define "message"}}<article class="{{.Role}}{{if .Internal}} internal{{end}}" id="e-{{.ID}}">
<div class="meta"><span class="role">{{if .Internal}}agent's own message{{else}}{{.Role}}{{end}}</span>{{if .DateTime}}<time datetime="{{.DateTime}}">{{.Time}}</time>{{else if .Time}}<time>{{.Time}}</time>{{end}}{{if .Stamp}}<span class="stamp">{{.Stamp}}</span>{{end}}{{if .StampChange}}<span class="change">model changed from {{.StampChange}}</span>{{end}}{{if .Stop}}<span>stop: {{.Stop}}</span>{{end}}<span>id {{.ID}}</span></div>
{{range .Blocks}}{{if eq .Kind "text"}}<div class="text">{{range pieces .Text}}{{.}}{{end}}{{if .Cut}}{{template "cut" .Cut}}{{end}}</div>
{{else if eq .Kind "md"}}<div class="md">{{.HTML}}</div>
{{else if eq .Kind "internal"}}<details class="internal"><summary>The agent's own message{{if .Name}} &lt;{{.Name}}&gt;{{end}} ({{plural .Lines "line" "lines"}}), not the user's words</summary><pre>{{range pieces .Text}}{{.}}{{end}}{{if .Cut}}{{template "cut" .Cut}}{{end}}</pre></details>
{{else if eq .Kind "foldmd"}}<details class="internal"><summary>{{.Name}}</summary>{{if .HTML}}<div class="md">{{.HTML}}</div>{{else}}<pre>{{range pieces .Text}}{{.}}{{end}}{{if .Cut}}{{template "cut" .Cut}}{{end}}</pre>{{end}}</details>
{{else if eq .Kind "image"}}{{template "images" .}}
{{else if eq .Kind "thinking"}}<details class="thinking"><summary>Thinking ({{plural .Lines "line" "lines"}}{{if .Signature}}, signed{{end}})</summary><pre>{{range pieces .Text}}{{.}}{{end}}{{if .Cut}}{{template "cut" .Cut}}{{end}}</pre></details>
{{else if eq .Kind "redacted"}}<p class="meta">Redacted thinking ({{.Lines}} bytes, kept to be sent back)</p>
{{else if eq .Kind "call"}}<div class="tool{{with .Result}}{{if .Error}} failed{{end}}{{end}}"><div><b>Tool call</b> <code>{{.Name}}</code> <span class="meta">{{.ID}}</span>{{if eq .Tool "shell"}}{{with .Result}}{{if .Exit}} <span class="exit{{if ne .Exit "0"}} bad{{end}}">exit {{.Exit}}</span>{{end}}{{end}}{{end}}</div>
{{if eq .Tool "shell"}}<pre class="cmd">$ {{range pieces .Cmd}}{{.}}{{end}}</pre>
{{else if eq .Tool "edit"}}<div class="path">Edit <code>{{.Path}}</code></div><pre class="diff">{{range .Diff}}<span class="{{.Class}}">{{.Sign}}{{range pieces .Text}}{{.}}{{end}}</span>
{{end}}</pre>
{{else if eq .Tool "read"}}<div class="path">Read <code>{{.Path}}</code></div>
{{else if eq .Tool "write"}}<div class="path">Write <code>{{.Path}}</code></div>
{{end}}{{if .Fold}}<details><summary>Input ({{plural .Lines "line" "lines"}})</summary><pre>{{range pieces .Text}}{{.}}{{end}}{{if .Cut}}{{template "cut" .Cut}}{{end}}</pre></details>{{else}}<pre>{{range pieces .Text}}{{.}}{{end}}{{if .Cut}}{{template "cut" .Cut}}{{end}}</pre>{{end}}
{{with .Result}}<div class="result{{if .Error}} error{{end}}">{{if .Fold}}<details><summary>{{if .Error}}Error{{else}}Result{{end}} ({{plural .Lines "line" "lines"}})</summary><pre>{{range pieces .Text}}{{.}}{{end}}{{if .Cut}}{{template "cut" .Cut}}{{end}}</pre></details>{{else}}<div class="meta">{{if .Error}}<span class="err">Error</span>{{else}}Result{{end}}</div><pre>{{range pieces .Text}}{{.}}{{end}}{{if .Cut}}{{template "cut" .Cut}}{{end}}</pre>{{end}}{{template "resultimages" .}}</div>{{end}}{{if .Missing}}<div class="meta">No result on this branch.</div>{{end}}{{with .Sub}}{{if .Missing}}
<div class="meta subagent-missing">Subagent{{if .Agent}} <code>{{.Agent}}</code>{{end}}: its conversation is not in this log{{if .From}}, nor in {{.From}}{{end}}.</div>{{else}}
<details class="subagent"><summary>The subagent's conversation{{if .Agent}} (agent <code>{{.Agent}}</code>){{end}}: {{plural .Messages "message" "messages"}}, {{plural .Replies "reply" "replies"}}{{if .Cost}}, cost {{.Cost}}{{end}}</summary>
<div class="subagent-body">
{{.HTML}}</div>{{if .From}}<p class="meta">Read from {{.From}}.</p>{{end}}</details>{{end}}{{end}}
</div>
{{else if eq .Kind "result"}}<div class="tool result{{if .Error}} error{{end}}"><div class="meta">{{if .Error}}<span class="err">Error</span>, result{{else}}Result{{end}} of {{.ID}}</div>{{if .Fold}}<details><summary>{{plural .Lines "line" "lines"}}</summary><pre>{{range pieces .Text}}{{.}}{{end}}{{if .Cut}}{{template "cut" .Cut}}{{end}}</pre></details>{{else}}<pre>{{range pieces .Text}}{{.}}{{end}}{{if .Cut}}{{template "cut" .Cut}}{{end}}</pre>{{end}}{{template "resultimages" .}}</div>
{{end}}{{end}}{{if .Usage}}<div class="usage">{{range .Usage}}<span>{{.Name}} <b>{{.Value}}</b></span>{{end}}{{if .Cost}}<span>cost <b{{if .CostUnknown}} class="unknown"{{end}}>{{.Cost}}</b></span>{{end}}</div>
{{else if .Cost}}<div class="meta unknown">cost {{.Cost}}</div>
{{end}}</article>
{{end}}{{define "foot"}}</main>
<section class="summary" aria-label="summary">
<h2>{{if .Title}}{{.Title}}{{else}}(no prompt){{end}}</h2>
<dl class="info">
<dt>Agent</dt><dd>{{.Agent}}</dd>
{{if .Models}}<dt>Models</dt><dd>{{range $i, $m := .Models}}{{if $i}}, {{end}}<code>{{$m}}</code>{{end}}</dd>{{end}}
{{if .Span}}<dt>When</dt><dd>{{range $i, $t := .Span}}{{if $i}} – {{end}}<time datetime="{{$t.At}}">{{$t.Text}}</time>{{end}}{{with .Duration}} ({{.}}){{end}}</dd>{{end}}
<dt>Turns</dt><dd>{{plural .PromptCount "prompt" "prompts"}}, {{plural .Replies "reply" "replies"}}{{if .InternalFolded}}; {{.InternalFolded}} of the agent's own messages folded{{end}}</dd>
{{if .Priced}}<dt>Cost</dt><dd class="total{{if not .Cost.Known}} unknown{{end}}">{{.CostText}}</dd>{{end}}{{if .Subagents}}
<dt>Subagents</dt><dd class="subagents">{{plural .Subagents "conversation" "conversations"}} (under their calls), {{plural .SubReplies "reply" "replies"}}{{if .Priced}}, cost {{.SubCostText}}; with the session's, {{.AllCostText}}{{end}}</dd>{{end}}
</dl>
{{if gt .PromptCount 1}}<details class="toc"{{if le .PromptCount 12}} open{{end}}><summary>The prompts ({{.PromptCount}})</summary><ol>{{range .Prompts}}<li><a href="{{.Page}}#e-{{.ID}}">{{.Title}}</a>{{if .DateTime}} <span class="meta"><time datetime="{{.DateTime}}">{{.Time}}</time></span>{{else if .Time}} <span class="meta">{{.Time}}</span>{{end}}</li>{{end}}</ol>{{if .MorePrompts}}<p class="meta">… and {{.MorePrompts}} more, not listed.</p>{{end}}</details>{{end}}
</section>
<footer>
{{with .Nav}}{{template "nav" .}}{{end}}<p>{{plural .Replies "reply" "replies"}}{{if .NoUsage}}, {{.NoUsage}} without usage{{end}}: input {{.Input}}, output {{.Output}} (reasoning {{.Reas}}), cache read {{.CacheRead}}, cache write {{.CacheWrite}} (1h {{.CacheWrite1h}}){{if .Priced}}; cost <span class="total{{if not .Cost.Known}} unknown{{end}}">{{.CostText}}</span>{{end}}.</p>
{{if and .Priced .PricesFrom}}<p>Prices: {{.PricesFrom}}.</p>
{{end}}{{if .Generator}}<p>{{.Generator}}</p>{{end}}
</footer>
{{if .Script}}<script>{{.Script}}</script>
{{end}}</body>
</html>
{{end}}`
