package replay

import (
	"strings"
	"testing"
	"time"
)

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"hello", "<p>hello</p>\n"},
		{"a\nb\n\nc", "<p>a<br>\nb</p>\n<p>c</p>\n"},
		{"## Deep *Analysis*", "<h3>Deep <em>Analysis</em></h3>\n"},
		{"**Interactive mode** and `go test`", "<p><strong>Interactive mode</strong> and <code>go test</code></p>\n"},
		{"- one\n- `two`\n1. x\n2. y", "<ul>\n<li>one</li>\n<li><code>two</code></li>\n</ul>\n<ol>\n<li>x</li>\n<li>y</li>\n</ol>\n"},
		{"```go\nif a < b {\n```", "<pre class=\"code\" data-lang=\"go\"><code>if a &lt; b {</code></pre>\n"},
		{"```\nunclosed <b>", "<pre class=\"code\"><code>unclosed &lt;b&gt;</code></pre>\n"},
		{"| a | b |\n|---|:-:|\n| 1 | <i>2</i> |", "<div class=\"table\"><table>\n<thead><tr><th>a</th><th>b</th></tr></thead>\n<tbody>\n<tr><td>1</td><td>&lt;i&gt;2&lt;/i&gt;</td></tr>\n</tbody></table></div>\n"},
		{"[click](javascript:alert(1))", "<p><span class=\"link\">click <span class=\"target\">(javascript:alert(1)</span></span>)</p>\n"},
		{"see [docs](https://x.test/a?b=1&c=\"2\")", "<p>see <span class=\"link\">docs <span class=\"target\">(https://x.test/a?b=1&amp;c=&#34;2&#34;)</span></span></p>\n"},
		{"<script>alert(1)</script>", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"},
		{"snake_case_name and *", "<p>snake_case_name and *</p>\n"},
		{"> quoted <x>", "<blockquote>quoted &lt;x&gt;</blockquote>\n"},
		{"---", "<hr>\n"},
		{"`a` `` b ` c ``", "<p><code>a</code> <code>b ` c</code></p>\n"},
		{"# <img src=x onerror=alert(1)>", "<h2>&lt;img src=x onerror=alert(1)&gt;</h2>\n"},
	} {
		if got := string(Markdown(tc.in)); got != tc.want {
			t.Errorf("Markdown(%q) =\n%q\nwant\n%q", tc.in, got, tc.want)
		}
	}
}

// Every character of the text reaches the page escaped: whatever the
// marks, the output holds no tag but the renderer's own.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"**a**", "`x`", "[a](b)", "| a |\n|---|\n| <b> |", "```\n<x>\n```", "- <i>", "# <h1>"} {
		f.Add(s)
	}
	allowed := []string{"p", "br", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "pre", "code", "div", "table", "thead", "tbody", "tr", "th", "td", "strong", "em", "span", "blockquote", "hr"}
	f.Fuzz(func(t *testing.T, s string) {
		out := string(Markdown(s))
		for i := strings.IndexByte(out, '<'); i >= 0; i = strings.IndexByte(out, '<') {
			out = out[i+1:]
			name := strings.TrimPrefix(out, "/")
			end := strings.IndexAny(name, " >")
			if end < 0 {
				t.Fatalf("an unclosed tag in %q", Markdown(s))
			}
			ok := false
			for _, a := range allowed {
				ok = ok || name[:end] == a
			}
			if !ok {
				t.Fatalf("Markdown(%q) has a tag %q", s, name[:end])
			}
		}
	})
}

// A line of unmatched marks renders in linear time.
func TestMarkdownUnmatched(t *testing.T) {
	for _, mark := range []string{"`", "*a", "_a", "[a", "**a", "[a](b"} {
		s := strings.Repeat(mark+" ", 200000)
		start := time.Now()
		Markdown(s)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%q × 200,000: %v", mark, d)
		}
	}
}
