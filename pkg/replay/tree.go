package replay

import (
	"fmt"
	"io"
	"strings"

	"github.com/panto-dev/panto/pkg/session"
	"github.com/tidwall/gjson"
)

// WriteTree prints the tree of entries, one line per entry:
//
//	<graph> <id> <role or type> <summary> [marks]
//
// A chain of single children stays at one level; each child of a branch
// point starts a new level with "+ ", and the lines below it carry "| " (or
// "  " under the last child). Marks: branch (more than one child), leaf,
// current (the leaf a plain replay follows), orphan (its parent is missing).
func (s *Session) WriteTree(w io.Writer) error {
	l := s.Log
	kids := make([][]int32, len(l.Nodes))
	var roots []int32
	for i, n := range l.Nodes {
		if n.Parent >= 0 {
			kids[n.Parent] = append(kids[n.Parent], int32(i))
		} else {
			roots = append(roots, int32(i))
		}
	}
	type item struct {
		node        int32
		first, rest string // graph prefixes of the first line and of the lines below
	}
	var stack []item
	for i := len(roots) - 1; i >= 0; i-- {
		first, rest := "", ""
		if len(roots) > 1 {
			first, rest = "+ ", "| "
			if i == len(roots)-1 {
				rest = "  "
			}
		}
		stack = append(stack, item{roots[i], first, rest})
	}
	current := l.Leaf()
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for n, prefix := it.node, it.first; ; prefix = it.rest {
			if err := s.treeLine(w, prefix, n, len(kids[n]), n == current); err != nil {
				return err
			}
			if len(kids[n]) != 1 {
				for j := len(kids[n]) - 1; j >= 0; j-- {
					rest := it.rest + "| "
					if j == len(kids[n])-1 {
						rest = it.rest + "  "
					}
					stack = append(stack, item{kids[n][j], it.rest + "+ ", rest})
				}
				break
			}
			n = kids[n][0]
		}
	}
	return nil
}

func (s *Session) treeLine(w io.Writer, prefix string, i int32, nkids int, current bool) error {
	n := s.Log.Nodes[i]
	what, summary := n.Role.String(), ""
	if n.Kind != session.KindMessage {
		line, err := s.Line(i)
		if err != nil {
			return err
		}
		what = gjson.GetBytes(line, "type").Str
	} else {
		m, err := s.Message(i)
		if err != nil {
			return err
		}
		summary = Summary(gjson.ParseBytes(m))
	}
	var marks []string
	if nkids > 1 {
		marks = append(marks, "branch")
	}
	if nkids == 0 {
		marks = append(marks, "leaf")
	}
	if current {
		marks = append(marks, "current")
	}
	if n.Parent == session.DanglingParent {
		marks = append(marks, "orphan")
	}
	line := prefix + s.Log.ID(i) + " " + what
	if summary != "" {
		line += " " + summary
	}
	if len(marks) > 0 {
		line += " [" + strings.Join(marks, " ") + "]"
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// Summary is a one-line description of a message: its text, quoted and cut
// to 60 characters, and its tool calls and results.
func Summary(msg gjson.Result) string {
	var parts []string
	if t := Text(msg); t != "" {
		t = strings.Join(strings.Fields(t), " ")
		if r := []rune(t); len(r) > 60 {
			t = string(r[:59]) + "…"
		}
		parts = append(parts, fmt.Sprintf("%q", t))
	}
	msg.Get("content").ForEach(func(_, b gjson.Result) bool {
		switch b.Get("type").Str {
		case "toolUse":
			parts = append(parts, "toolUse:"+b.Get("name").Str)
		case "toolResult":
			parts = append(parts, "toolResult")
		case "thinking", "redactedThinking":
			if len(parts) == 0 || parts[len(parts)-1] != "thinking" {
				parts = append(parts, "thinking")
			}
		}
		return true
	})
	return strings.Join(parts, " ")
}
