package catalog

import "testing"

func TestEncodeCwd(t *testing.T) {
	for in, want := range map[string]string{
		"/home/u/proj": "--home-u-proj--",
		"//srv/x":      "--srv-x--",
		`C:\Users\u`:   "--C--Users-u--",
		"/":            "----",
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
