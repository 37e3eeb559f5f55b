package search

import (
	"strings"
	"testing"
)

// TestFold: characters that match letter case aside fold to one; what a
// PostgreSQL text cannot hold (NUL, bytes that are not UTF-8) is U+FFFD.
func TestFold(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain ascii", "plain ascii"},
		{"KAFKA Kafka", "kafka kafka"},
		{"\u212Aelvin", "kelvin"},          // the Kelvin sign is a k
		{"\u017Fmall", "small"},            // long s
		{"CRÈME Brûlée", "crème brûlée"},   // Latin-1
		{"ΣΊΣΥΦΟΣ ς", "σίσυφοσ σ"},         // final sigma folds with sigma
		{"\u023A \u2C65", "\u2C65 \u2C65"}, // a fold that grows a byte
		{"nul\x00here", "nul\uFFFDhere"},
		{"bad\xffbyte\xc3", "bad\uFFFDbyte\uFFFD"},
	} {
		if got := Fold(c.in); got != c.want {
			t.Errorf("Fold(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestNeedlesHeld: whenever a query matches an entry, the entry's text,
// folded, holds every needle of the query: an index that looks for them
// never loses a hit.
func TestNeedlesHeld(t *testing.T) {
	texts := []string{
		"why does Kafka say \"deadline exceeded\"?",
		"KAFKA-connect at 10:42, \u212Aelvin and \u017Fmall",
		"crème brûlée \\ back\\slash",
		"ΣΊΣΥΦΟΣ ς \u023A",
		"bad\xffbyte nul\x00here",
	}
	queries := []struct {
		words, res []string
		c          Case
	}{
		{words: []string{"kafka"}},
		{words: []string{"Kafka"}},
		{words: []string{"KAFKA"}, c: Insensitive},
		{words: []string{"kelvin", "small"}},
		{words: []string{"\"deadline exceeded\""}},
		{words: []string{"CRÈME"}, c: Insensitive},
		{words: []string{`\ back\`}},
		{words: []string{"σίσυφοσ", "Σ"}, c: Insensitive},
		{words: []string{"\u2C65"}},
		{words: []string{"byte"}, res: []string{`nul\x00h`}},
		{res: []string{`dead(line)+ ex`}},
		{res: []string{`(?i)KAFKA-[a-z]+`}},
		{res: []string{`[0-9]{2}:[0-9]`}},
	}
	for _, q := range queries {
		query, err := Parse(q.words, q.res, q.c)
		if err != nil {
			t.Fatal(err)
		}
		needles := query.Needles()
		matched := false
		for _, text := range texts {
			if ok, _ := query.Match([]string{text}); !ok {
				continue
			}
			matched = true
			for _, n := range needles {
				if !strings.Contains(Fold(text), n) {
					t.Errorf("query %q %q matches %q, whose folded text lacks the needle %q", q.words, q.res, text, n)
				}
			}
		}
		if !matched {
			t.Errorf("query %q %q matches no text: it tests nothing", q.words, q.res)
		}
	}
	if n := mustParse(t, nil, []string{`[0-9]{2}\s`}).Needles(); len(n) != 0 {
		t.Errorf("a regexp holding no literal gave needles %q", n)
	}
	if n := mustParse(t, []string{"Kafka", "kafka", "-zz"}, []string{`kafka\d`}).Needles(); strings.Join(n, "|") != "kafka" {
		t.Errorf("needles %q, want one kafka (exclusions are none)", n)
	}
}

func mustParse(t *testing.T, words, res []string) *Query {
	t.Helper()
	q, err := Parse(words, res, Smart)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
