package catalog

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEncodeCwd(t *testing.T) {
	for in, want := range map[string]string{
		"/home/u/proj":     "--home-u-proj--",
		"//srv/x":          "--srv-x--",
		`C:\Users\u`:       "--C--Users-u--",
		"/":                "----",
		"/home/u/nul\x00x": "--home-u-nul-x--", // hostile #16: no directory name holds a NUL
	} {
		if got := EncodeCwd(in); got != want {
			t.Errorf("EncodeCwd(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBaseDir(t *testing.T) {
	tests := []struct {
		env  Env
		want string
	}{
		{Env{SessionDir: "/s", DataHome: "/d", Home: "/h"}, "/s"},
		{Env{DataHome: "/d", Home: "/h"}, "/d/panto/sessions"},
		{Env{Home: "/h"}, "/h/.local/share/panto/sessions"},
	}
	for _, tt := range tests {
		if got, err := tt.env.BaseDir(); err != nil || got != tt.want {
			t.Errorf("%+v: %q %v, want %q", tt.env, got, err, tt.want)
		}
	}
	if _, err := (Env{}).BaseDir(); err == nil {
		t.Error("empty env: no error")
	}
}

func TestIDFromPath(t *testing.T) {
	for in, want := range map[string]string{
		"/a/019dc5ba-53f6-71a5-ab8f-b1f8709c2572.jsonl": "019dc5ba-53f6-71a5-ab8f-b1f8709c2572",
		"/a/019DC5BA-53F6-71A5-AB8F-B1F8709C2572.jsonl": "",
		"/a/notes.jsonl": "",
		"/a/019dc5ba-53f6-71a5-ab8f-b1f8709c2572.json": "",
	} {
		if got := IDFromPath(in); got != want {
			t.Errorf("IDFromPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestShortLenUUIDs: the 128-bit way and the string way agree, at every
// length a shared prefix can have (hyphens included).
func TestShortLenUUIDs(t *testing.T) {
	base := "019dc5ba-53f6-71a5-ab8f-b1f8709c2572"
	for k := 0; k < len(base); k++ {
		if base[k] == '-' {
			continue
		}
		other := []byte(base)
		other[k] = "0123456789abcdef"[(strings.IndexByte("0123456789abcdef", base[k])+1)%16]
		ids := []string{base, string(other), "0aaaaaaa-0000-7000-8000-000000000000"}
		got, ok := shortUUIDs(ids)
		s := slices.Clone(ids)
		slices.Sort(s)
		want := 8
		for i := 1; i < len(s); i++ {
			c := 0
			for c < len(s[i]) && s[i][c] == s[i-1][c] {
				c++
			}
			want = max(want, c+1)
		}
		if !ok || got != want {
			t.Errorf("differ at %d: shortUUIDs = %d, %v; want %d", k, got, ok, want)
		}
	}
	if _, ok := shortUUIDs([]string{base, "not-a-uuid"}); ok {
		t.Error("a non-UUID id taken for one")
	}
	if n := ShortLen([]string{"abc", "abd"}); n != 8 {
		t.Errorf("ShortLen of short ids = %d", n)
	}
}

// TestSplitSession: FILE#SESSION names one session of a log that holds
// several only when the whole names no file, FILE is a regular file and
// SESSION is something; a file whose name holds a '#' is itself.
func TestSplitSession(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "opencode.db")
	hashed := filepath.Join(dir, "a#b.jsonl")
	for _, p := range []string{db, hashed} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		path, file, id string
		ok             bool
	}{
		{db + "#ses_04ca851f7ffe", db, "ses_04ca851f7ffe", true},
		{db + "#a#b", db + "#a#b", "", false}, // "opencode.db#a" is no file
		{db, db, "", false},
		{db + "#", db + "#", "", false},
		{hashed, hashed, "", false},
		{dir + "#ses_x", dir + "#ses_x", "", false}, // a directory
		{filepath.Join(dir, "none.db") + "#ses_x", filepath.Join(dir, "none.db") + "#ses_x", "", false},
		{db + "#ses/x", db + "#ses/x", "", false},
		{"#ses_x", "#ses_x", "", false},
	} {
		file, id, ok := SplitSession(c.path)
		if file != c.file || id != c.id || ok != c.ok {
			t.Errorf("SplitSession(%q) = %q, %q, %v; want %q, %q, %v", c.path, file, id, ok, c.file, c.id, c.ok)
		}
	}
}
