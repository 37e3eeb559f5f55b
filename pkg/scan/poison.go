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
// the poison build when poisoning is on; otherwise it does nothing.
func Poison(b []byte) {
	if len(b) == 0 || !poisoning.Load() {
		return
	}
	g := byte(poisonGen.Add(1))
	for i := range b {
		b[i] = '\x80' | (g+byte(i))&0x3f // invalid UTF-8, no JSON: nothing a reader could take for a value
	}
}
