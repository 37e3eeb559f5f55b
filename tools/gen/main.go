// Command gen writes generated session files for scripts/bench: one session
// of about -size bytes, or -count small sessions in a project directory.
// Entries look like real agent work: prompts, replies with thinking, tool
// calls and tool results of a few KiB, usage on every reply.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/panto-dev/panto/internal/rawjson"
	"github.com/panto-dev/panto/pkg/session"
)

var (
	size  = flag.Int64("size", 100<<20, "bytes of the one session written to -out")
	out   = flag.String("out", "", "the session file to write")
	count = flag.Int("count", 0, "write this many small sessions into -dir instead")
	dir   = flag.String("dir", "", "directory of the small sessions")
	each  = flag.Int64("each", 4<<10, "bytes of each small session")
	cc    = flag.String("claude", "", "write about -size bytes of Claude Code transcripts into this directory instead")
	gem   = flag.String("gemini", "", "write about -size bytes of Gemini CLI chats (JSON Lines) into this directory (GEMINI_CLI_HOME) instead")
	gemj  = flag.String("gemini-json", "", "write about -size bytes of Gemini CLI whole-file chats (session-*.json) into this directory instead")
	cop   = flag.String("copilot", "", "write about -size bytes of Copilot CLI sessions into this directory (COPILOT_CONFIG_DIR) instead")
	oc    = flag.String("opencode", "", "write an opencode.db holding about -size bytes of JSON at this path instead")
	ocsch = flag.String("opencode-schema", "testdata/opencode/schema.sql", "the tables of -opencode's database")
	dense = flag.Bool("dense", false, "text dense in escapes and non-ASCII (quotes, backslashes, newlines, tabs, é, ü, 日本)")
)

func main() {
	flag.Parse()
	r := rand.New(rand.NewPCG(1, 2))
	if *dense {
		words = denseWords
	}
	var err error
	switch {
	case *gem != "":
		err = writeGemini(*gem, *size, false, r)
	case *gemj != "":
		err = writeGemini(*gemj, *size, true, r)
	case *cop != "":
		err = writeCopilot(*cop, *size, r)
	case *oc != "":
		err = writeOpenCode(*oc, *ocsch, *size, r)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	switch {
	case *gem != "" || *gemj != "" || *cop != "" || *oc != "":
	case *cc != "":
		if err := writeClaude(*cc, *size, r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case *count > 0 && *dir != "":
		os.MkdirAll(*dir, 0o700)
		for range *count {
			u, _ := uuid.NewV7()
			if err := write(filepath.Join(*dir, u.String()+".jsonl"), u.String(), *each, r); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	case *out != "":
		u, _ := uuid.NewV7()
		if err := write(*out, u.String(), *size, r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	default:
		flag.Usage()
		os.Exit(2)
	}
}

// denseWords make text whose JSON is dense in escapes and non-ASCII.
var denseWords = []string{`say "quoted"`, `back\slash`, "a\tb", "line\nbreak", "é", "ü", "日本", `{"json":"in text"}`, `C:\path\to`, `""`, "tab\t\tend"}

var words = strings.Fields("the quick brown fox jumps over a lazy dog while parsing JSON lines of session logs with tool calls and results é ü 日本")

func text(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteByte(' ')
	}
	return b.String()
}

func write(path, id string, size int64, r *rand.Rand) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	t := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	var buf []byte
	buf = session.Header{ID: id, Timestamp: session.Timestamp(t), Cwd: "/home/u/bench"}.AppendLine(buf)
	parent, written := "", int64(0)
	for i := 0; written+int64(len(buf)) < size; i++ {
		t = t.Add(time.Duration(r.IntN(20000)) * time.Millisecond)
		var msg []byte
		// Distinct ids: i times an odd constant is a bijection of uint32.
		e := session.Entry{ID: fmt.Sprintf("%08x", uint32(i)*2654435761), ParentID: parent, Timestamp: session.Timestamp(t)}
		switch i % 4 {
		case 0:
			msg = session.TextMessage("user", text(r, 200+r.IntN(800)))
			e.Provider, e.Model = "anthropic", "claude-sonnet-4-20250514"
		case 3:
			msg = []byte(`{"role":"assistant","content":[{"type":"text","text":`)
			msg = rawjson.AppendString(msg, text(r, 200+r.IntN(2000)))
			msg = append(msg, fmt.Sprintf(`}],"provider":"anthropic","model":"claude-sonnet-4-20250514","stopReason":"stop","usage":{"input":%d,"output":%d,"cacheRead":%d}}`,
				r.IntN(3000), r.IntN(2000), r.IntN(100000))...)
		case 1:
			msg = []byte(`{"role":"assistant","content":[{"type":"thinking","thinking":`)
			msg = rawjson.AppendString(msg, text(r, 300+r.IntN(600)))
			msg = append(msg, `,"signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},{"type":"text","text":`...)
			msg = rawjson.AppendString(msg, text(r, 200+r.IntN(1500)))
			msg = append(msg, `},{"type":"toolUse","id":"toolu_`...)
			msg = append(msg, fmt.Sprintf(`%d","name":"bash","input":"{\"command\":\"ls -la src/%d\"}"}]`, i, i)...)
			msg = append(msg, fmt.Sprintf(`,"provider":"anthropic","model":"claude-sonnet-4-20250514","stopReason":"toolUse","usage":{"input":%d,"output":%d,"cacheRead":%d,"cacheWrite":%d}}`,
				r.IntN(3000), r.IntN(2000), r.IntN(100000), r.IntN(5000))...)
		case 2:
			msg = []byte(fmt.Sprintf(`{"role":"user","content":[{"type":"toolResult","toolUseId":"toolu_%d","content":`, i-1))
			msg = append(rawjson.AppendString(msg, text(r, 500+r.IntN(5000))), "}]}"...)
			e.Provider, e.Model = "anthropic", "claude-sonnet-4-20250514"
		}
		e.Message = msg
		buf = e.AppendLine(buf)
		parent = e.ID
		if len(buf) > 1<<20 {
			written += int64(len(buf))
			w.Write(buf)
			buf = buf[:0]
		}
	}
	w.Write(buf)
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
