package session

import "testing"

func TestLint(t *testing.T) {
	tests := []struct {
		line string
		want Lint
	}{
		{`{"type":"session","version":1,"id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/p"}`, 0},
		{`{"type":"session","version":1,"id":"019dc5ba-53f6-41a5-ab8f-b1f8709c2572","timestamp":"2026-04-25T17:40:15.990Z","cwd":"/p"}`, LintHeaderID}, // v4
		{`{"type":"session","version":1,"id":"019DC5BA-53F6-71A5-AB8F-B1F8709C2572","timestamp":"2026-04-25T17:40:15Z","cwd":"/p"}`, LintHeaderID | LintTimestamp},
		{`{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-04-25T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[]}}`, 0},
		{`{"type":"message","id":"019dc5ba-53f6-71a5-ab8f-b1f8709c2572","parentId":null,"timestamp":"2026-04-25T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[]}}`, 0},
		{`{"type":"message","id":"A1B2C3D4","parentId":null,"timestamp":"2026-13-25T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[]}}`, LintEntryID | LintTimestamp},
		{`{"type":"message","id":"a1b2c3d","parentId":null,"timestamp":"2026-04-25T24:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[]}}`, LintEntryID | LintTimestamp},
		{`{"type":"label","id":"x","note":"no timestamp"}`, LintEntryID},
		{`{"type":"label","note":"no id: nothing to check"}`, 0},
	}
	for _, tt := range tests {
		if got := Classify([]byte(tt.line)).Lint; got != tt.want {
			t.Errorf("%s: lint %v (%v), want %v", tt.line, got, got.Problems(), tt.want)
		}
	}
}

func TestIsTimestamp(t *testing.T) {
	for s, want := range map[string]bool{
		"2026-04-25T14:00:01.000Z":  true,
		"2026-12-31T23:59:60.999Z":  true,
		"2026-04-25T14:00:01.000":   false,
		"2026-04-25T14:00:01Z":      false,
		"2026-04-25T14:00:01.000+0": false,
		"2026-00-25T14:00:01.000Z":  false,
		"2026-04-32T14:00:01.000Z":  false,
		"2026-04-25T14:60:01.000Z":  false,
		"2026-04-25t14:00:01.000Z":  false,
		"2026-04-25T14:00:01.0a0Z":  false,
	} {
		if IsTimestamp(s) != want {
			t.Errorf("IsTimestamp(%q) = %v", s, !want)
		}
	}
}
