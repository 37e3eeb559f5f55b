package replay

import (
	"html/template"
	"strings"
)

// Markdown renders text written in markdown as HTML, from a safe subset:
// paragraphs, headings, emphasis, lists, code spans and fenced code, links
// (shown as their text and target, never as links: a transcript's links are
// the model's, and a page must not send a reader anywhere), and tables.
// Nothing of the text is ever markup: every character goes through
// template.HTMLEscapeString, raw HTML included, which shows as text. Lines
// it does not know are paragraphs.
func Markdown(text string) template.HTML {
	var b strings.Builder
	b.Grow(len(text) + len(text)/16 + 16)
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var para []string
	flush := func() {
		if len(para) > 0 {
			b.WriteString("<p>")
			for i, l := range para {
				if i > 0 {
					b.WriteString("<br>\n")
				}
				inline(&b, l)
			}
			b.WriteString("</p>\n")
			para = para[:0]
		}
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			flush()
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			flush()
			fence, lang := t[:3], strings.TrimSpace(strings.TrimLeft(t, t[:1]))
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
				code = append(code, lines[i])
			}
			b.WriteString("<pre class=\"code\"")
			if lang != "" {
				b.WriteString(" data-lang=\"" + template.HTMLEscapeString(lang) + "\"")
			}
			b.WriteString("><code>" + template.HTMLEscapeString(strings.Join(code, "\n")) + "</code></pre>\n")
		case heading(t) > 0:
			flush()
			n := heading(t)
			h := string(rune('0' + min(n+1, 6))) // a message's # is a section of the page, below its h1
			b.WriteString("<h" + h + ">")
			inline(&b, strings.TrimSpace(strings.TrimRight(t[n:], "#")))
			b.WriteString("</h" + h + ">\n")
		case listItem(t) != "":
			flush()
			ordered := listItem(t) == "ol"
			tag := "ul"
			if ordered {
				tag = "ol"
			}
			b.WriteString("<" + tag + ">\n")
			for ; i < len(lines) && listItem(strings.TrimSpace(lines[i])) == listItem(t); i++ {
				b.WriteString("<li>")
				inline(&b, itemText(strings.TrimSpace(lines[i])))
				// continuation lines, indented
				for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  ") && strings.TrimSpace(lines[i+1]) != "" && listItem(strings.TrimSpace(lines[i+1])) == "" {
					i++
					b.WriteString(" ")
					inline(&b, strings.TrimSpace(lines[i]))
				}
				b.WriteString("</li>\n")
			}
			i--
			b.WriteString("</" + tag + ">\n")
		case strings.HasPrefix(t, "|") && i+1 < len(lines) && isTableRule(strings.TrimSpace(lines[i+1])):
			flush()
			b.WriteString("<div class=\"table\"><table>\n<thead><tr>")
			for _, c := range cells(t) {
				b.WriteString("<th>")
				inline(&b, c)
				b.WriteString("</th>")
			}
			b.WriteString("</tr></thead>\n<tbody>\n")
			for i += 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				b.WriteString("<tr>")
				for _, c := range cells(strings.TrimSpace(lines[i])) {
					b.WriteString("<td>")
					inline(&b, c)
					b.WriteString("</td>")
				}
				b.WriteString("</tr>\n")
			}
			i--
			b.WriteString("</tbody></table></div>\n")
		case strings.HasPrefix(t, ">"):
			flush()
			b.WriteString("<blockquote>")
			for first := true; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), ">"); i++ {
				if !first {
					b.WriteString("<br>\n")
				}
				first = false
				inline(&b, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), ">")))
			}
			i--
			b.WriteString("</blockquote>\n")
		case strings.Trim(t, "-*_ ") == "" && len(strings.ReplaceAll(t, " ", "")) >= 3:
			flush()
			b.WriteString("<hr>\n")
		default:
			para = append(para, t)
		}
	}
	flush()
	return template.HTML(b.String())
}

// heading is the level of an ATX heading ("## x"), 0 when t is none.
func heading(t string) int {
	n := 0
	for n < len(t) && n < 7 && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n < len(t) && t[n] != ' ' {
		return 0
	}
	return n
}

// listItem says whether t is an item of a list: "ul", "ol" or "".
func listItem(t string) string {
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ' {
		return "ul"
	}
	d := 0
	for d < len(t) && d < 9 && t[d] >= '0' && t[d] <= '9' {
		d++
	}
	if d > 0 && d+1 < len(t) && (t[d] == '.' || t[d] == ')') && t[d+1] == ' ' {
		return "ol"
	}
	return ""
}

func itemText(t string) string {
	if listItem(t) == "ul" {
		return strings.TrimSpace(t[2:])
	}
	i := strings.IndexAny(t, ".)")
	return strings.TrimSpace(t[i+1:])
}

func isTableRule(t string) bool {
	return strings.HasPrefix(t, "|") && strings.Contains(t, "-") && strings.Trim(t, "|-: ") == ""
}

func cells(t string) []string {
	t = strings.TrimSuffix(strings.TrimPrefix(t, "|"), "|")
	var out []string
	for _, c := range strings.Split(t, "|") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// inline writes s with its code spans, strong and emphasised runs and
// links, every character of the text escaped.
//
// A search for a closing mark that fails once fails from every later place
// too (what follows is a suffix of what was searched): it is remembered, so
// that a line of unmatched marks costs linear time, not quadratic.
func inline(b *strings.Builder, s string) {
	esc := func(s string) string { var e strings.Builder; escapeTo(&e, s); return e.String() }
	var noTicks [8]bool // no closing run of n+1 backticks
	var noStrong, noEm [2]bool
	noLink := false
	mark := func(c byte) int {
		if c == '*' {
			return 0
		}
		return 1
	}
	for len(s) > 0 {
		i := 0
		for i < len(s) && marks[s[i]] == 0 {
			i++
		}
		escapeTo(b, s[:i])
		if i == len(s) {
			return
		}
		s = s[i:]
		switch c := s[0]; {
		case c == '`':
			n := len(s) - len(strings.TrimLeft(s, "`"))
			if n <= len(noTicks) && !noTicks[n-1] {
				if j := strings.Index(s[n:], s[:n]); j >= 0 {
					b.WriteString("<code>" + esc(strings.TrimSpace(s[n:n+j])) + "</code>")
					s = s[n+j+n:]
					continue
				}
				noTicks[n-1] = true
			}
			b.WriteString(esc(s[:n]))
			s = s[n:]
		case c == '*' || c == '_':
			if len(s) > 2 && s[1] == c && !noStrong[mark(c)] {
				j := strings.Index(s[2:], s[:2])
				if j > 0 {
					b.WriteString("<strong>")
					inline(b, s[2:2+j])
					b.WriteString("</strong>")
					s = s[2+j+2:]
					continue
				}
				noStrong[mark(c)] = j < 0
			}
			// a single mark emphasises a run that opens and closes on a word
			if len(s) > 1 && s[1] != ' ' && s[1] != c && !noEm[mark(c)] {
				j := strings.IndexByte(s[1:], c)
				if j > 0 && s[j] != ' ' && (c == '*' || j+2 >= len(s) || !isWord(s[j+2])) {
					b.WriteString("<em>")
					inline(b, s[1:1+j])
					b.WriteString("</em>")
					s = s[1+j+1:]
					continue
				}
				noEm[mark(c)] = j < 0
			}
			b.WriteString(esc(s[:1]))
			s = s[1:]
		case c == '[':
			if !noLink {
				j := strings.Index(s, "](")
				k := -1
				if j > 0 {
					k = strings.IndexByte(s[j+2:], ')')
				}
				if j > 0 && k >= 0 && !strings.ContainsAny(s[1:j], "[") {
					b.WriteString("<span class=\"link\">")
					inline(b, s[1:j])
					b.WriteString(" <span class=\"target\">(" + esc(s[j+2:j+2+k]) + ")</span></span>")
					s = s[j+2+k+1:]
					continue
				}
				noLink = j < 0 || k < 0
			}
			b.WriteString(esc(s[:1]))
			s = s[1:]
		}
	}
}

// marks are the bytes inline looks at; entities, what escapeTo writes
// for the bytes HTML gives a meaning to (as html/template does).
var (
	marks    = [256]byte{'`': 1, '*': 1, '_': 1, '[': 1}
	entities = [256]string{'<': "&lt;", '>': "&gt;", '&': "&amp;", '"': "&#34;", '\'': "&#39;", 0: "\uFFFD"}
)

// escapeTo writes s with every byte HTML gives a meaning to escaped, in
// one pass.
func escapeTo(b *strings.Builder, s string) {
	start := 0
	for i := 0; i < len(s); i++ {
		if e := entities[s[i]]; e != "" {
			b.WriteString(s[start:i])
			b.WriteString(e)
			start = i + 1
		}
	}
	b.WriteString(s[start:])
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
