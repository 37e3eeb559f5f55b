package tty

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineAndText(t *testing.T) {
	tests := []struct{ in, line, text string }{
		{"", "", ""},
		{"/home/u/proj", "/home/u/proj", "/home/u/proj"},
		{"café ☕ 日本", "café ☕ 日本", "café ☕ 日本"},
		{"a\nb\tc", `a\nb\tc`, "a\nb\tc"},
		{"a\r\n", `a\r\n`, "a\\r\n"},
		{"\x1b]0;PWNED\x07\x1b[2J", `\x1b]0;PWNED\x07\x1b[2J`, `\x1b]0;PWNED\x07\x1b[2J`},
		{"hi \x1b]52;c;ZWNobw==\x07", `hi \x1b]52;c;ZWNobw==\x07`, `hi \x1b]52;c;ZWNobw==\x07`},
		{"\x00\x01\x1f\x7f", `\x00\x01\x1f\x7f`, `\x00\x01\x1f\x7f`},
		{"csi \u009b2J nel \u0085", `csi \u009b2J nel \u0085`, `csi \u009b2J nel \u0085`},
		{"\u00a0nbsp", "\u00a0nbsp", "\u00a0nbsp"}, // the first character after C1 is shown
		{"caf\xe9", `caf\xe9`, `caf\xe9`},          // Latin-1: not UTF-8, shown as the byte
		{"\x9b2J", `\x9b2J`, `\x9b2J`},             // a raw 8-bit CSI
		{"\xff\xfe", `\xff\xfe`, `\xff\xfe`},
		{"end\xe2\x82", `end\xe2\x82`, `end\xe2\x82`}, // a torn rune
		{`back\slash`, `back\slash`, `back\slash`},
		// bidi overrides and isolates reorder the rest of a line (a title
		// reading "abc\u202Efdp.exe" shows as "abcexe.pdf"): escaped too
		{"abc\u202efdp.exe", `abc\u202efdp.exe`, `abc\u202efdp.exe`},
		{"\u2066x\u2069 \u200f\u061c", `\u2066x\u2069 \u200f\u061c`, `\u2066x\u2069 \u200f\u061c`},
		{"\u2065\u202f\u200d", "\u2065\u202f\u200d", "\u2065\u202f\u200d"}, // neighbours stay
	}
	for _, tt := range tests {
		if got := Line(tt.in); got != tt.line {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
		}
		if got := Text(tt.in); got != tt.text {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
		}
	}
}

// TestNoControlLeft checks every byte value, alone and inside text: what
// Line returns holds no control character, no C1 and no invalid UTF-8.
func TestNoControlLeft(t *testing.T) {
	for c := 0; c < 256; c++ {
		for _, s := range []string{string([]byte{byte(c)}), "x" + string([]byte{byte(c)}) + "é", string([]rune{rune(c)})} {
			out := Line(s)
			if !clean(out) {
				t.Errorf("Line(%q) = %q: a control character or invalid UTF-8 is left", s, out)
			}
		}
	}
}

func clean(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return false
		}
	}
	return true
}

func FuzzLine(f *testing.F) {
	f.Add("a\x1b[2Jb\xffc\u0085\n")
	f.Fuzz(func(t *testing.T, s string) {
		if out := Line(s); !clean(out) {
			t.Fatalf("Line(%q) = %q", s, out)
		}
		if out := Text(s); !clean(strings.NewReplacer("\n", "", "\t", "").Replace(out)) {
			t.Fatalf("Text(%q) = %q", s, out)
		}
	})
}

func BenchmarkLineClean(b *testing.B) {
	s := "/home/someone/projects/panto-dev/panto"
	for b.Loop() {
		Line(s)
	}
}
