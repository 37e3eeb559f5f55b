package logcmd

import (
	"errors"
	"os"
	"strings"
	"time"

	"github.com/panto-dev/panto/internal/cli"
	"github.com/panto-dev/panto/internal/stores"
	"github.com/panto-dev/panto/pkg/agents"
	"github.com/panto-dev/panto/pkg/catalog"
	"github.com/panto-dev/panto/pkg/store"
)

// inPlace adds to list (panto's sessions) the sessions of the other agents'
// logs where the agents keep them, read in place, without an import (SPEC
// §15): agent is one agent's name, or "" for all. A log imported already
// is its import's row. Each row's id is the agent's own session id, which
// every command takes back.
func inPlace(list []store.Summary, io cli.IO, agent string) []store.Summary {
	imported := map[string]bool{}
	for _, s := range list {
		if s.Agent != "" && s.Agent != "panto" {
			if id := stores.OriginOf(s.Path); id != "" {
				imported[id] = true
			}
		}
	}
	f := agents.Unknown
	if agent != "" {
		if a := agents.Named(agent); a != nil {
			f = a.Format
		}
	}
	for _, place := range agents.Places(f, io.Getenv) {
		catalog.WalkWith(place, agents.IsLogPath, func(p string, err error) error {
			if err != nil {
				return nil
			}
			if id := stores.AgentID(p); id != "" && imported[id] {
				return nil
			}
			if s, ok := describeLog(p); ok && (agent == "" || s.Agent == agent) && !imported[s.ID] {
				list = append(list, s)
			}
			return nil
		})
	}
	store.SortNewest(list)
	return list
}

var errEnough = errors.New("enough")

// describeLog reads an agent's log for its row: its agent, own id, cwd,
// first and last times, messages and title.
func describeLog(path string) (store.Summary, bool) {
	f, err := os.Open(path)
	if err != nil {
		return store.Summary{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return store.Summary{}, false
	}
	src := agents.Source{Path: path, R: f, Size: fi.Size()}
	s := store.Summary{Path: path, Size: fi.Size(), Modified: fi.ModTime()}
	var last string
	format, _, err := agents.Read(src, agents.Unknown, agents.Options{Content: true},
		func(h *agents.Header) error {
			s.ID, s.Cwd, s.Agent = strings.Clone(h.Origin.ID), strings.Clone(h.Cwd), h.Origin.Agent
			s.Created, _ = time.Parse(time.RFC3339Nano, h.Timestamp)
			return nil
		},
		func(e *agents.Entry) error {
			if e.Role == "user" || e.Role == "assistant" {
				s.Messages++
			}
			last = e.Timestamp
			return nil
		})
	if err != nil && s.ID == "" {
		return store.Summary{}, false
	}
	if t, err := time.Parse(time.RFC3339Nano, last); err == nil {
		s.Modified = t
	}
	s.Title = agents.Title(src, format)
	s.Prompt = s.Title
	return s, true
}
