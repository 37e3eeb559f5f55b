package replay

import (
	"regexp"
	"strings"

	"github.com/tidwall/gjson"
)

// diffLine is a line of an edit shown as a diff.
type diffLine struct{ Class, Sign, Text string }

// maxDiffLines bounds an edit's diff on a page; the whole input stays in
// the folded input below it.
const maxDiffLines = 400

// toolKind reads a tool call's input by what the tool does, as the agents
// name their tools (Claude Code's Bash, Edit, MultiEdit, Write, Read;
// Codex's shell, exec_command; pi's and panto's bash, read, edit, write):
// a shell command, an edit (shown as a diff), a file read or write (its
// path). An input of another shape, or a tool of another name, is shown
// as its JSON alone.
func toolKind(b *blockView, name, input string) {
	in := gjson.Parse(input)
	if !in.IsObject() {
		return
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			if v := in.Get(k); v.Type == gjson.String {
				return v.Str
			}
		}
		return ""
	}
	switch strings.ToLower(name) {
	case "bash", "shell", "exec_command", "local_shell", "container.exec":
		cmd := str("command", "cmd")
		if cmd == "" {
			if a := in.Get("command"); a.IsArray() {
				var parts []string
				for _, p := range a.Array() {
					parts = append(parts, p.Str)
				}
				// ["bash","-lc","…"]: the script is what was typed.
				if len(parts) == 3 && (parts[1] == "-lc" || parts[1] == "-c") {
					cmd = parts[2]
				} else {
					cmd = strings.Join(parts, " ")
				}
			}
		}
		if cmd != "" {
			b.Tool, b.Cmd = "shell", clean(cmd)
		}
	case "edit", "multiedit", "str_replace_based_edit_tool", "str_replace_editor":
		path := str("file_path", "path")
		if path == "" {
			return
		}
		b.Tool, b.Path = "edit", clean(path)
		add := func(old, new string) {
			for _, l := range splitLines(old) {
				b.Diff = append(b.Diff, diffLine{"del", "-", clean(l)})
			}
			for _, l := range splitLines(new) {
				b.Diff = append(b.Diff, diffLine{"add", "+", clean(l)})
			}
		}
		if edits := in.Get("edits"); edits.IsArray() {
			for i, e := range edits.Array() {
				if i > 0 {
					b.Diff = append(b.Diff, diffLine{"sep", "", "⋯"})
				}
				add(e.Get("old_string").Str+e.Get("oldText").Str, e.Get("new_string").Str+e.Get("newText").Str)
			}
		} else {
			add(str("old_string", "oldText", "old_str"), str("new_string", "newText", "new_str"))
		}
		if len(b.Diff) > maxDiffLines {
			n := len(b.Diff) - maxDiffLines
			b.Diff = append(b.Diff[:maxDiffLines], diffLine{"sep", "", "⋯ " + plural(n, "more line", "more lines") + " in the input"})
		}
	case "read", "read_file", "view":
		if p := str("file_path", "path"); p != "" {
			b.Tool, b.Path = "read", clean(p)
		}
	case "write", "write_file", "create":
		if p := str("file_path", "path"); p != "" {
			b.Tool, b.Path = "write", clean(p)
		}
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// exitRe finds a shell's exit status in its result, as the agents write
// it: Claude Code's "Exit code 1", Codex's "Exit code: 0" or
// "Process exited with code 2", a JSON exit_code.
var exitRe = regexp.MustCompile(`(?m)(?:^Exit code:? |Process exited with code |"exit_code":\s*)(-?\d+)`)

// exitOf is the exit status a shell command's result says, "" when none.
func exitOf(result string) string {
	if len(result) > 1<<16 {
		result = result[:1<<16]
	}
	if m := exitRe.FindStringSubmatch(result); m != nil {
		return m[1]
	}
	return ""
}
