//go:build !poison

package scan

// PoisonBuild reports whether this is the poison build (go test -tags
// poison: see poison.go), in which the lines the scanner hands out are
// overwritten once done with.
const PoisonBuild = false

// Poison overwrites b, a line or buffer handed out and now done with, in
// the poison build; in this one it does nothing.
func Poison(b []byte) {}
