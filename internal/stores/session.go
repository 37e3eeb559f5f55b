package stores

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/store"
	"github.com/tidwall/gjson"
)

// MinPrefix is the fewest characters of an id that name a session.
const MinPrefix = 4

// Session is what a command that takes one session (replay, cost, fsck,
// export, resolve) opens for arg (SPEC §15, one id): a path, as it is;
// else, in the file store, the session whose id starts with arg: panto's
// header id, an agent's own session id (its log where the agent keeps
// it), or an import's origin.id (the agent's id finds its import, which
// is taken over the log: it is panto's session). A store that is not files
// resolves its own ids: arg is returned as it is. An id no session has is
// a store.NotFoundError; one that several have, a store.AmbiguousError
// naming them.
func Session(ctx context.Context, st store.Store, getenv func(string) string, arg string) (string, error) {
	if arg == "-" || arg == "" {
		return arg, nil
	}
	if _, err := os.Lstat(arg); err == nil {
		return arg, nil
	}
	if _, files := st.(store.Files); !files || !looksLikeID(arg) || strings.ContainsRune(arg, os.PathSeparator) {
		return arg, nil
	}
	if len(arg) < MinPrefix {
		return "", exitcode.Usagef("%q: give at least %d characters of a session id (or a file)", arg, MinPrefix)
	}
	prefix := strings.ToLower(arg)
	has := func(id string) bool { return id != "" && strings.HasPrefix(strings.ToLower(id), prefix) }
	type found struct {
		id, path string
		rank     int // an import over a log's session, a database's over another copy of it
	}
	const (
		inLog = iota // a log of one session
		inDB         // a session of a database (OpenCode's: preferred to its storage/ tree's copy)
		imported
	)
	matches := map[string]found{} // by the session (its id, any case): an import and its log are one
	take := func(id, path string, rank int) {
		key := strings.ToLower(id)
		if f, ok := matches[key]; ok && f.rank > rank {
			return
		}
		matches[key] = found{id, path, rank}
	}
	base, err := catalog.EnvFrom(getenv).BaseDir()
	if err == nil {
		if files, err := catalog.AllFiles(base); err == nil {
			for _, p := range files {
				id := catalog.IDFromPath(p)
				origin := originID(p)
				switch {
				case origin != "" && (has(origin) || has(id)):
					take(origin, p, imported)
				case has(id):
					take(id, p, imported)
				}
			}
		}
	}
	// The sessions of the logs that hold several (an OpenCode database),
	// each named DB#SESSION (catalog.SplitSession), read once.
	dbs := map[string][]agents.LogSession{}
	several := func(p string) ([]agents.LogSession, bool) {
		if list, ok := dbs[p]; ok {
			return list, list != nil
		}
		if !strings.HasSuffix(p, ".db") {
			return nil, false
		}
		list, _ := agents.SessionsIn(p)
		if list == nil {
			list = []agents.LogSession{}
		}
		dbs[p] = list
		return list, true
	}
	for _, place := range agents.Places(agents.Unknown, getenv) {
		catalog.WalkWith(place, agents.IsLogPath, func(p string, err error) error {
			if err != nil {
				return nil
			}
			if list, ok := several(p); ok {
				for _, s := range list {
					if has(s.ID) {
						take(s.ID, p+"#"+s.ID, inDB)
					}
				}
				return nil
			}
			id := AgentID(p)
			if id == "" {
				// a log whose name does not hold the agent's id (a
				// Gemini CLI chat names 8 characters of it): its header's
				id = logID(p)
			}
			if has(id) {
				take(id, p, inLog)
			}
			return nil
		})
	}
	if len(matches) == 0 {
		// panto's id of a log read in place (what its import, its page
		// and cost's JSON call it): made from its first time and the
		// agent's id, so each log's header is read.
		for _, place := range agents.Places(agents.Unknown, getenv) {
			catalog.WalkWith(place, agents.IsLogPath, func(p string, err error) error {
				if err != nil {
					return nil
				}
				if list, ok := several(p); ok {
					for _, s := range list {
						if has(s.Panto) {
							take(s.Panto, p+"#"+s.ID, inDB)
						}
					}
					return nil
				}
				if id := pantoID(p); has(id) {
					take(id, p, inLog)
				}
				return nil
			})
		}
	}
	switch len(matches) {
	case 0:
		return "", &store.NotFoundError{Prefix: arg}
	case 1:
		for _, f := range matches {
			return f.path, nil
		}
	}
	e := &store.AmbiguousError{Prefix: arg}
	for _, f := range matches {
		e.IDs = append(e.IDs, f.id)
	}
	sort.Strings(e.IDs)
	return "", e
}

// SessionArg is Session for a command's argument, its errors said: an
// ambiguous id is exit 2 with the candidates; an id no session has, exit 2
// saying where it was looked for.
func SessionArg(ctx context.Context, st store.Store, proc cli.IO, arg string) (string, error) {
	p, err := Session(ctx, st, proc.Getenv, arg)
	var amb *store.AmbiguousError
	var nf *store.NotFoundError
	switch {
	case errors.As(err, &amb):
		return "", exitcode.New(exitcode.Usage, err)
	case errors.As(err, &nf):
		return "", exitcode.Usagef("%q is no file, and no session id starts with it (panto's, an agent's own, or an import's origin): panto-log list --all shows them", arg)
	}
	return p, err
}

// looksLikeID reports whether s may be (the start of) a session id: hex
// digits and hyphens (a UUID), or an OpenCode id ("ses_" and letters and
// digits).
func looksLikeID(s string) bool {
	if rest, ok := strings.CutPrefix(s, "ses_"); ok || strings.HasPrefix("ses_", s) {
		for _, c := range rest {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
				return false
			}
		}
		return s != ""
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' || c == '-') {
			return false
		}
	}
	return s != ""
}

// AgentID is the agent's own session id a log's path names: a Claude Code
// <id>.jsonl, a Codex rollout-<time>-<id>.jsonl, a pi <time>_<id>.jsonl,
// a Copilot CLI session-state/<id>/events.jsonl, a page of a paged Codex
// rollout-<time>-<id>_<page>.jsonl (the thread's id, not the page's); ""
// when it names none.
func AgentID(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if base == "events" {
		base = filepath.Base(filepath.Dir(path))
	}
	if i := strings.LastIndexByte(base, '_'); strings.HasPrefix(base, "rollout-") && i >= 36 && isUUID(base[i-36:i]) {
		base = base[:i]
	}
	if len(base) >= 36 && isUUID(base[len(base)-36:]) {
		return strings.ToLower(base[len(base)-36:])
	}
	return ""
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// OriginOf is the origin.id of a panto session's header: the agent's id
// of the log it was imported from ("" for none).
func OriginOf(path string) string { return originID(path) }

// originID is the origin.id of a panto session's header ("" for none).
func originID(path string) string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO does not block the open
	if err != nil {
		return ""
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 4096)
	line, err := br.ReadSlice('\n')
	if err != nil && err != bufio.ErrBufferFull {
		return ""
	}
	return strings.Clone(gjson.GetBytes(line, "origin.id").Str)
}

var errHeader = errors.New("the header is all that is wanted")

// pantoID is the id panto gives the session of another agent's log (its
// import's header id), "" when it is no log panto reads.
func pantoID(path string) string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO does not block the open
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	var id string
	agents.Read(agents.Source{Path: path, R: f, Size: fi.Size()}, agents.Unknown, agents.Options{},
		func(h *agents.Header) error { id = h.ID; return errHeader },
		func(*agents.Entry) error { return errHeader })
	return id
}

// LogID is the agent's own session id of a log: the one its path names
// (AgentID), else the one its header holds (a Gemini CLI chat's name holds
// 8 characters of it); "" when it is no log panto reads.
func LogID(path string) string {
	if id := AgentID(path); id != "" {
		return id
	}
	return logID(path)
}

// logID is the agent's own session id of a log, read from its header ("" when
// it is no log panto reads).
func logID(path string) string {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO does not block the open
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	if strings.HasSuffix(path, ".json") {
		// a Gemini CLI chat is one JSON document whose first key is its
		// sessionId: read from its head, not the whole document decoded
		head := make([]byte, 4096)
		n, _ := io.ReadFull(f, head)
		if id := gjson.GetBytes(head[:n], "sessionId").Str; isUUID(id) {
			return strings.ToLower(id)
		}
	}
	var id string
	agents.Read(agents.Source{Path: path, R: f, Size: fi.Size()}, agents.Unknown, agents.Options{},
		func(h *agents.Header) error { id = strings.Clone(h.Origin.ID); return errHeader },
		func(*agents.Entry) error { return errHeader })
	return id
}
