package search

import (
	"bytes"
)

// prefilter finds the raw lines that may hold a match, before anything is
// decoded. It must never miss one: a line's text is JSON-encoded, so a
// needle's quote, backslash or control character is written escaped, and
// a JSON writer may escape more (Go: < > &; some: / and '; Python:
// every non-ASCII character as \uXXXX, surrogate pairs too). What no
// writer escapes is printable ASCII but those: a run of such bytes of the
// needle is in the raw line, as it is, whenever the needle is in the text.
type prefilter struct {
	// run is a run of the needle's bytes that no JSON writer escapes
	// (lower-case when fold); rare is the index in run of its rarest byte.
	run   []byte
	fold  bool
	rare  int
	rare2 int // the next rarest (rare itself in a run of one byte)
	// also are the runs of the query's other words: a candidate line
	// must hold each of them too.
	also []runCheck
	// backslash: the needle has no such run but a character JSON always
	// escapes: a candidate line holds a backslash. raw: neither: a line
	// holding raw (as written), a backslash, or (fold) any non-ASCII byte.
	backslash bool
	raw       []byte
}

type runCheck struct {
	run  []byte
	fold bool
}

// safe reports whether a JSON writer writes byte c as it is in a string.
// With fold, the letters k and s are not: their case partners are
// non-ASCII (K, the Kelvin sign; ſ, the long s), which a writer may escape.
func safe(c byte, fold bool) bool {
	switch c {
	case '"', '\\', '/', '<', '>', '&', '\'', 0x7f:
		return false
	case 'k', 'K', 's', 'S':
		return !fold
	}
	return c >= 0x20 && c < 0x7f
}

// rank is how common c is, both its cases counted when fold.
func rank(c byte, fold bool) int {
	r := int(freq[c])
	if fold && isLetter(c) {
		r = max(int(freq[c|0x20]), int(freq[c&^0x20])) + 8
	}
	return r
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// bestRun returns l's run of safe bytes holding its rarest byte, that
// byte's index in it and its rank (nil when l has no safe byte).
func bestRun(l literal) ([]byte, int, int) {
	b := []byte(l.text)
	var best []byte
	bestI, bestR := -1, 1<<30
	for i := 0; i < len(b); {
		if !safe(b[i], l.fold) {
			i++
			continue
		}
		j := i
		for j < len(b) && safe(b[j], l.fold) {
			j++
		}
		run := b[i:j]
		for k, c := range run {
			// the longer run breaks a tie: fewer false candidates
			if r := rank(c, l.fold)*4 - min(len(run), 8); r < bestR {
				best, bestI, bestR = run, k, r
			}
		}
		i = j
	}
	if best == nil {
		return nil, -1, 0
	}
	if l.fold {
		best = bytes.ToLower(best)
	}
	return best, bestI, bestR
}

// second is the index of run's rarest byte but the one at k (k itself
// in a run of one byte).
func second(run []byte, k int, fold bool) int {
	best, bestR := k, 1<<30
	for i, c := range run {
		if r := rank(c, fold); i != k && r < bestR {
			best, bestR = i, r
		}
	}
	return best
}

// choose makes the prefilter of a query whose words (and regexps'
// literals) are lits: on the one with the rarest byte; nil when there is
// nothing to look for first.
func choose(lits []literal) *prefilter {
	if len(lits) == 0 {
		return nil
	}
	var p *prefilter
	bestR := 1 << 30
	for _, l := range lits {
		run, k, r := bestRun(l)
		if run != nil && r < bestR {
			p, bestR = &prefilter{run: run, rare: k, rare2: second(run, k, l.fold), fold: l.fold}, r
		}
	}
	if p == nil {
		l := lits[0]
		p = &prefilter{fold: l.fold}
		for i := 0; i < len(l.text); i++ {
			if c := l.text[i]; c == '"' || c == '\\' || c < 0x20 {
				p.backslash = true
			}
		}
		if !p.backslash {
			p.raw = []byte(l.text)
		}
		return p
	}
	for _, l := range lits {
		if run, _, _ := bestRun(l); run != nil && !(bytes.Equal(run, p.run) && l.fold == p.fold) {
			p.also = append(p.also, runCheck{run, l.fold})
		}
	}
	return p
}

// byRun says whether the prefilter looks for a run (else it tests lines).
func (p *prefilter) byRun() bool { return p.run != nil }

// finder looks for a prefilter's run through one buffer: two of its
// bytes (the rarest two) at once, both cases of a letter when it folds,
// and the run verified where both are.
type finder struct {
	p      *prefilter
	b      []byte
	k1, d  int // where the first byte looked for is in the run; the second is d after it
	c1, c2 byte
	m1, m2 byte // 0x20 for a letter whose case is aside, else 0
}

func (f *finder) reset(p *prefilter, b []byte) {
	k1, k2 := p.rare, p.rare2
	if k2 < k1 {
		k1, k2 = k2, k1
	}
	f.p, f.b, f.k1, f.d = p, b, k1, k2-k1
	f.c1, f.m1 = p.run[k1], 0
	f.c2, f.m2 = p.run[k2], 0
	if p.fold && isLetter(f.c1) {
		f.c1, f.m1 = f.c1|0x20, 0x20
	}
	if p.fold && isLetter(f.c2) {
		f.c2, f.m2 = f.c2|0x20, 0x20
	}
}

// next returns the offset of the next place at or after i where the run
// starts, or -1.
func (f *finder) next(i int) int {
	run := f.p.run
	for i+len(run) <= len(f.b) {
		j := indexPair(f.b[i+f.k1:], f.d, f.c1, f.c2, f.m1, f.m2)
		if j < 0 {
			return -1
		}
		s := i + j
		if s+len(run) <= len(f.b) && hasAt(f.b[s:s+len(run)], run, f.p.fold) {
			return s
		}
		i = s + 1
	}
	return -1
}

// hasAt reports whether b is run (lower-case, when fold: ASCII only).
func hasAt(b, run []byte, fold bool) bool {
	if !fold {
		return bytes.Equal(b, run)
	}
	for i, c := range b {
		if c != run[i] && !(isLetter(c) && c|0x20 == run[i]) {
			return false
		}
	}
	return true
}

// holds reports whether a raw line holds run.
func holds(line, run []byte, fold bool) bool {
	if !fold {
		return bytes.Contains(line, run)
	}
	c := run[0]
	lo, up := c, c
	if isLetter(c) {
		lo, up = c|0x20, c&^0x20
	}
	for i := 0; i+len(run) <= len(line); i++ {
		j := bytes.IndexByte(line[i:], lo)
		if lo != up {
			if u := bytes.IndexByte(line[i:], up); u >= 0 && (j < 0 || u < j) {
				j = u
			}
		}
		if j < 0 || i+j+len(run) > len(line) {
			return false
		}
		i += j
		if hasAt(line[i:i+len(run)], run, true) {
			return true
		}
	}
	return false
}

// candidate reports whether a raw line may hold a match: it holds every
// other word's run, or (for a prefilter that tests lines) what the needle
// may be written as.
func (p *prefilter) candidate(line []byte) bool {
	if !p.byRun() {
		if bytes.IndexByte(line, '\\') >= 0 {
			return true
		}
		if p.backslash {
			return false
		}
		if p.fold {
			for _, c := range line {
				if c >= 0x80 {
					return true
				}
			}
		}
		return bytes.Contains(line, p.raw)
	}
	for _, a := range p.also {
		if !holds(line, a.run, a.fold) {
			return false
		}
	}
	return true
}
