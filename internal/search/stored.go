package search

import (
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/panto-dev/panto/internal/agents"
)

// What a store that keeps an index of its entries' text needs (SPEC §15:
// the database's pg_trgm index): the text a query is matched against,
// folded so that one index answers every letter case, and the strings a
// query's matches must hold. The index only chooses candidates: each is
// searched by Run, as a file is.

// Text is the searchable text of one line of a log in format f: the text
// of each of its pieces as Extract decodes it (the text a query is
// matched against, never keys or ids), a newline between two.
func Text(f agents.Format, line []byte) string {
	var e Entry
	Extract(f, line, &e)
	switch len(e.Pieces) {
	case 0:
		return ""
	case 1:
		return e.Pieces[0].Text
	}
	n := len(e.Pieces) - 1
	for _, p := range e.Pieces {
		n += len(p.Text)
	}
	var b strings.Builder
	b.Grow(n)
	for i, p := range e.Pieces {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// Calls returns the call ids of the tool results in one line of a log in
// format f that do not name their tool: a search names it from the line
// of the session that makes the call (the line holding the id, quoted).
func Calls(f agents.Format, line []byte) []string {
	var e Entry
	Extract(f, line, &e)
	var ids []string
	for _, p := range e.Pieces {
		if p.Kind == KindToolResult && p.Tool == "" && p.Call != "" {
			ids = append(ids, p.Call)
		}
	}
	return ids
}

// Fold is s with each character replaced by one chosen for all the
// characters it matches letter case aside (Unicode simple case folding,
// as a query matches: k, K and the Kelvin sign are all k), so that a text
// that holds a word, in any case, holds it folded: Fold(text) contains
// Fold(word). Bytes that are not UTF-8 and NUL become U+FFFD (what a
// PostgreSQL text can hold).
func Fold(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == 0 || 'A' <= c && c <= 'Z' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == 0:
				b.WriteRune(utf8.RuneError)
			case 'A' <= c && c <= 'Z':
				b.WriteByte(c + 'a' - 'A')
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(foldRune(r)) // an invalid byte is RuneError, as the matcher reads it
		i += n
	}
	return b.String()
}

// foldRune is the character chosen for r's case-folding orbit: its
// lower-case form when that is one of the orbit, else its least.
func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	if l := unicode.ToLower(least); l != least {
		for f := unicode.SimpleFold(least); f != least; f = unicode.SimpleFold(f) {
			if f == l {
				return l
			}
		}
	}
	return least
}

// Needles returns strings that the text of every entry q matches holds,
// folded (Fold): its words and phrases, and the longest literal each
// regexp needs. None when it has none to give (only regexps holding no
// literal): then every entry is a candidate.
func (q *Query) Needles() []string {
	var out []string
	add := func(s string) {
		s = Fold(s)
		for _, o := range out {
			if o == s {
				return
			}
		}
		out = append(out, s)
	}
	for _, w := range q.words {
		add(w.text)
	}
	for _, re := range q.res {
		if t, err := syntax.Parse(re.String(), syntax.Perl); err == nil { // it compiled
			if l := required(t.Simplify()); l.text != "" {
				add(l.text)
			}
		}
	}
	return out
}
