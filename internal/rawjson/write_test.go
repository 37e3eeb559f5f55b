package rawjson

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// encoded is s as encoding/json writes it without HTML escaping: the
// oracle AppendString's fast path must agree with.
func encoded(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", "a\"b", `back\slash`, "tab\t", "nl\n", "\x00", "\x1f", "\x7f", "<&>", "é—✓",
		"\u2028", "x\u2029y", "😀", "\U0010FFFF"} {
		if got, want := AppendString([]byte("p"), s), append([]byte("p"), encoded(s)...); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
	// Bytes that are not UTF-8 are kept (encoding/json writes U+FFFD).
	for s, want := range map[string]string{"\xff": "\"\xff\"", "ok\xe2\x80": "\"ok\xe2\x80\"", "\xed\xa0\x80": "\"\xed\xa0\x80\"", "caf\xe9\n": "\"caf\xe9\\n\""} {
		if got := AppendString(nil, s); string(got) != want {
			t.Errorf("AppendString(%q) = %q, want %q", s, got, want)
		}
	}
}

// FuzzAppendString: for valid UTF-8 the bytes encoding/json writes
// (without HTML escaping); for any string, JSON that reads back as it.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\u2028\xff\"", "\x00\x1f\x7f", "caf\xe9", "\b\f\n\r\t", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString(nil, s)
		if utf8.ValidString(s) {
			if want := encoded(s); !bytes.Equal(got, want) {
				t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
			}
		}
		if Str(got) != s {
			t.Fatalf("AppendString(%q) = %q does not read back as the string", s, got)
		}
	})
}
