package costcmd

import (
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/panto-dev/panto/pkg/pricing"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// turn is one assistant reply found in the input.
type turn struct {
	session, project, entry string
	time                    time.Time // zero for message lines, which carry none
	key                     pricing.Key
	usage                   pricing.Usage
	hasUsage                bool
}

// skipped counts what was not priced, by reason.
type skipped struct {
	corrupt, torn, invalidUsage, duplicate, noTime int
}

// reader streams one input and hands each reply to emit.
type reader struct {
	label   string // the file name, or "-"
	session string // session id: the header's, else the label
	project string
	seen    map[uint32]struct{}
	seenStr map[string]struct{}
	skip    *skipped
	warn    func(format string, args ...any)
}

// read reads session lines, entry lines or message lines, up to the first
// corrupt line (SPEC §5).
func (r *reader) read(in io.Reader, emit func(*turn) error) error {
	rd := session.NewReader(in, 0)
	for {
		line, _, term, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		n := rd.LineNo()
		if !term {
			r.skip.torn++
			r.warn("%s: line %d: incomplete final line (a writer may be mid-append): not counted", r.label, n)
			return nil
		}
		if len(trim(line)) == 0 {
			continue
		}
		if !session.ValidJSON(line) || !isObject(line) {
			r.skip.corrupt++
			r.warn("%s: line %d: not a complete JSON object: read up to line %d (run panto-fsck %s)", r.label, n, n-1, r.label)
			return nil
		}
		var typ, id, ts, cwd, ver gjson.Result
		var msg gjson.Result
		gjson.ParseBytes(line).ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "type":
				typ = v
			case "id":
				id = v
			case "timestamp":
				ts = v
			case "cwd":
				cwd = v
			case "version":
				ver = v
			case "message":
				msg = v
			case "role":
				msg = gjson.ParseBytes(line) // a message line
				return false
			}
			return true
		})
		switch {
		case typ.Str == "session":
			r.session, r.project = id.Str, cwd.Str
			if r.session == "" {
				r.session = r.label
			}
			if ver.Int() > session.Version {
				r.warn("%s is format version %d, newer than %d: reading what it understands", r.label, ver.Int(), session.Version)
			}
			r.seen, r.seenStr = map[uint32]struct{}{}, map[string]struct{}{}
		case typ.Str == "message" || !typ.Exists() && msg.Exists():
			if !msg.IsObject() {
				continue
			}
			if typ.Exists() && r.duplicate(id.Str) {
				r.skip.duplicate++
				r.warn("%s: line %d: entry id %q repeats an earlier entry: not counted twice", r.label, n, id.Str)
				continue
			}
			t, err := r.reply(msg, n)
			if err != nil || t == nil {
				continue
			}
			t.entry = id.Str
			if ts.Exists() {
				if tm, err := time.Parse(time.RFC3339Nano, ts.Str); err == nil {
					t.time = tm
				}
			}
			if err := emit(t); err != nil {
				return err
			}
		}
	}
}

func (r *reader) duplicate(id string) bool {
	if r.seen == nil {
		r.seen, r.seenStr = map[uint32]struct{}{}, map[string]struct{}{}
	}
	if b, err := hex.DecodeString(id); err == nil && len(b) == 4 && hex.EncodeToString(b) == id {
		v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		if _, ok := r.seen[v]; ok {
			return true
		}
		r.seen[v] = struct{}{}
		return false
	}
	if _, ok := r.seenStr[id]; ok {
		return true
	}
	r.seenStr[id] = struct{}{}
	return false
}

var usageFields = []string{"input", "output", "cacheRead", "cacheWrite", "cacheWrite1h", "reasoning"}

// reply reads an assistant message; nil for any other role.
func (r *reader) reply(msg gjson.Result, n int) (*turn, error) {
	var role, provider, model, usage gjson.Result
	msg.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "role":
			role = v
		case "provider":
			provider = v
		case "model":
			model = v
		case "usage":
			usage = v
		}
		return true
	})
	if role.Str != "assistant" {
		return nil, nil
	}
	t := &turn{session: r.session, project: r.project, key: pricing.Key{Provider: provider.Str, Model: model.Str}}
	if !usage.Exists() {
		return t, nil
	}
	var vals [6]int64
	ok := usage.IsObject()
	for i, f := range usageFields {
		v := usage.Get(f)
		switch {
		case !v.Exists():
		case v.Type == gjson.Number && v.Raw[0] != '-' && v.Num == float64(int64(v.Num)):
			vals[i] = v.Int()
		default:
			ok = false
		}
	}
	if !ok || vals[4] > vals[3] || vals[5] > vals[1] {
		r.skip.invalidUsage++
		r.warn("%s: line %d: malformed usage %s: not counted", r.label, n, usage.Raw)
		return nil, fmt.Errorf("malformed usage")
	}
	t.usage = pricing.Usage{Input: vals[0], Output: vals[1], CacheRead: vals[2], CacheWrite: vals[3], CacheWrite1h: vals[4], Reasoning: vals[5]}
	t.hasUsage = true
	return t, nil
}

func trim(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

func isObject(b []byte) bool {
	b = trim(b)
	return len(b) > 0 && b[0] == '{'
}
