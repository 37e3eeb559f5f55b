package agents

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/panto-dev/panto/internal/fsck"
	"github.com/panto-dev/panto/internal/replay"
)

// realLogs is where real logs of other agents are kept, outside the
// project (../shared/real from the repository's root): they are others'
// words and code, read in place, never copied in.
const realLogs = "../../../shared/real"

// TestRealLogs holds the readers to SPEC §11 on every real log there is:
// the header's time is the log's first, every line is read, every call the
// log answers is answered on the replayed path, the path ends with the
// log's last reply, the conversion is fsck-clean, and a cost report reads
// the same replies as the conversion. A file in no format panto reads is
// none. Without the folder it says so, loudly.
func TestRealLogs(t *testing.T) {
	if _, err := os.Stat(realLogs); err != nil {
		t.Skipf("***** NO %s: THE READERS ARE NOT CHECKED ON REAL LOGS *****", realLogs)
	}
	n := 0
	filepath.WalkDir(realLogs, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") && !strings.HasSuffix(path, ".json") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		n++
		name := filepath.Base(path)
		f, _ := Identify(bytes.NewReader(b), int64(len(b)))
		switch filepath.Base(filepath.Dir(path)) {
		case "claude-code", "codex", "pi", "opencode":
			if f != Claude && f != Codex && f != Pi && f != OpenCode {
				t.Errorf("%s: told %v", name, f)
				return nil
			}
		case "gemini-cli", "copilot-cli":
			// Held to the same rules by check-real; here: read whole,
			// every answered call answered on the path, fsck-clean.
			if a := Of(f); a == nil || !a.Reads() {
				return nil // Gemini CLI's headless output: no session
			}
			got := convert(t, path, b)
			if len(got.stats.Corrupt) > 0 || got.stats.Torn > 0 {
				t.Errorf("%s: corrupt lines %v, torn %d", name, got.stats.Corrupt, got.stats.Torn)
			}
			if open := got.unanswered(); len(open) > 0 {
				t.Errorf("%s: %d tool calls unanswered on the path (%s…)", name, len(open), open[0])
			}
			for _, f := range got.fsck {
				if f.Severity != fsck.Info {
					t.Errorf("%s: the conversion is not fsck-clean: %+v", name, f)
					break
				}
			}
			return nil
		default:
			if a := Of(f); a != nil && a.Reads() {
				t.Errorf("%s: a log of no format panto reads is told %v", name, f)
			}
			return nil
		}
		got := convert(t, path, b)
		bad, split := badLines(b)
		if len(got.stats.Corrupt) != bad || got.stats.Torn > 0 {
			t.Errorf("%s: %d corrupt lines %v, torn %d; the log has %d lines of no JSON", name, len(got.stats.Corrupt), got.stats.Corrupt, got.stats.Torn, bad)
		}
		if k := got.stats.Counts["lines holding several objects, read as each"]; k != split {
			t.Errorf("%s: %d lines read as several objects, the log has %d", name, k, split)
		}
		if want := firstTime(b, f); want != "" && got.header.Get("timestamp").Str != want {
			t.Errorf("%s: header time %s, the log's first is %s", name, got.header.Get("timestamp").Str, want)
		}
		if open := got.unanswered(); len(open) > 0 {
			t.Errorf("%s: %d tool calls unanswered on the path (%s…)", name, len(open), open[0])
		}
		for _, f := range got.fsck {
			if f.Severity != fsck.Info { // a compaction that keeps nothing is noted, and clean
				t.Errorf("%s: the conversion is not fsck-clean: %+v", name, f)
				break
			}
		}
		if last := strings.TrimSpace(lastReplyText(b, f)); last != "" && !got.onPath(last[:min(60, len(last))]) {
			t.Errorf("%s: the log's last reply %.40q is not on the replayed path", name, last)
		}
		check(t, b, f)
		return nil
	})
	t.Logf("%d real logs read from %s", n, realLogs)
}

// badLines counts the lines of b that are no JSON object, and those of
// them that are several objects written with no newline between them.
func badLines(b []byte) (bad, split int) {
	for _, l := range bytes.Split(b, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) == 0 || isObject(l) {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(l))
		parts := 0
		for {
			var v map[string]any
			if dec.Decode(&v) != nil {
				break
			}
			parts++
		}
		if parts > 1 && dec.InputOffset() == int64(len(l)) {
			split++
		} else {
			bad++
		}
	}
	return bad, split
}

// firstTime is the first "timestamp" string of the log, as panto writes
// times; for Codex the session_meta's own time may be used instead.
func firstTime(b []byte, f Format) string {
	if f == Codex {
		return ""
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		var v struct{ Timestamp any }
		if json.Unmarshal(l, &v) != nil {
			continue
		}
		if s, ok := v.Timestamp.(string); ok && s != "" {
			if tm, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return tm.UTC().Format("2006-01-02T15:04:05.000Z")
			}
		}
	}
	return ""
}

// lastReplyText is the text of the log's last reply that has text, read
// as the agent wrote it (sidechains and subagents' replies aside).
func lastReplyText(b []byte, f Format) string {
	last := ""
	for _, l := range bytes.Split(b, []byte("\n")) {
		var v struct {
			Type        string
			IsSidechain bool
			Message     struct {
				Role    string
				Content json.RawMessage
			}
			Payload struct {
				Type, Role string
				Content    []struct{ Type, Text string }
			}
		}
		if json.Unmarshal(l, &v) != nil {
			continue
		}
		var blocks []struct{ Type, Text string }
		switch {
		case f == Claude && v.Type == "assistant" && !v.IsSidechain, f == Pi && v.Type == "message" && v.Message.Role == "assistant":
			json.Unmarshal(v.Message.Content, &blocks)
		case f == Codex && v.Type == "response_item" && v.Payload.Type == "message" && v.Payload.Role == "assistant":
			blocks = v.Payload.Content
		}
		for _, c := range blocks {
			if (c.Type == "text" || c.Type == "output_text") && strings.TrimSpace(c.Text) != "" {
				last = c.Text
			}
		}
	}
	return last
}

// onPath reports whether a message of the path has text that holds s.
func (c conversion) onPath(s string) bool {
	for _, m := range c.path {
		if strings.Contains(replay.Text(m), s) {
			return true
		}
	}
	return false
}
