package costcmd

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/panto-dev/panto/internal/pricing"
	"github.com/panto-dev/panto/internal/replay"
)

// chart is the cost of every period (a day, or the week or month a report
// is by) and model: the bars of a page; for a report by session, model,
// project or agent, a bar a row (the costliest maxCategories).
type chart struct {
	unit    string  // day, week or month
	period  grammar // keys turns by that unit
	periods map[string]map[string]*row
}

func newChart(by string, loc *time.Location) *chart {
	unit := "day" // --by turn: the days of the turns
	if by != "turn" {
		unit = by // a bar a row: a period, or a session, model, project, agent
	}
	return &chart{unit: unit, period: grammar{By: unit, loc: loc}, periods: map[string]map[string]*row{}}
}

func (c *chart) add(t *turn, b *book) error {
	period := c.period.key(t)
	models := c.periods[period]
	if models == nil {
		models = map[string]*row{}
		c.periods[period] = models
	}
	m := modelName(t.key, t.mode)
	r := models[m]
	if r == nil {
		r = newRow(m)
		models[m] = r
	}
	return r.add(t, b)
}

// The chart's geometry, in SVG user units.
const (
	chartW, chartH  = 720, 300
	plotX, plotY    = 64, 20
	plotW, plotH    = chartW - plotX - 16, chartH - plotY - 84 // below the plot: labels of 12 characters, upright
	labelGap        = 14                                       // the least distance between two labels: they never overlap
	unknownMarkerPx = 6                                        // the least height of a segment whose cost is unknown: never drawn as zero
)

// palette is the models' colours, distinct in light and dark.
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

type svgBar struct {
	X, W           float64
	Label, Title   string
	LabelX, LabelY float64
	Segments       []svgSeg
	Unknown        bool
	MarkX, MarkY   float64
}

type svgSeg struct {
	X, W, Y, H float64
	Color      string
	Unknown    bool
	Title      string
}

type svgTick struct {
	Y     float64
	Label string
}

type legendItem struct {
	Color, Model string
}

type chartView struct {
	Unit    string
	W, H    int
	PlotX   int
	PlotY   int
	PlotW   int
	PlotH   int
	Bottom  int
	Right   int
	Bars    []svgBar
	Ticks   []svgTick
	Legend  []legendItem
	Unknown bool
	Empty   bool
	Omitted int // rows left out of a chart of rows
}

// maxCategories is the most bars of a chart of rows (sessions, models).
const maxCategories = 30

// periodStart is the first day of a chart's period key (2026-04-25,
// 2026-W17, 2026-04), the zero time for "(no date)".
func periodStart(unit, key string) time.Time {
	switch unit {
	case "day":
		t, _ := time.Parse("2006-01-02", key)
		return t
	case "month":
		t, _ := time.Parse("2006-01", key)
		return t
	}
	var y, w int
	if n, _ := fmt.Sscanf(key, "%d-W%d", &y, &w); n != 2 {
		return time.Time{}
	}
	jan4 := time.Date(y, 1, 4, 0, 0, 0, 0, time.UTC) // in ISO week 1
	monday := jan4.AddDate(0, 0, -(int(jan4.Weekday())+6)%7)
	return monday.AddDate(0, 0, 7*(w-1))
}

// periodIndex is how many periods of unit t lies after t0.
func periodIndex(unit string, t0, t time.Time) int {
	switch unit {
	case "month":
		return (t.Year()-t0.Year())*12 + int(t.Month()-t0.Month())
	case "week":
		return int(t.Sub(t0).Hours()+12) / (24 * 7)
	}
	return int(t.Sub(t0).Hours()+12) / 24
}

// view lays the chart out: a bar a period, in order, a segment a model,
// its height the known part of its cost; a segment whose cost is unknown
// is hatched and its bar marked "≥", never drawn as if it were the whole.
// A chart of rows (sessions, models, projects, agents) names each bar by
// its name, short, and gives the whole in the bar's title: names maps a
// row's grouping key to both (a session's key holds its agent, a NUL and
// its id: never shown).
type barName struct{ label, title string }

func (c *chart) view(names map[string]barName) chartView {
	v := chartView{Unit: c.unit, W: chartW, H: chartH, PlotX: plotX, PlotY: plotY, PlotW: plotW, PlotH: plotH, Bottom: plotY + plotH, Right: plotX + plotW}
	var periods []string
	modelSet := map[string]bool{}
	var top int64
	for p, models := range c.periods {
		periods = append(periods, p)
		var sum int64
		for m, r := range models {
			modelSet[m] = true
			sum += r.cost.Pico
		}
		top = max(top, sum)
	}
	sort.Strings(periods)
	dated := c.unit == "day" || c.unit == "week" || c.unit == "month"
	if !dated { // the costliest first, as the table
		cost := func(p string) (sum int64) {
			for _, r := range c.periods[p] {
				sum += r.cost.Pico
			}
			return sum
		}
		sort.SliceStable(periods, func(i, j int) bool { return cost(periods[i]) > cost(periods[j]) })
		if len(periods) > maxCategories {
			v.Omitted = len(periods) - maxCategories
			periods = periods[:maxCategories]
		}
	}
	var models []string
	for m := range modelSet {
		models = append(models, m)
	}
	sort.Strings(models)
	color := map[string]string{}
	for i, m := range models {
		color[m] = palette[i%len(palette)]
		v.Legend = append(v.Legend, legendItem{color[m], m})
	}
	if len(periods) == 0 {
		v.Empty = true
		return v
	}
	scale := 0.0
	if top > 0 {
		scale = float64(plotH) / float64(top)
	}
	for i := 0; i <= 4; i++ {
		val := top * int64(i) / 4
		v.Ticks = append(v.Ticks, svgTick{Y: float64(plotY+plotH) - float64(val)*scale, Label: tickLabel(val, top)})
	}
	// A dated chart's axis is time: a bar stands at its period's place, so
	// that a gap of two months looks like one; periods with no date go
	// after, one slot each.
	starts := make([]time.Time, len(periods))
	var undated int
	for i, p := range periods {
		if dated {
			starts[i] = periodStart(c.unit, p)
		}
		if starts[i].IsZero() {
			undated++
		}
	}
	var t0, t1 time.Time
	for _, t := range starts {
		if !t.IsZero() && (t0.IsZero() || t.Before(t0)) {
			t0 = t
		}
		if t.After(t1) {
			t1 = t
		}
	}
	slots := float64(undated) // the width, in periods
	if !t0.IsZero() {
		slots += float64(periodIndex(c.unit, t0, t1)) + 1
	}
	slot := float64(plotW) / slots
	w := max(2, slot*0.7)
	every := 1 // a label every few bars, when they are narrow: labels stand upright, labelGap apart
	if slot < labelGap {
		every = int(math.Ceil(labelGap / slot))
	}
	after := 0 // undated periods placed so far
	for i, p := range periods {
		var at float64
		if starts[i].IsZero() {
			at = slots - float64(undated) + float64(after)
			after++
		} else {
			at = float64(periodIndex(c.unit, t0, starts[i]))
		}
		label, name := p, p
		if n, ok := names[p]; ok {
			label, name = n.label, n.title
		} else if !dated {
			label = shorten(p, 12)
		}
		b := svgBar{X: float64(plotX) + at*slot + (slot-w)/2, W: w, Label: label}
		if i%every == 0 {
			b.LabelX, b.LabelY = b.X+w/2, float64(plotY+plotH+6)
		} else {
			b.Label = ""
		}
		y := float64(plotY + plotH)
		var sum int64
		var parts []string
		for _, m := range models {
			r := c.periods[p][m]
			if r == nil {
				continue
			}
			h := float64(r.cost.Pico) * scale
			s := svgSeg{X: b.X, W: w, H: h, Color: color[m], Unknown: !r.cost.Known, Title: m + ": " + costText(r.cost)}
			if s.Unknown && h < unknownMarkerPx {
				s.H = unknownMarkerPx
			}
			y -= s.H
			s.Y = y
			b.Segments = append(b.Segments, s)
			b.Unknown = b.Unknown || s.Unknown
			sum += r.cost.Pico
			parts = append(parts, s.Title)
		}
		total := pricing.Cost{Pico: sum, Known: !b.Unknown}
		b.Title = name + ": " + costText(total) + "\n" + strings.Join(parts, "\n")
		b.MarkX, b.MarkY = b.X+w/2, y-4
		v.Unknown = v.Unknown || b.Unknown
		v.Bars = append(v.Bars, b)
	}
	return v
}

// tickLabel is an amount on the chart's axis, with as many decimals as
// the largest amount needs to show three digits.
func tickLabel(pico, top int64) string {
	decimals := 2
	for t := top; t > 0 && t < 100_000_000_000 && decimals < 8; t *= 10 { // under $0.1: more decimals
		decimals++
	}
	return "$" + strconv.FormatFloat(float64(pico)/1e12, 'f', decimals, 64)
}

// costText is a cost exactly, or its known part marked as a lower bound.
func costText(c pricing.Cost) string {
	if c.Known {
		return "$" + pricing.USD(c.Pico)
	}
	return "≥ $" + pricing.USD(c.Pico) + " (unknown)"
}

type reportRow struct {
	Key, Turns, Input, Output, CacheRead, CacheWrite, CacheWrite1h, Reasoning string
	Cost, Exact                                                               string // cents, and exactly
	Unknown                                                                   bool
	Why                                                                       string
	Href                                                                      string // a site's page of the session
}

func reportRowOf(r *row, key string) reportRow {
	out := reportRow{Key: key, Turns: num(int64(r.turns)), Input: num(r.tokens.Input), Output: num(r.tokens.Output), CacheRead: num(r.tokens.CacheRead),
		CacheWrite: num(r.tokens.CacheWrite), CacheWrite1h: num(r.tokens.CacheWrite1h), Reasoning: num(r.tokens.Reasoning), Cost: costCell(r.cost), Exact: costText(r.cost), Unknown: !r.cost.Known}
	var why []string
	if len(r.missing) > 0 {
		why = append(why, "no price for "+strings.Join(missingList(r.missing), ", "))
	}
	if r.noUsage > 0 {
		why = append(why, plural(r.noUsage, "reply", "replies")+" without usage")
	}
	if r.invalid > 0 {
		why = append(why, plural(r.invalid, "invalid reply", "invalid replies"))
	}
	out.Why = strings.Join(why, "; ")
	return out
}

type reportView struct {
	CSP, By, Title string
	Rows           []reportRow
	Total          reportRow
	Chart          chartView
	Skipped        map[string]int
	Prices         string // where the prices came from
	PricedByName   string // models priced by their name alone
}

// writeHTML writes the report as one self-contained page (SPEC §12): the
// table of the rows and an inline SVG chart of cost by period, stacked by
// model; no script, nothing fetched, every name escaped.
func writeHTML(w io.Writer, by string, rows []*row, total *row, c *chart, skip skipped, prices string, links map[string]string) error {
	v := reportView{CSP: replay.PageCSP, By: by, Title: "panto-cost by " + by, Chart: c.view(barNames(by, rows)), Skipped: map[string]int{}, Prices: prices}
	if len(total.pricedAs) > 0 {
		v.PricedByName = strings.Join(missingList(total.pricedAs), ", ")
	}
	for k, n := range skip.m() {
		if n > 0 {
			v.Skipped[k] = n
		}
	}
	for _, r := range rows {
		rr := reportRowOf(r, r.label(by))
		if by == "session" && links != nil { // a site's report: each session links to its page
			if h, ok := links[r.origin]; ok && r.origin != "" {
				rr.Href = h
			} else if h, ok := links[r.key]; ok {
				rr.Href = h
			}
		}
		v.Rows = append(v.Rows, rr)
	}
	v.Total = reportRowOf(total, "Total")
	return reportTemplate().Execute(w, v)
}

// barNames names the bars of a chart of sessions: by the session's id as
// its agent gives it, cut to the shortest prefix (8 characters at least)
// that tells the chart's sessions apart, its whole label in the title.
func barNames(by string, rows []*row) map[string]barName {
	if by != "session" {
		return nil
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.key
		if r.origin != "" {
			ids[i] = r.origin
		}
	}
	n := uniquePrefix(ids, 8)
	names := map[string]barName{}
	for i, r := range rows {
		names[r.id] = barName{label: prefix(ids[i], n), title: r.agent + " " + r.label(by)}
	}
	return names
}

// uniquePrefix is the least length, min at least, at which the prefixes of
// ids differ (ids that are equal whole stay equal).
func uniquePrefix(ids []string, min int) int {
	n := min
	for {
		seen := map[string]bool{}
		clash, longer := false, false
		for _, id := range ids {
			p := prefix(id, n)
			if seen[p] {
				clash = true
			}
			seen[p] = true
			longer = longer || len([]rune(id)) > n
		}
		if !clash || !longer {
			return n
		}
		n++
	}
}

func prefix(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

var reportTemplate = sync.OnceValue(func() *template.Template { // parsed when first used, not at every start
	return template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.Title}}</title>
<style>
:root { color-scheme: light dark; --fg: #1d1f21; --bg: #fdfdfc; --muted: #6a6f75; --line: #d9dcdf; --warn: #a3400b; }
@media (prefers-color-scheme: dark) { :root { --fg: #e3e5e8; --bg: #16181b; --muted: #9aa0a6; --line: #34383d; --warn: #f0a56b; } }
body { margin: 0 auto; max-width: 60rem; padding: 1rem; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 1.3rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { padding: .25rem .5rem; border-bottom: 1px solid var(--line); text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; white-space: normal; overflow-wrap: anywhere; min-width: 10rem; }
tr.total td { font-weight: 600; border-top: 2px solid var(--fg); }
.unknown { color: var(--warn); }
.why { font-size: .8rem; color: var(--muted); white-space: normal; text-align: left; }
svg.chart { width: 100%; height: auto; max-width: 720px; }
svg.chart text { fill: var(--fg); font: 11px system-ui, sans-serif; }
svg.chart .axis { stroke: var(--muted); stroke-width: 1; }
.legend { display: flex; flex-wrap: wrap; gap: .3rem 1rem; font-size: .85rem; margin: .3rem 0 1rem; }
.swatch { display: inline-block; width: .8rem; height: .8rem; vertical-align: -.1rem; margin-right: .3rem; border-radius: 2px; }
.note { font-size: .85rem; color: var(--muted); }
th:nth-child(2), td:nth-child(2) { font-weight: 600; }
@media (max-width: 600px) {
  body { padding: .6rem; }
  th:first-child, td:first-child { min-width: 8rem; max-width: 11rem; }
  .chartbox svg.chart { min-width: 640px; } /* labels stay readable: the chart scrolls in its box */
}
@media print { body { max-width: none; } }
</style>
</head>
<body>
<h1>Cost by {{.By}}</h1>
{{with .Chart}}{{if .Empty}}<p class="note">No replies to chart.</p>{{else}}<figure>
<div class="scroll chartbox"><svg class="chart" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="Cost by {{.Unit}}, stacked by model">
<defs><pattern id="unknown" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#bbb"/><line x1="0" y1="0" x2="0" y2="6" stroke="#333" stroke-width="3"/></pattern></defs>
{{range .Ticks}}<line class="axis" x1="{{$.Chart.PlotX}}" x2="{{$.Chart.Right}}" y1="{{.Y}}" y2="{{.Y}}" stroke-dasharray="2 3"/><text x="{{$.Chart.PlotX}}" dx="-4" y="{{.Y}}" dy="4" text-anchor="end">{{.Label}}</text>
{{end}}<line class="axis" x1="{{.PlotX}}" x2="{{.PlotX}}" y1="{{.PlotY}}" y2="{{.Bottom}}"/><line class="axis" x1="{{.PlotX}}" x2="{{.Right}}" y1="{{.Bottom}}" y2="{{.Bottom}}"/>
{{range .Bars}}<g class="bar"><title>{{.Title}}</title>{{range .Segments}}<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="{{if .Unknown}}url(#unknown){{else}}{{.Color}}{{end}}" stroke="{{.Color}}"><title>{{.Title}}</title></rect>{{end}}{{if .Unknown}}<text class="unknown-mark" x="{{.MarkX}}" y="{{.MarkY}}" text-anchor="middle">≥</text>{{end}}{{if .Label}}<text x="{{.LabelX}}" y="{{.LabelY}}" text-anchor="end" transform="rotate(-90 {{.LabelX}} {{.LabelY}})" dy="4">{{.Label}}</text>{{end}}</g>
{{end}}</svg></div>
<figcaption class="legend">{{range .Legend}}<span><span class="swatch" style="background: {{.Color}}"></span>{{.Model}}</span>{{end}}{{if .Unknown}}<span><svg width="12" height="12" style="vertical-align: -.1rem"><rect width="12" height="12" fill="url(#unknown)"/></svg> cost unknown (the known part is drawn; “≥” marks the bar)</span>{{end}}{{if .Omitted}}<span>the {{.Omitted}} cheapest not drawn (the table has them)</span>{{end}}</figcaption>
</figure>{{end}}{{end}}
<div class="scroll"><table>
<thead><tr><th>{{.By}}</th><th>cost</th><th>turns</th><th>input</th><th>output</th><th>cache read</th><th>cache write</th><th>of which 1h</th><th>reasoning</th></tr></thead>
<tbody>
{{range .Rows}}<tr><td>{{if .Href}}<a href="{{.Href}}">{{.Key}}</a>{{else}}{{.Key}}{{end}}</td><td title="{{.Exact}}"{{if .Unknown}} class="unknown"{{end}}>{{.Cost}}</td><td>{{.Turns}}</td><td>{{.Input}}</td><td>{{.Output}}</td><td>{{.CacheRead}}</td><td>{{.CacheWrite}}</td><td>{{.CacheWrite1h}}</td><td>{{.Reasoning}}</td></tr>
{{if .Why}}<tr><td class="why" colspan="9">{{.Why}}</td></tr>
{{end}}{{end}}<tr class="total"><td>{{.Total.Key}}</td><td title="{{.Total.Exact}}"{{if .Total.Unknown}} class="unknown"{{end}}>{{.Total.Cost}}</td><td>{{.Total.Turns}}</td><td>{{.Total.Input}}</td><td>{{.Total.Output}}</td><td>{{.Total.CacheRead}}</td><td>{{.Total.CacheWrite}}</td><td>{{.Total.CacheWrite1h}}</td><td>{{.Total.Reasoning}}</td></tr>
</tbody></table></div>
{{if .Total.Why}}<p class="note unknown">Unknown: {{.Total.Why}}. The cost shown is the known part.</p>{{end}}
{{if .Skipped}}<p class="note">Skipped: {{range $k, $n := .Skipped}}{{$k}} {{$n}} {{end}}</p>{{end}}
<p class="note">Prices: {{.Prices}}.{{if .PricedByName}} Priced by name (the provider is not in the price table; one model of the table has the name): {{.PricedByName}}.{{end}}</p>
<p class="note">Costs are rounded to cents here (“*”: a part is unknown, the known part is shown); each cell's title, and panto-cost --format json, give them exactly.</p>
</body>
</html>
`))
})

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
