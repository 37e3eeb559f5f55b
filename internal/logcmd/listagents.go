package logcmd

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/store"
)

// inPlace adds to list (panto's sessions) the sessions of the other agents'
// logs where the agents keep them, read in place, without an import (SPEC
// §15): agent is one agent's name, or "" for all. A log imported already
// is its import's row. Each row's id is the agent's own session id, which
// every command takes back.
func inPlace(list []store.Summary, proc cli.IO, agent string) []store.Summary {
	imported := map[string]bool{}
	for _, s := range list {
		if s.Agent != "" && s.Agent != "panto" {
			if id := stores.OriginOf(s.Path); id != "" {
				imported[strings.ToLower(id)] = true
			}
		}
	}
	f := agents.Unknown
	if agent != "" {
		if a := agents.Named(agent); a != nil {
			f = a.Format
		}
	}
	for _, place := range agents.Places(f, proc.Getenv) {
		catalog.WalkWith(place, agents.IsLogPath, func(p string, err error) error {
			if err != nil {
				return nil
			}
			if id := stores.AgentID(p); id != "" && imported[id] {
				return nil
			}
			if agents.InDatabase(p) != "" {
				return nil // a session of OpenCode's storage/ tree its database holds: the database's row
			}
			for _, s := range describeLog(p) {
				if (agent == "" || s.Agent == agent) && !imported[strings.ToLower(s.ID)] {
					list = append(list, s)
				}
			}
			return nil
		})
	}
	store.SortNewest(list)
	return list
}

var errEnough = errors.New("enough")

// describeLog reads an agent's log for its rows, one per session it
// holds (an OpenCode database holds many): its agent, own id, cwd, first
// and last times, messages and title.
func describeLog(path string) []store.Summary {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO does not block the open
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	src := agents.Source{Path: path, R: f, Size: fi.Size()}
	var rows []store.Summary
	var last []string
	format, _, err := agents.Read(src, agents.Unknown, agents.Options{Content: true},
		func(h *agents.Header) error {
			s := store.Summary{Path: path, Size: fi.Size(), Modified: fi.ModTime()}
			s.ID, s.Cwd, s.Agent = strings.Clone(h.Origin.ID), strings.Clone(h.Cwd), h.Origin.Agent
			s.Created, _ = time.Parse(time.RFC3339Nano, h.Timestamp)
			rows = append(rows, s)
			last = append(last, "")
			return nil
		},
		func(e *agents.Entry) error {
			if len(rows) == 0 {
				return nil
			}
			s := &rows[len(rows)-1]
			if e.Role == "user" || e.Role == "assistant" {
				s.Messages++
			}
			if e.Role == "user" && s.Title == "" && len(e.Body) > 0 {
				// a session's first prompt, its title when the file
				// holds several (the file's is only the first's)
				s.Title = agents.TitleOf(append(append([]byte(`{"type":"message","message":`), e.Body...), '}'), agents.Unknown)
			}
			last[len(rows)-1] = strings.Clone(e.Timestamp)
			return nil
		})
	if err != nil && (len(rows) == 0 || rows[0].ID == "") {
		return nil
	}
	for i := range rows {
		if t, err := time.Parse(time.RFC3339Nano, last[i]); err == nil {
			rows[i].Modified = t
		}
	}
	if len(rows) == 1 && !isDatabase(f) {
		// A file of one session: its first prompt as Title reads it. A
		// database has no such line: its session's first prompt, read
		// above, stays (Title blanked it).
		rows[0].Title = agents.Title(src, format)
	}
	for i := range rows {
		rows[i].Prompt = rows[i].Title
	}
	return rows
}

// isDatabase reports whether f, open at its start or not, is a SQLite
// database (an OpenCode opencode.db).
func isDatabase(f *os.File) bool {
	var b [16]byte
	n, _ := f.ReadAt(b[:], 0)
	return agents.IsSQLite(b[:n])
}
