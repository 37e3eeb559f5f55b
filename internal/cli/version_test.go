package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

// TestBuildInfo: --version says the module's version and the VCS
// revision when the build recorded them, and "revision unknown" when it
// did not (go build -buildvcs=false, as GOFLAGS sets here), never a
// made-up one.
func TestBuildInfo(t *testing.T) {
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"none", nil, "no build information"},
		{"no vcs", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/panto-dev/panto", Version: "(devel)"}},
			"module github.com/panto-dev/panto (devel), revision unknown (built without VCS information), go1.26.8"},
		{"vcs", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/panto-dev/panto", Version: "v0.1.0"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-03T12:00:00Z"}, {Key: "vcs.modified", Value: "false"}}},
			"module github.com/panto-dev/panto v0.1.0, revision 0123456789ab of 2026-12-03T12:00:00Z, go1.26.8"},
		{"dirty", &debug.BuildInfo{Main: debug.Module{Path: "github.com/panto-dev/panto"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}},
			"module github.com/panto-dev/panto (devel), revision abc, with uncommitted changes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := buildInfo(func() (*debug.BuildInfo, bool) { return c.bi, c.bi != nil })
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
	if l := VersionLine("panto-cost"); !strings.HasPrefix(l, "panto-cost "+Version+" (") {
		t.Errorf("VersionLine: %q", l)
	}
}
