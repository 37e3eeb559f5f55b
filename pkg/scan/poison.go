//go:build poison

package scan

import "sync/atomic"

// The poison build (go test -tags poison) is a test mode: every line the
// scanner hands out, and every reused buffer of lines (Reader.Next,
// ScanOptions.OnLine, replay's EachLine), is overwritten once the next line
// is read or the buffer is reused. A caller that keeps a view into one
// (a string made with unsafe, a sub-slice, a gjson.Result) then sees
// garbage at once, not only when a buffer happens to be refilled past
// 256 KiB: the tests' outputs differ from a normal run's.

// poisoning is on unless a test turns it off (SetPoison) to compute what a
// normal run gives.
var poisoning atomic.Bool

func init() { poisoning.Store(true) }

// PoisonBuild reports whether this is the poison build.
const PoisonBuild = true

// SetPoison turns the poisoning of handed-out lines on or off (it is on at
// start); only the poison build has it.
func SetPoison(on bool) { poisoning.Store(on) }

// poisonGen varies the garbage, so two views poisoned at different times
// do not happen to be equal.
var poisonGen atomic.Uint32

// Poison overwrites b, a line or buffer handed out and now done with, in
// the poison build when poisoning is on; otherwise it does nothing. The
// bytes are UTF-8 continuation bytes (invalid UTF-8, no JSON: nothing a
// reader could take for a value) drawn from a generator seeded by the
// whole generation: two views of the same line poisoned at generations
// 64 apart were equal when the garbage followed the generation's low six
// bits, and a test comparing two reads of a log (with content and
// without) saw a view kept into a line as agreeing with itself.
func Poison(b []byte) {
	if len(b) == 0 || !poisoning.Load() {
		return
	}
	x := poisonGen.Add(1)*0x9e3779b9 | 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = '\x80' | byte(x)&0x3f
	}
}
