package session

import (
	"fmt"

	"github.com/panto-dev/panto/internal/rawjson"
)

// Usage is an assistant message's token counts (SPEC §2). Input is fresh
// input only; Reasoning is a part of Output and CacheWrite1h a part of
// CacheWrite, never added to them.
type Usage struct {
	Input, Output, CacheRead, CacheWrite, Reasoning, CacheWrite1h int64
}

// Check applies the rules of SPEC §2 that relate the counters: a part is
// never more than its whole.
func (u Usage) Check() error {
	switch {
	case u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheWrite < 0 || u.Reasoning < 0 || u.CacheWrite1h < 0:
		return fmt.Errorf("%w: usage counts must be non-negative", ErrInvalidMsg)
	case u.Reasoning > u.Output:
		return fmt.Errorf("%w: usage.reasoning (%d) is a part of usage.output (%d) and cannot exceed it", ErrInvalidMsg, u.Reasoning, u.Output)
	case u.CacheWrite1h > u.CacheWrite:
		return fmt.Errorf("%w: usage.cacheWrite1h (%d) is a part of usage.cacheWrite (%d) and cannot exceed it", ErrInvalidMsg, u.CacheWrite1h, u.CacheWrite)
	}
	return nil
}

// Reply is what an assistant message says of itself: its own stamp and,
// when it has valid usage, its token counts.
type Reply struct {
	Usage    Usage
	HasUsage bool // a valid "usage" object was there
	provider span // the raw JSON values of "provider" and "model", in the line
	model    span
}

// span is where a raw value lies in a line; Len 0 for none.
type span struct{ Off, Len int }

func spanOf(line, val []byte) span {
	if len(val) == 0 {
		return span{}
	}
	return span{Off: cap(line) - cap(val), Len: len(val)}
}

func (s span) in(line []byte) []byte {
	if s.Len == 0 || s.Off+s.Len > len(line) {
		return nil
	}
	return line[s.Off : s.Off+s.Len]
}

// Stamp returns the raw JSON values of the message's "provider" and
// "model" (nil when absent) within line, the bytes the Reply was read from
// (the entry line of a Line, the message of ReadMessage).
func (r *Reply) Stamp(line []byte) (provider, model []byte) {
	return r.provider.in(line), r.model.in(line)
}

// usageKey returns the index in Usage's order of a usage counter's key,
// or -1.
func usageKey(k []byte) int {
	switch string(k) {
	case "input":
		return 0
	case "output":
		return 1
	case "cacheRead":
		return 2
	case "cacheWrite":
		return 3
	case "reasoning":
		return 4
	case "cacheWrite1h":
		return 5
	}
	return -1
}

// usageAt validates the usage value at b[i], nested depth deep, and reads
// its counters, in one pass. It returns the index after the value (-1
// when it is not valid JSON).
func usageAt(b []byte, i, depth int) (int, Usage, error) {
	if b[i] != '{' {
		return skip(b, i, depth), Usage{}, fmt.Errorf("%w: \"usage\" must be an object", ErrInvalidMsg)
	}
	var vals [6]int64
	var seen [6]bool
	bad := -1
	end, ok := rawjson.Object(b, i, depth, func(k []byte, vs int) int {
		ve := skip(b, vs, depth+1)
		if j := usageKey(k); j >= 0 && ve >= 0 && bad < 0 {
			n, ok := rawjson.Int(b[vs:ve])
			if !ok {
				bad = j
			}
			vals[j], seen[j] = n, true
		}
		return ve
	})
	if !ok {
		return -1, Usage{}, nil
	}
	if bad >= 0 {
		name := [...]string{"input", "output", "cacheRead", "cacheWrite", "reasoning", "cacheWrite1h"}[bad]
		return end, Usage{}, fmt.Errorf("%w: usage.%s must be a non-negative integer", ErrInvalidMsg, name)
	}
	if !seen[0] || !seen[1] {
		// SPEC §2: input and output are always there (only the others
		// are left out when zero); a usage without them is not a known 0.
		return end, Usage{}, fmt.Errorf("%w: usage needs \"input\" and \"output\" (unknown is not zero)", ErrInvalidMsg)
	}
	u := Usage{vals[0], vals[1], vals[2], vals[3], vals[4], vals[5]}
	return end, u, u.Check()
}
