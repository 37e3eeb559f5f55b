package costcmd

import "time"

// ParseDay reads a --since or --until day as panto-cost does (YYYY-MM-DD,
// YYYYMMDD, today, yesterday, Nd, Nw) in loc; for an end, the first
// instant of the next day. panto-log search takes the same days.
func ParseDay(s string, end bool, loc *time.Location, now time.Time) (time.Time, error) {
	return parseDay(s, end, loc, now)
}
