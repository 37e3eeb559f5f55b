package fsck

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/panto-dev/panto/pkg/session"
)

// sample returns a valid session of n entries.
func sample(n int) []byte {
	b := session.Header{ID: "019dc5ba-53f6-71a5-ab8f-b1f8709c2572", Timestamp: "2026-01-01T00:00:00.000Z", Cwd: "/p"}.AppendLine(nil)
	parent := ""
	for i := range n {
		e := session.Entry{ID: fmt.Sprintf("%08x", i), ParentID: parent, Timestamp: "2026-01-01T00:00:00.000Z", Provider: "p", Model: "m",
			Message: session.TextMessage("user", fmt.Sprintf("message %d with \"quotes\" and é", i))}
		b = e.AppendLine(b)
		parent = e.ID
	}
	return b
}

func lineStarts(b []byte) []int {
	starts := []int{0}
	for i, c := range b {
		if c == '\n' && i+1 < len(b) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

func repairFile(t testing.TB, dir string, data []byte, policy string) ([]byte, *Report) {
	t.Helper()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	r := Run(path, Options{Repair: true, Policy: policy})
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return got, r
}

// TestTornTailSweep cuts a valid log at every byte offset of its last three
// entries: a tail repair keeps exactly the complete entries, saves what it
// cut, and a second check is clean.
func TestTornTailSweep(t *testing.T) {
	data := sample(6)
	starts := lineStarts(data)
	from := starts[len(starts)-3]
	for k := from; k <= len(data); k++ {
		dir := t.TempDir()
		got, r := repairFile(t, dir, data[:k], Tail)
		whole := bytes.LastIndexByte(data[:k], '\n') + 1
		if !bytes.Equal(got, data[:whole]) {
			t.Fatalf("offset %d: repaired to %d bytes, want the %d bytes of complete lines", k, len(got), whole)
		}
		if k > whole {
			if r.Bits != BitRepaired || r.CutSavedAs == nil {
				t.Fatalf("offset %d: report %+v", k, r)
			}
			saved, _ := os.ReadFile(*r.CutSavedAs)
			if !bytes.Equal(saved, data[whole:k]) {
				t.Fatalf("offset %d: saved %q, want %q", k, saved, data[whole:k])
			}
		} else if r.Bits != 0 {
			t.Fatalf("offset %d: clean file reported %+v", k, r)
		}
		if again := Run(filepath.Join(dir, "s.jsonl"), Options{}); again.Bits != 0 {
			t.Fatalf("offset %d: second check %+v", k, again)
		}
	}
}

// TestBitFlips flips one bit at random offsets: the report is deterministic,
// and no policy ever removes an entry that came before the flipped line.
func TestBitFlips(t *testing.T) {
	data := sample(20)
	starts := lineStarts(data)
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		off := r.IntN(len(data))
		flipped := append([]byte(nil), data...)
		flipped[off] ^= 1 << r.IntN(8)
		line := 0
		for line+1 < len(starts) && starts[line+1] <= off {
			line++
		}
		before := data[:starts[line]] // every line before the flipped one
		for _, policy := range []string{Tail, PointInTime, Salvage} {
			a, _ := repairFile(t, t.TempDir(), flipped, policy)
			b, rb := repairFile(t, t.TempDir(), flipped, policy)
			if !bytes.Equal(a, b) {
				t.Fatalf("flip at %d, %s: two repairs differ", off, policy)
			}
			if line > 0 && !bytes.HasPrefix(a, before) {
				t.Fatalf("flip at %d (line %d), %s: an entry before the flip was removed (%+v)", off, line+1, policy, rb)
			}
		}
	}
}

// FuzzRepair: no input makes check or repair panic; repair is idempotent;
// a tail repair's result is a byte prefix of its input.
func FuzzRepair(f *testing.F) {
	data := sample(3)
	f.Add(data, uint8(0))
	f.Add(append(append([]byte{}, data...), `{"type":"mes`...), uint8(0))
	f.Add(append([]byte("\xef\xbb\xbf"), data...), uint8(2))
	f.Add(append(append([]byte{}, data[:200]...), data...), uint8(1))
	f.Add([]byte("\x00\x00\n{}\n"), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, p uint8) {
		policy := []string{Tail, PointInTime, Salvage}[int(p)%3]
		dir := t.TempDir()
		once, r1 := repairFile(t, dir, in, policy)
		if r1.Bits&BitError != 0 {
			t.Fatalf("repair failed: %+v", r1)
		}
		twice, r2 := repairFile(t, t.TempDir(), once, policy)
		if !bytes.Equal(once, twice) || r2.Bits&BitRepaired != 0 {
			t.Fatalf("repair is not idempotent: %q then %q (%+v)", once, twice, r2)
		}
		if policy == Tail && !bytes.HasPrefix(in, once) {
			t.Fatalf("tail repair is not a prefix: %q → %q", in, once)
		}
	})
}

// BenchmarkRunSmall: the check of one small session file (a header and
// three entries of 3 KB), as fsck does thousands: open, read, classify,
// report.
func BenchmarkRunSmall(b *testing.B) {
	path := filepath.Join(b.TempDir(), "s.jsonl")
	data := session.Header{ID: "019dc5ba-53f6-71a5-ab8f-b1f8709c2572", Timestamp: "2026-01-01T00:00:00.000Z", Cwd: "/p"}.AppendLine(nil)
	for i := range 3 {
		e := session.Entry{ID: fmt.Sprintf("%08x", i), Timestamp: "2026-01-01T00:00:00.000Z", Provider: "p", Model: "m",
			Message: session.TextMessage("user", strings.Repeat("words and é ", 250))}
		data = e.AppendLine(data)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if r := Run(path, Options{}); r.Status != "clean" {
			b.Fatalf("%s: %+v", r.Status, r)
		}
	}
}

// TestCheckReuse: a check that takes the memory of an earlier Analysis
// finds exactly what a fresh one does, whatever the earlier file held.
func TestCheckReuse(t *testing.T) {
	good := sample(3)
	header := good[:bytes.IndexByte(good, '\n')+1]
	inputs := [][]byte{
		append(append(append([]byte("\xef\xbb\xbf"), good...), header...), "{\"type\":\"mess"...), // a BOM, a repeated header, a torn tail
		good,
		append(bytes.Repeat([]byte("\r\n"), 30), good...), // more findings of one id than are listed,
		append(bytes.Repeat([]byte("\r\n"), 30), good...), // twice
		append(append([]byte(nil), good...), "[1]\n{}\n"...),
		append(append([]byte(nil), good...), header...),
		{},
		good,
	}
	var prev *Analysis
	for i, in := range inputs {
		want, err := check(bytes.NewReader(in), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := check(bytes.NewReader(in), nil, prev)
		if err != nil {
			t.Fatal(err)
		}
		for _, policy := range []string{Tail, PointInTime, Salvage} {
			g := fmt.Sprintf("%+v %+v", got.Findings, got.plan(policy))
			w := fmt.Sprintf("%+v %+v", want.Findings, want.plan(policy))
			if g != w {
				t.Fatalf("input %d, %s, after input %d: reused\n%s\nfresh\n%s", i, policy, i-1, g, w)
			}
		}
		prev = got
	}
}

func TestCompactionKept(t *testing.T) {
	// Entries 00000000 → 00000003 in a chain, and 0000000b a branch from 00000001.
	base := sample(4)
	base = session.Entry{ID: "0000000b", ParentID: "00000001", Timestamp: "2026-01-01T00:00:00.000Z", Provider: "p", Model: "m", Message: session.TextMessage("user", "branch")}.AppendLine(base)
	compaction := func(fields string) []byte {
		return session.Kept{Type: "compaction", ID: "c0c0c0c0", ParentID: "00000003", Timestamp: "2026-01-01T00:00:00.000Z", Fields: []byte(fields)}.AppendLine(nil)
	}
	for _, tc := range []struct {
		name, fields, want string
	}{
		{"kept on the path", `"summary":"s","firstKeptEntryId":"00000002","tokensBefore":9`, ""},
		{"kept is the root", `"summary":"s","firstKeptEntryId":"00000000","tokensBefore":9`, ""},
		{"kept names nothing", `"summary":"s","firstKeptEntryId":"ffffffff","tokensBefore":9`, "compactionKeptMissing:warning"},
		{"kept on another branch", `"summary":"s","firstKeptEntryId":"0000000b","tokensBefore":9`, "compactionKeptMissing:warning"},
		{"kept is the compaction itself", `"summary":"s","firstKeptEntryId":"c0c0c0c0","tokensBefore":9`, "compactionKeptMissing:warning"},
		{"no kept entry", `"summary":"s","tokensBefore":9`, "compactionKeepsNothing:info"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Check(bytes.NewReader(append(append([]byte{}, base...), compaction(tc.fields)...)), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range a.Findings {
				got = append(got, f.ID+":"+f.Severity)
				if f.Line != 7 {
					t.Errorf("finding on line %d, want 7", f.Line)
				}
			}
			if strings.Join(got, ",") != tc.want {
				t.Fatalf("findings %v, want %q", got, tc.want)
			}
		})
	}
}

// TestPendingToolUse: a reply's parallel tool calls whose results are
// still coming at the end of the log are pending, not orphans (as
// panto-replay --info lists them); a call is an orphan once the
// conversation goes on past its round (a new reply, a new prompt) without
// its result. panto-fsck called the second of two parallel calls an orphan
// when the first's result was the log's last entry (real-logs.md 2.2:
// exit 4 on a Codex log captured while the call still ran).
func TestPendingToolUse(t *testing.T) {
	base := sample(1)
	entry := func(id, parent, msg string) []byte {
		e := session.Entry{ID: id, ParentID: parent, Timestamp: "2026-01-01T00:00:00.000Z", Message: []byte(msg)}
		if strings.Contains(msg, `"role":"user"`) {
			e.Provider, e.Model = "p", "m"
		}
		return e.AppendLine(nil)
	}
	calls := entry("000000a1", "00000000", `{"role":"assistant","content":[{"type":"toolUse","id":"A","name":"bash","input":"{}"},{"type":"toolUse","id":"B","name":"bash","input":"{}"}],"provider":"p","model":"m","stopReason":"toolUse","usage":{"input":1,"output":1}}`)
	resultA := entry("000000a2", "000000a1", `{"role":"user","content":[{"type":"toolResult","toolUseId":"A","content":"ok"}]}`)
	reply := entry("000000a3", "000000a2", `{"role":"assistant","content":[{"type":"text","text":"done"}],"provider":"p","model":"m","stopReason":"stop","usage":{"input":1,"output":1}}`)
	prompt := entry("000000a3", "000000a2", `{"role":"user","content":[{"type":"text","text":"and?"}]}`)
	for _, tc := range []struct {
		name string
		log  [][]byte
		want string
	}{
		{"both pending", [][]byte{calls}, ""},
		{"one answered, one pending at the end", [][]byte{calls, resultA}, ""},
		{"a reply goes on without B's result", [][]byte{calls, resultA, reply}, "orphanToolUse:warning"},
		{"a prompt goes on without B's result", [][]byte{calls, resultA, prompt}, "orphanToolUse:warning"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Check(bytes.NewReader(append(append([]byte{}, base...), bytes.Join(tc.log, nil)...)), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range a.Findings {
				got = append(got, f.ID+":"+f.Severity)
			}
			if strings.Join(got, ",") != tc.want {
				t.Fatalf("findings %v, want %q: %+v", got, tc.want, a.Findings)
			}
		})
	}
}

// TestAgentShapes: what pkg/agent writes after a crash (SPEC §13) is
// clean: a tool round's mark after a reply whose tools were cut off (no
// answer, no going on), and a root beside a root prompt that got no
// reply; a root after anything else is still a second root.
func TestAgentShapes(t *testing.T) {
	head := session.Header{ID: "019dc5ba-53f6-71a5-ab8f-b1f8709c2572", Timestamp: "2026-01-01T00:00:00.000Z", Cwd: "/p"}.AppendLine(nil)
	entry := func(id, parent, msg string) []byte {
		e := session.Entry{ID: id, ParentID: parent, Timestamp: "2026-01-01T00:00:00.000Z", Message: []byte(msg)}
		if strings.Contains(msg, `"role":"user"`) {
			e.Provider, e.Model = "p", "m"
		}
		return e.AppendLine(nil)
	}
	prompt := entry("000000a0", "", `{"role":"user","content":[{"type":"text","text":"go"}]}`)
	calls := entry("000000a1", "000000a0", `{"role":"assistant","content":[{"type":"toolUse","id":"A","name":"bash","input":"{}"}],"provider":"p","model":"m","stopReason":"toolUse"}`)
	mark := []byte(`{"type":"toolRound","id":"000000a2","parentId":"000000a1","timestamp":"2026-01-01T00:00:01.000Z","toolUseIds":["A"]}` + "\n")
	result := entry("000000a3", "000000a2", `{"role":"user","content":[{"type":"toolResult","toolUseId":"A","content":"Started at 2026-01-01T00:00:01.000Z; its result was lost: it may have run."}]}`)
	sibling := entry("000000b0", "", `{"role":"user","content":[{"type":"text","text":"another"}]}`)
	for _, tc := range []struct {
		name string
		log  [][]byte
		want string
	}{
		{"a mark at the end", [][]byte{prompt, calls, mark}, ""},
		{"a mark, then the lost result", [][]byte{prompt, calls, mark, result}, ""},
		{"a root beside a root prompt", [][]byte{prompt, sibling}, ""},
		{"a root after a reply", [][]byte{prompt, calls, sibling}, "secondRoot:warning"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Check(bytes.NewReader(append(append([]byte{}, head...), bytes.Join(tc.log, nil)...)), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range a.Findings {
				got = append(got, f.ID+":"+string(f.Severity))
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Fatalf("findings %q, want %q", g, tc.want)
			}
		})
	}
}
