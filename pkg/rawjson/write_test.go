package rawjson

import (
	"bytes"
	"encoding/json"
	"testing"
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
		"\u2028", "x\u2029y", "\xff", "ok\xe2\x80", "\xed\xa0\x80", "😀", "\U0010FFFF"} {
		if got, want := AppendString([]byte("p"), s), append([]byte("p"), encoded(s)...); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("a\u2028\xff\"")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), encoded(s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}
