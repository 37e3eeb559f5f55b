package agents

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"
)

// TestPiStopReasonKept: a pi reply's stop reason outlives the line it was
// read from. It was a view into the line (the scanner's buffer, reused for
// the next lines): a reply kept past its line read another line's bytes
// as its stop reason (the poison lane of scripts/test caught it once on
// the real pi log, "reply 0 … StopReason:\x80…").
func TestPiStopReasonKept(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"stop", "stop"}, {"length", "length"}, {"toolUse", "toolUse"}, {"error", "error"}, {"aborted", "error"}, {"other", ""},
	} {
		line := []byte(`{"role":"assistant","stopReason":"` + c.in + `","usage":{"input":1,"output":2}}`)
		r := piReply(gjson.Parse(str(line)))
		copy(line, bytes.Repeat([]byte{'#'}, len(line))) // the buffer reused
		if r.StopReason != c.want {
			t.Errorf("stopReason %q: %q once the line's buffer was reused, want %q", c.in, r.StopReason, c.want)
		}
	}
}
