package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"
)

// Shells are the shells Completion writes scripts for.
var Shells = []string{"bash", "zsh", "fish"}

// CompletionFlag is every command's --completion SHELL: it prints the
// completion script for SHELL, made from the command's own grammar, and
// exits 0 (before any other check, as --version does).
type CompletionFlag string

// BeforeReset writes the script and ends the command.
func (CompletionFlag) BeforeReset(app *kong.Kong, ctx *kong.Context, trace *kong.Path) error {
	shell, _ := ctx.FlagValue(trace.Flag).(CompletionFlag)
	if err := Completion(app.Stdout, app.Model, string(shell)); err != nil {
		return err
	}
	app.Exit(0)
	return nil
}

type completion struct {
	Completion CompletionFlag `name:"completion" placeholder:"SHELL" help:"Print the shell completion script for bash, zsh or fish and exit: source <(panto-X --completion bash), or write it where your shell loads completions."`
}

// Completion writes the completion script of the command app describes for
// shell (bash, zsh or fish). Everything in it comes from the grammar:
// subcommands, flags (long and short), the values of enum flags; other
// arguments complete as file names.
func Completion(w io.Writer, app *kong.Application, shell string) error {
	c := walk(app)
	var s string
	switch shell {
	case "bash":
		s = c.bash()
	case "zsh":
		s = c.zsh()
	case "fish":
		s = c.fish()
	default:
		return fmt.Errorf("no completion for shell %q: give bash, zsh or fish", shell)
	}
	_, err := io.WriteString(w, s)
	return err
}

// complNode is a command or subcommand as the scripts need it.
type complNode struct {
	name  string // "" for the root
	prog  string // the command's name, on the root
	help  string
	flags []complFlag // its own and its parents'
	subs  []*complNode
}

type complFlag struct {
	long   string
	short  rune
	help   string
	value  bool     // takes a value
	enum   []string // its values, when an enum
	repeat bool
	file   bool // its value is a file name
}

func walk(app *kong.Application) *complNode {
	var visit func(n *kong.Node, inherited []complFlag) *complNode
	visit = func(n *kong.Node, inherited []complFlag) *complNode {
		c := &complNode{help: firstSentence(n.Help)}
		if n.Type == kong.CommandNode {
			c.name = n.Name
		}
		c.flags = append(c.flags, inherited...)
		for _, f := range n.Flags {
			if f.Hidden {
				continue
			}
			cf := complFlag{long: f.Name, short: f.Short, help: firstSentence(f.Help),
				value: !f.IsBool() && !f.IsCounter(), repeat: f.IsSlice() || f.IsMap() || f.IsCounter(),
				file: f.PlaceHolder == "FILE" || strings.Contains(f.Tag.Type, "file") || strings.Contains(f.Tag.Type, "path")}
			if f.Name == "completion" {
				cf.enum = Shells
			} else if f.Enum != "" {
				for _, v := range f.EnumSlice() {
					if v = strings.TrimSpace(v); v != "" {
						cf.enum = append(cf.enum, v)
					}
				}
			}
			c.flags = append(c.flags, cf)
		}
		for _, ch := range n.Children {
			if ch.Type == kong.CommandNode && !ch.Hidden {
				c.subs = append(c.subs, visit(ch, c.flags[:len(c.flags):len(c.flags)]))
			}
		}
		return c
	}
	root := visit(app.Node, nil)
	root.prog = app.Name
	return root
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(s, ".")
	if r := []rune(s); len(r) > 70 {
		s = strings.TrimSpace(string(r[:67])) + "..."
	}
	return s
}

func ident(name string) string { return "_" + strings.NewReplacer("-", "_", ".", "_").Replace(name) }

func (c *complNode) flagWords() string {
	var w []string
	for _, f := range c.flags {
		w = append(w, "--"+f.long)
		if f.short != 0 {
			w = append(w, "-"+string(f.short))
		}
	}
	return strings.Join(w, " ")
}

func (c *complNode) subNames() string {
	var w []string
	for _, s := range c.subs {
		w = append(w, s.name)
	}
	return strings.Join(w, " ")
}

// bash: the subcommand is the first word that names one; the word before
// the cursor chooses between a flag's values, flags and subcommands;
// nothing offered falls back to file names (complete -o default).
func (c *complNode) bash() string {
	fn := ident(c.name0())
	var b strings.Builder
	fmt.Fprintf(&b, "# bash completion for %s (%s --completion bash)\n", c.name0(), c.name0())
	fmt.Fprintf(&b, "%s() {\n", fn)
	b.WriteString("\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= i\n")
	b.WriteString("\tif [[ $cur == = ]]; then cur=; prev=${COMP_WORDS[COMP_CWORD-1]}; fi\n")
	b.WriteString("\tif [[ $prev == = ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; fi\n")
	if len(c.subs) > 0 {
		b.WriteString("\tfor ((i = 1; i < COMP_CWORD; i++)); do\n\t\tcase ${COMP_WORDS[i]} in\n")
		fmt.Fprintf(&b, "\t\t%s) cmd=${COMP_WORDS[i]}; break ;;\n", strings.ReplaceAll(c.subNames(), " ", "|"))
		b.WriteString("\t\tesac\n\tdone\n")
	}
	b.WriteString("\tcase $cmd in\n")
	nodes := append([]*complNode{c}, c.subs...)
	for _, n := range nodes {
		fmt.Fprintf(&b, "\t%q)\n", n.name)
		b.WriteString("\t\tcase $prev in\n")
		for _, f := range n.flags {
			if !f.value {
				continue
			}
			pat := "--" + f.long
			if f.short != 0 {
				pat += "|-" + string(f.short)
			}
			if len(f.enum) > 0 {
				fmt.Fprintf(&b, "\t\t%s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", pat, strings.Join(f.enum, " "))
			} else {
				fmt.Fprintf(&b, "\t\t%s) COMPREPLY=(); return ;;\n", pat)
			}
		}
		b.WriteString("\t\tesac\n")
		words := n.flagWords()
		fmt.Fprintf(&b, "\t\tif [[ $cur == -* ]]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi\n", words)
		if len(n.subs) > 0 {
			fmt.Fprintf(&b, "\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n", n.subNames())
		}
		b.WriteString("\t\t;;\n")
	}
	b.WriteString("\tesac\n}\n")
	fmt.Fprintf(&b, "complete -o default -F %s %s\n", fn, c.name0())
	return b.String()
}

func (c *complNode) name0() string { return c.prog }

func zshQuote(s string) string {
	return strings.NewReplacer("'", `'\''`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(s)
}

func (f complFlag) zspec() string {
	names := "--" + f.long
	excl := ""
	if f.short != 0 {
		excl = fmt.Sprintf("(-%c --%s)", f.short, f.long)
		names = fmt.Sprintf("{-%c,--%s}", f.short, f.long)
	}
	if f.repeat {
		excl = "*"
	}
	eq := ""
	if f.value {
		eq = "="
	}
	spec := "'" + excl + "'" + names + "'" + eq + "[" + zshQuote(f.help) + "]"
	if f.short == 0 {
		spec = "'" + excl + names + eq + "[" + zshQuote(f.help) + "]"
	}
	if f.value {
		if len(f.enum) > 0 {
			spec += ":" + f.long + ":(" + strings.Join(f.enum, " ") + ")"
		} else if f.file {
			spec += ":" + f.long + ":_files"
		} else {
			spec += ":" + f.long + ": "
		}
	}
	return spec + "'"
}

func (c *complNode) zsh() string {
	root := c.name0()
	fn := ident(root)
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef %s\n# zsh completion for %s (%s --completion zsh)\n", root, root, root)
	fmt.Fprintf(&b, "%s() {\n", fn)
	if len(c.subs) == 0 {
		b.WriteString("\t_arguments -s")
		for _, f := range c.flags {
			b.WriteString(" \\\n\t\t" + f.zspec())
		}
		b.WriteString(" \\\n\t\t'*:file:_files'\n}\n")
	} else {
		b.WriteString("\tlocal curcontext=$curcontext state line\n\t_arguments -s -C")
		for _, f := range c.flags {
			b.WriteString(" \\\n\t\t" + f.zspec())
		}
		b.WriteString(" \\\n\t\t'1:command:->cmds' \\\n\t\t'*::arg:->args'\n")
		b.WriteString("\tcase $state in\n\tcmds)\n\t\tlocal -a cmds=(\n")
		for _, s := range c.subs {
			fmt.Fprintf(&b, "\t\t\t'%s:%s'\n", s.name, strings.ReplaceAll(zshQuote(s.help), `\[`, "["))
		}
		b.WriteString("\t\t)\n\t\t_describe command cmds ;;\n\targs)\n\t\tcase $line[1] in\n")
		for _, s := range c.subs {
			fmt.Fprintf(&b, "\t\t%s) _arguments -s", s.name)
			for _, f := range s.flags {
				b.WriteString(" \\\n\t\t\t" + f.zspec())
			}
			b.WriteString(" \\\n\t\t\t'*:file:_files' ;;\n")
		}
		b.WriteString("\t\tesac ;;\n\tesac\n}\n")
	}
	fmt.Fprintf(&b, "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then %s \"$@\"; else compdef %s %s; fi\n", fn, fn, root)
	return b.String()
}

func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func (c *complNode) fish() string {
	root := c.name0()
	var b strings.Builder
	fmt.Fprintf(&b, "# fish completion for %s (%s --completion fish)\ncomplete -c %s -e\n", root, root, root)
	flag := func(cond string, f complFlag) {
		fmt.Fprintf(&b, "complete -c %s", root)
		if cond != "" {
			fmt.Fprintf(&b, " -n %s", fishQuote(cond))
		}
		fmt.Fprintf(&b, " -l %s", f.long)
		if f.short != 0 {
			fmt.Fprintf(&b, " -s %c", f.short)
		}
		if f.value {
			b.WriteString(" -r")
			if len(f.enum) > 0 {
				fmt.Fprintf(&b, " -f -a %s", fishQuote(strings.Join(f.enum, " ")))
			} else if f.file {
				b.WriteString(" -F")
			} else {
				b.WriteString(" -f")
			}
		}
		fmt.Fprintf(&b, " -d %s\n", fishQuote(f.help))
	}
	if len(c.subs) == 0 {
		for _, f := range c.flags {
			flag("", f)
		}
		return b.String()
	}
	for _, f := range c.flags {
		flag("__fish_use_subcommand", f)
	}
	for _, s := range c.subs {
		fmt.Fprintf(&b, "complete -c %s -n '__fish_use_subcommand' -f -a %s -d %s\n", root, s.name, fishQuote(s.help))
	}
	for _, s := range c.subs {
		for _, f := range s.flags {
			flag("__fish_seen_subcommand_from "+s.name, f)
		}
	}
	return b.String()
}
