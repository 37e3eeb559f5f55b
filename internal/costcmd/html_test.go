package costcmd

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/panto-dev/panto/internal/cli"
)

var update = flag.Bool("update", false, "rewrite the golden pages of testdata")

// TestHTMLGolden: the report pages of a small session, byte for byte; go
// test ./internal/costcmd -update rewrites them, to be reviewed in the
// diff. The session has a model without prices and a reply without usage:
// their costs are unknown, hatched in the chart, marked in the table.
func TestHTMLGolden(t *testing.T) {
	time.Local = time.UTC
	for _, by := range []string{"day", "model"} {
		t.Run(by, func(t *testing.T) {
			var out, errw bytes.Buffer
			proc := cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errw, Getenv: func(string) string { return "" }, Cwd: "/"}
			if code := Run([]string{"--format", "html", "--by", by, "--pricing", "../../internal/replay/testdata/html/models.toml", "../../internal/replay/testdata/html/tools.jsonl"}, proc); code != 0 {
				t.Fatalf("exit %d: %s", code, errw.String())
			}
			golden := "testdata/report-" + by + ".html"
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./internal/costcmd -update writes it)", err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("%s differs from the page made now (go test ./internal/costcmd -update, then review the diff)", golden)
			}
			for _, want := range []string{"url(#unknown)", "≥", "openai/gpt-x", "<svg"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the page lacks %q", want)
				}
			}
		})
	}
}

// TestChartNeverZero: a cost that is unknown is drawn at least a few
// units high and hatched, never as a zero-height bar.
func TestChartNeverZero(t *testing.T) {
	c := newChart("day", time.UTC)
	c.periods["2026-04-25"] = map[string]*row{"a/m": newRow("a/m")}
	r := c.periods["2026-04-25"]["a/m"]
	r.cost.Known = false
	v := c.view(nil)
	if len(v.Bars) != 1 || len(v.Bars[0].Segments) != 1 {
		t.Fatalf("bars %+v", v.Bars)
	}
	if s := v.Bars[0].Segments[0]; !s.Unknown || s.H < unknownMarkerPx || !v.Bars[0].Unknown {
		t.Fatalf("an unknown cost drawn as %+v", s)
	}
}
