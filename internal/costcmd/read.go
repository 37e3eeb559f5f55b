package costcmd

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/panto-dev/panto/pkg/pricing"
	"github.com/panto-dev/panto/pkg/session"
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
	label    string // the file name, or "-"
	session  string // session id: the header's, else the label
	project  string
	seen     map[uint32]struct{}
	seenStr  map[string]struct{}
	skip     *skipped
	warn     func(format string, args ...any)
	needTime bool // the report uses timestamps: parse them (else skip the cost)
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
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !session.ValidJSON(line) || bytes.TrimSpace(line)[0] != '{' {
			r.skip.corrupt++
			r.warn("%s: line %d: not a complete JSON object: read up to line %d (run panto-fsck %s)", r.label, n, n-1, r.label)
			return nil
		}
		var typ, id, ts, cwd, ver, msg []byte
		var t *turn // the reply a "message" member holds, read as it is walked
		var bad error
		message := false // a message line: the line itself is the message
		session.WalkMembers(line, 0, func(k []byte, vs int) int {
			if msg == nil && line[vs] == '{' && session.KeyIs(k, "message") {
				var end int
				end, t, bad = r.reply(line, vs, n)
				msg = line[vs:end]
				return end
			}
			ve := session.SkipValue(line, vs)
			var dst *[]byte
			switch {
			case session.KeyIs(k, "type"):
				dst = &typ
			case session.KeyIs(k, "id"):
				dst = &id
			case session.KeyIs(k, "timestamp"):
				dst = &ts
			case session.KeyIs(k, "cwd"):
				dst = &cwd
			case session.KeyIs(k, "version"):
				dst = &ver
			case session.KeyIs(k, "role"):
				message = true
				return ve
			default:
				return ve
			}
			if *dst == nil {
				*dst = line[vs:ve]
			}
			return ve
		})
		if message && typ == nil {
			msg = line
			_, t, bad = r.reply(line, 0, n)
		}
		kind := session.Str(typ)
		switch {
		case kind == "session":
			r.session, r.project = session.Str(id), session.Str(cwd)
			if r.session == "" {
				r.session = r.label
			}
			if v, _ := session.Int(ver); v > session.Version {
				r.warn("%s is format version %d, newer than %d: reading what it understands", r.label, v, session.Version)
			}
			r.seen, r.seenStr = map[uint32]struct{}{}, map[string]struct{}{}
		case kind == "message" || typ == nil && msg != nil:
			if len(msg) == 0 || msg[0] != '{' || bad != nil || t == nil {
				continue
			}
			entry := session.Str(id)
			if typ != nil && r.duplicate(entry) { // only replies are priced: only they need the check
				r.skip.duplicate++
				r.warn("%s: line %d: entry id %q repeats an earlier entry: not counted twice", r.label, n, entry)
				continue
			}
			t.entry = entry
			if ts != nil && r.needTime {
				if tm, err := time.Parse(time.RFC3339Nano, session.Str(ts)); err == nil {
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
	if v, ok := session.HexID(id); ok {
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

// reply reads the message object at b[i], in one walk: an assistant
// message becomes a turn; any other role gives nil. It returns the index
// after the object.
func (r *reader) reply(b []byte, i, n int) (int, *turn, error) {
	var role, provider, model, usage []byte
	notReply := false
	end := session.WalkMembers(b, i, func(k []byte, vs int) int {
		ve := session.SkipValue(b, vs)
		var dst *[]byte
		switch {
		case session.KeyIs(k, "role"):
			if role == nil && session.Str(b[vs:ve]) != "assistant" {
				notReply = true
			}
			dst = &role
		case session.KeyIs(k, "provider"):
			dst = &provider
		case session.KeyIs(k, "model"):
			dst = &model
		case session.KeyIs(k, "usage"):
			dst = &usage
		default:
			return ve
		}
		if *dst == nil {
			*dst = b[vs:ve]
		}
		return ve
	})
	if end < 0 {
		end = session.SkipValue(b, i)
	}
	if notReply || session.Str(role) != "assistant" {
		return end, nil, nil
	}
	t := &turn{session: r.session, project: r.project, key: pricing.Key{Provider: session.Str(provider), Model: session.Str(model)}}
	if usage == nil {
		return end, t, nil
	}
	var vals [6]int64
	ok := usage[0] == '{'
	session.Members(usage, func(k, v []byte) bool {
		for j, f := range usageFields {
			if session.KeyIs(k, f) {
				vals[j], ok = session.Int(v)
			}
		}
		return ok
	})
	if !ok || vals[4] > vals[3] || vals[5] > vals[1] {
		r.skip.invalidUsage++
		r.warn("%s: line %d: malformed usage %s: not counted", r.label, n, usage)
		return end, nil, fmt.Errorf("malformed usage")
	}
	t.usage = pricing.Usage{Input: vals[0], Output: vals[1], CacheRead: vals[2], CacheWrite: vals[3], CacheWrite1h: vals[4], Reasoning: vals[5]}
	t.hasUsage = true
	return end, t, nil
}
