package cli

import (
	"runtime/debug"
	"strings"
)

// VersionLine is what --version prints: the command, panto's version,
// and what the binary's build information says of it (runtime/debug):
// the module's version, the VCS revision and its time, whether the tree
// had changes, and the Go release. A binary built without VCS information
// (go build -buildvcs=false, or outside a checkout) says "revision
// unknown", never a made-up one.
func VersionLine(name string) string {
	return name + " " + Version + " (" + buildInfo(debug.ReadBuildInfo) + ")"
}

func buildInfo(read func() (*debug.BuildInfo, bool)) string {
	bi, ok := read()
	if !ok {
		return "no build information"
	}
	mod := bi.Main.Path
	if mod == "" {
		mod = "github.com/panto-dev/panto"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	parts := []string{"module " + mod + " " + v}
	switch {
	case rev == "":
		parts = append(parts, "revision unknown (built without VCS information)")
	default:
		r := "revision " + rev
		if len(rev) > 12 {
			r = "revision " + rev[:12]
		}
		if at != "" {
			r += " of " + at
		}
		if modified == "true" {
			r += ", with uncommitted changes"
		}
		parts = append(parts, r)
	}
	if bi.GoVersion != "" {
		parts = append(parts, bi.GoVersion)
	}
	return strings.Join(parts, ", ")
}
