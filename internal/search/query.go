// Package search finds the entries of session logs whose text holds a
// query (SPEC §15), with no index: each file is read once, its raw bytes
// looked through for the query's rarest byte, and only the lines that may
// hold a match are decoded; the match is made on the decoded text (JSON
// escapes undone), never on keys, ids or JSON syntax.
package search

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Case is how a query's letters match letter case.
type Case int

const (
	Smart       Case = iota // a term with an upper-case letter matches case, others ignore it
	Sensitive               // every term matches case (-s)
	Insensitive             // no term does (-i)
)

// Query is a compiled query: every word and regexp in one entry, no
// excluded word in it.
type Query struct {
	words []literal
	not   []literal
	res   []*regexp.Regexp
	reLit []literal  // of each of res, the literal its every match holds ("" for none)
	pre   *prefilter // nil: every line is a candidate
	// Slow says that no literal could be taken from the query to look for
	// first: every line is decoded (a regexp such as [A-Z]{30}).
	Slow bool
}

// literal is a word or phrase, as the user typed it.
type literal struct {
	text string
	fold bool // letter case aside
}

// ErrEmpty is the error for a query with nothing to look for.
var ErrEmpty = errors.New("nothing to look for: give words, a \"phrase\" or -e REGEXP")

// Parse compiles a query: args are words and phrases (an argument holding
// spaces is a phrase, matched as written), "-WORD" excludes WORD; res are
// Go regexps (RE2 syntax).
func Parse(args, res []string, c Case) (*Query, error) {
	q := &Query{}
	for _, a := range args {
		neg := len(a) > 1 && a[0] == '-'
		if neg {
			a = a[1:]
		}
		if a == "" {
			return nil, errors.New("an empty word matches everything: give a word with at least one character")
		}
		if !utf8.ValidString(a) {
			return nil, fmt.Errorf("%q is not UTF-8: give the text as the agent wrote it", a)
		}
		l := literal{text: a, fold: foldFor(c, hasUpper(a))}
		if neg {
			q.not = append(q.not, l)
		} else {
			q.words = append(q.words, l)
		}
	}
	var reLits []literal
	for _, s := range res {
		if s == "" {
			return nil, errors.New("an empty regexp matches everything: give a pattern")
		}
		re, lit, err := compileRE(s, c)
		if err != nil {
			return nil, err
		}
		q.res = append(q.res, re)
		q.reLit = append(q.reLit, lit)
		if lit.text != "" {
			reLits = append(reLits, lit)
		}
	}
	if len(q.words) == 0 && len(q.res) == 0 {
		if len(q.not) > 0 {
			return nil, errors.New("only exclusions: a query must hold a word or a regexp to look for (-WORD only excludes)")
		}
		return nil, ErrEmpty
	}
	q.pre = choose(append(append([]literal{}, q.words...), reLits...))
	q.Slow = q.pre == nil
	return q, nil
}

func foldFor(c Case, upper bool) bool {
	switch c {
	case Sensitive:
		return false
	case Insensitive:
		return true
	}
	return !upper
}

func hasUpper(s string) bool {
	for _, r := range s {
		if unicode.IsUpper(r) || unicode.IsTitle(r) {
			return true
		}
	}
	return false
}

// compileRE compiles s, case-insensitive when c says so (smart case looks
// at the letters the pattern holds literally), and returns the longest
// literal every match must hold ("" when none).
func compileRE(s string, c Case) (*regexp.Regexp, literal, error) {
	t, err := syntax.Parse(s, syntax.Perl)
	if err != nil {
		return nil, literal{}, fmt.Errorf("the regexp %q does not compile: %v", s, unwrapRE(err))
	}
	fold := foldFor(c, reHasUpper(t))
	if fold {
		s = "(?i)" + s
		t, err = syntax.Parse(s, syntax.Perl)
		if err != nil {
			return nil, literal{}, fmt.Errorf("the regexp %q does not compile: %v", s, unwrapRE(err))
		}
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, literal{}, fmt.Errorf("the regexp %q does not compile: %v", s, unwrapRE(err))
	}
	return re, required(t.Simplify()), nil
}

func unwrapRE(err error) string {
	var e *syntax.Error
	if errors.As(err, &e) {
		return fmt.Sprintf("%s: %s", e.Code, e.Expr)
	}
	return err.Error()
}

// reHasUpper reports whether a literal of the pattern has an upper-case
// letter (classes and escapes such as \S are not letters the user typed).
func reHasUpper(t *syntax.Regexp) bool {
	if t.Op == syntax.OpLiteral {
		for _, r := range t.Rune {
			if unicode.IsUpper(r) {
				return true
			}
		}
	}
	for _, s := range t.Sub {
		if reHasUpper(s) {
			return true
		}
	}
	return false
}

// required returns the longest literal every match of t holds.
func required(t *syntax.Regexp) literal {
	switch t.Op {
	case syntax.OpLiteral:
		return literal{text: string(t.Rune), fold: t.Flags&syntax.FoldCase != 0}
	case syntax.OpCapture:
		return required(t.Sub[0])
	case syntax.OpPlus:
		return required(t.Sub[0])
	case syntax.OpRepeat:
		if t.Min >= 1 {
			return required(t.Sub[0])
		}
	case syntax.OpConcat:
		var best literal
		for _, s := range t.Sub {
			if l := required(s); len(l.text) > len(best.text) {
				best = l
			}
		}
		return best
	}
	return literal{}
}

// text is a decoded string being matched, with its lower-case form when
// it is ASCII (made once, for every term that ignores case).
type text struct {
	s     string
	ascii int8 // 0 unknown, 1 ASCII, -1 not
	lower string
}

func (t *text) isASCII() bool {
	if t.ascii == 0 {
		t.ascii = -1
		if isASCII(t.s) {
			t.ascii = 1
		}
	}
	return t.ascii == 1
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// index returns where l next occurs in t at or after from: start and end
// byte offsets, or -1, -1.
func (t *text) index(l literal, from int) (int, int) {
	if from > len(t.s) {
		return -1, -1
	}
	if !l.fold {
		i := strings.Index(t.s[from:], l.text)
		if i < 0 {
			return -1, -1
		}
		return from + i, from + i + len(l.text)
	}
	if t.isASCII() && isASCII(l.text) {
		if t.lower == "" && t.s != "" {
			t.lower = lowerASCII(t.s)
		}
		i := strings.Index(t.lower[from:], lowerASCII(l.text))
		if i < 0 {
			return -1, -1
		}
		return from + i, from + i + len(l.text)
	}
	return indexFold(t.s, l.text, from)
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// indexFold finds sub in s from from with Unicode simple case folding
// (what strings.EqualFold does): start and end in s, or -1, -1.
func indexFold(s, sub string, from int) (int, int) {
	first, _ := utf8.DecodeRuneInString(sub)
	if c := byte(first); first < utf8.RuneSelf && safe(c, true) {
		// an ASCII first letter with no non-ASCII partner: jump to it
		lo, up := c, c
		if isLetter(c) {
			lo, up = c|0x20, c&^0x20
		}
		for i := from; i < len(s); {
			j := strings.IndexByte(s[i:], lo)
			if lo != up {
				end := len(s)
				if j >= 0 {
					end = i + j
				}
				if u := strings.IndexByte(s[i:end], up); u >= 0 {
					j = u
				}
			}
			if j < 0 {
				return -1, -1
			}
			i += j
			if end := prefixFold(s[i:], sub); end >= 0 {
				return i, i + end
			}
			i++
		}
		return -1, -1
	}
	for i := from; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if equalFoldRune(r, first) {
			if end := prefixFold(s[i:], sub); end >= 0 {
				return i, i + end
			}
		}
		i += n
	}
	return -1, -1
}

// prefixFold returns how many bytes of s match all of sub, folded, or -1.
func prefixFold(s, sub string) int {
	i := 0
	for _, r := range sub {
		if i >= len(s) {
			return -1
		}
		c, n := utf8.DecodeRuneInString(s[i:])
		if !equalFoldRune(c, r) {
			return -1
		}
		i += n
	}
	return i
}

func equalFoldRune(a, b rune) bool {
	if a == b {
		return true
	}
	for f := unicode.SimpleFold(a); f != a; f = unicode.SimpleFold(f) {
		if f == b {
			return true
		}
	}
	return false
}

// maxSpans bounds the matches marked in one piece of text.
const maxSpans = 64

// Match tells whether an entry whose pieces of text are texts matches q,
// and for each piece the spans of what matched (nil for a piece with no
// match of a word or regexp).
func (q *Query) Match(texts []string) (bool, [][][2]int) {
	ts := make([]text, len(texts))
	for i, s := range texts {
		ts[i].s = s
	}
	for _, l := range q.not {
		for i := range ts {
			if s, _ := ts[i].index(l, 0); s >= 0 {
				return false, nil
			}
		}
	}
	spans := make([][][2]int, len(ts))
	for _, l := range q.words {
		found := false
		for i := range ts {
			for from := 0; len(spans[i]) < maxSpans; {
				s, e := ts[i].index(l, from)
				if s < 0 {
					break
				}
				found = true
				spans[i] = append(spans[i], [2]int{s, e})
				from = e
				if e == s {
					from++
				}
			}
		}
		if !found {
			return false, nil
		}
	}
	for _, re := range q.res {
		found := false
		for i := range ts {
			for _, m := range re.FindAllStringIndex(ts[i].s, maxSpans) {
				if m[1] > m[0] || len(spans[i]) == 0 {
					found = true
					spans[i] = append(spans[i], [2]int{m[0], m[1]})
				}
			}
		}
		if !found {
			return false, nil
		}
	}
	for i := range spans {
		spans[i] = merge(spans[i])
	}
	return true, spans
}

// merge sorts spans and joins those that overlap.
func merge(sp [][2]int) [][2]int {
	if len(sp) < 2 {
		return sp
	}
	for i := 1; i < len(sp); i++ { // few: insertion sort
		for j := i; j > 0 && sp[j][0] < sp[j-1][0]; j-- {
			sp[j], sp[j-1] = sp[j-1], sp[j]
		}
	}
	out := sp[:1]
	for _, s := range sp[1:] {
		last := &out[len(out)-1]
		if s[0] <= last[1] {
			last[1] = max(last[1], s[1])
			continue
		}
		out = append(out, s)
	}
	return out
}
