package costcmd

import (
	"fmt"
	"time"
)

// hourKey is the key of a turn's hour, of which --by block makes blocks.
const hourKey = "2006-01-02T15"

// blockKey is a block's key: its start, in the report's zone.
const blockKey = "2006-01-02 15:04"

// blockLen is a block's length: the 5-hour window of the providers'
// usage limits (and of ccusage's blocks).
const blockLen = 5 * time.Hour

// block is what a report says of a block beside its row.
type block struct {
	r           *row
	start, end  time.Time
	first, last time.Time // its first and last turns
	active      bool      // now is in it
	now         time.Time
}

// blocks makes the rows of hours into blocks of 5 hours: a block starts at
// the hour of the first turn not in the block before (ccusage's rule: the
// first turn's time floored to the hour), and holds every turn until 5
// hours after its start. The block that now is in is the active one.
func (g *grammar) blocks(hours []*row, now time.Time) ([]*row, *block, error) {
	var dated []*row
	var out []*row
	for _, h := range hours {
		if _, err := time.ParseInLocation(hourKey, h.key, g.loc); err != nil {
			out = append(out, h) // (no date)
			continue
		}
		dated = append(dated, h)
	}
	g.sort(dated) // by hour
	var cur *block
	var all []*block
	for _, h := range dated {
		start, _ := time.ParseInLocation(hourKey, h.key, g.loc)
		if cur == nil || !start.Before(cur.end) {
			cur = &block{r: newRow(start.Format(blockKey)), start: start, end: start.Add(blockLen)}
			all = append(all, cur)
		}
		if err := cur.r.merge(h); err != nil {
			return nil, nil, err
		}
		for _, s := range h.subOrder { // --breakdown's rows
			if err := cur.r.sub(s.key).merge(s); err != nil {
				return nil, nil, err
			}
		}
		if cur.first.IsZero() || h.firstTime.Before(cur.first) {
			cur.first = h.firstTime
		}
		if h.sortTime.After(cur.last) {
			cur.last = h.sortTime
		}
	}
	var active *block
	for _, b := range all {
		b.r.block = b
		if !now.Before(b.start) && now.Before(b.end) {
			b.active, b.now, active = true, now, b
			b.r.key += " (active)"
		}
		out = append(out, b.r)
	}
	return out, active, nil
}

// burn is a block's rate of spending from its first turn to its last
// (ccusage's burn rate): USD an hour and tokens a minute; ok is false
// when the block's turns span no time.
func (b *block) burn() (usdPerHour, tokensPerMinute float64, ok bool) {
	d := b.last.Sub(b.first)
	if d <= 0 {
		return 0, 0, false
	}
	u := b.r.tokens
	tokens := float64(u.Input) + float64(u.Output) + float64(u.CacheRead) + float64(u.CacheWrite)
	return float64(b.r.cost.Pico) / 1e12 / d.Hours(), tokens / d.Minutes(), true
}

// projected is the block's cost at its end if it goes on at its burn rate.
func (b *block) projected() (float64, bool) {
	rate, _, ok := b.burn()
	if !ok {
		return 0, false
	}
	return float64(b.r.cost.Pico)/1e12 + rate*b.end.Sub(b.now).Hours(), true
}

// line says what the active block has spent, its burn rate and where it
// is heading, under a table.
func (b *block) line(loc *time.Location) string {
	left := b.end.Sub(b.now).Round(time.Minute)
	s := fmt.Sprintf("active block %s–%s (%s left): %s so far", b.start.In(loc).Format("15:04"), b.end.In(loc).Format("15:04"), hm(left), costCell(b.r.cost))
	if rate, tpm, ok := b.burn(); ok {
		p, _ := b.projected()
		s += fmt.Sprintf(", burn rate $%.2f/h (%s tokens/min), projected $%.2f by %s", rate, num(int64(tpm)), p, b.end.In(loc).Format("15:04"))
		if !b.r.cost.Known {
			s += " (of the known part)"
		}
	}
	return s
}

func hm(d time.Duration) string {
	h, m := int(d.Hours()), int(d.Minutes())%60
	if h == 0 {
		return fmt.Sprintf("%dm", m)
	}
	return fmt.Sprintf("%dh%02dm", h, m)
}

// blockJSON is what a row of --by block says of its block.
type blockJSON struct {
	Start     string     `json:"start"`
	End       string     `json:"end"`
	FirstTurn string     `json:"firstTurn"`
	LastTurn  string     `json:"lastTurn"`
	Active    bool       `json:"active"`
	BurnRate  *burnJSON  `json:"burnRate,omitempty"`  // the active block's
	Projected *moneyJSON `json:"projected,omitempty"` // the active block's cost at its end at that rate (an estimate)
}

type burnJSON struct {
	USDPerHour      string `json:"usdPerHour"`
	TokensPerMinute int64  `json:"tokensPerMinute"`
}

type moneyJSON struct {
	USD string `json:"usd"`
}

func (b *block) json() *blockJSON {
	j := &blockJSON{Start: b.start.UTC().Format(time.RFC3339), End: b.end.UTC().Format(time.RFC3339),
		FirstTurn: b.first.UTC().Format(time.RFC3339Nano), LastTurn: b.last.UTC().Format(time.RFC3339Nano), Active: b.active}
	if b.active {
		if rate, tpm, ok := b.burn(); ok {
			j.BurnRate = &burnJSON{fmt.Sprintf("%.6f", rate), int64(tpm)}
			p, _ := b.projected()
			j.Projected = &moneyJSON{fmt.Sprintf("%.6f", p)}
		}
	}
	return j
}
