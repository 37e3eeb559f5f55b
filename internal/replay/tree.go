package replay

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/panto-dev/panto/internal/tty"
	"github.com/panto-dev/panto/pkg/scan"
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
	// A prefix is a list of two-byte segments ("+ ", "| ", "  ") that each
	// level adds to its parent's, shared: memory stays linear in entries
	// however deep the branches nest (a copied string per pending branch
	// was quadratic).
	type item struct {
		node        int32
		first, rest *prefix // graph prefixes of the first line and of the lines below
	}
	var stack []item
	for i := len(roots) - 1; i >= 0; i-- {
		var first, rest *prefix
		if len(roots) > 1 {
			first, rest = &prefix{seg: "+ "}, &prefix{seg: "| "}
			if i == len(roots)-1 {
				rest = &prefix{seg: "  "}
			}
		}
		stack = append(stack, item{roots[i], first, rest})
	}
	current := l.Leaf()
	var buf []byte
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for n, pre := it.node, it.first; ; pre = it.rest {
			var err error
			if buf, err = s.treeLine(w, pre.appendTo(buf[:0]), n, len(kids[n]), n == current); err != nil {
				return err
			}
			if len(kids[n]) != 1 {
				last := &prefix{seg: "  ", up: it.rest}
				more := &prefix{seg: "| ", up: it.rest}
				branch := &prefix{seg: "+ ", up: it.rest}
				for j := len(kids[n]) - 1; j >= 0; j-- {
					rest := more
					if j == len(kids[n])-1 {
						rest = last
					}
					stack = append(stack, item{kids[n][j], branch, rest})
				}
				kids[n] = nil // done with: the memory goes as the walk does
				break
			}
			n = kids[n][0]
		}
	}
	return nil
}

// prefix is the graph before a line of the tree: its own segment after
// the segments of up.
type prefix struct {
	seg string
	up  *prefix
}

// appendTo appends the whole prefix, outermost segment first.
func (p *prefix) appendTo(b []byte) []byte {
	n := 0
	for q := p; q != nil; q = q.up {
		n += len(q.seg)
	}
	b = slices.Grow(b, n)[:len(b)+n]
	end := len(b)
	for q := p; q != nil; q = q.up {
		end -= len(q.seg)
		copy(b[end:], q.seg)
	}
	return b
}

// treeLine writes the line of node i after the prefix in line, and
// returns line's memory for the next.
func (s *Session) treeLine(w io.Writer, line []byte, i int32, nkids int, current bool) ([]byte, error) {
	n := s.Log.Nodes[i]
	what, summary := n.Role.String(), ""
	if n.Kind != session.KindMessage {
		raw, err := s.Line(i)
		if err != nil {
			return line, err
		}
		what = gjson.GetBytes(raw, "type").Str
	} else {
		m, err := s.Message(i)
		if err != nil {
			return line, err
		}
		summary = Summary(gjson.ParseBytes(m))
	}
	// The id, type and summary come from the log: escaped for the terminal.
	line = append(append(append(line, tty.Line(s.Log.ID(i))...), ' '), tty.Line(what)...)
	if summary != "" {
		line = append(append(line, ' '), tty.Line(summary)...)
	}
	sep := " ["
	mark := func(m string) {
		line = append(append(line, sep...), m...)
		sep = " "
	}
	if nkids > 1 {
		mark("branch")
	}
	if nkids == 0 {
		mark("leaf")
	}
	if current {
		mark("current")
	}
	if n.Parent == scan.DanglingParent {
		mark("orphan")
	}
	if sep == " " {
		line = append(line, ']')
	}
	_, err := w.Write(append(line, '\n'))
	return line, err
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
