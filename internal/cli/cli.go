// Package cli is what the five commands share at the process boundary:
// parsing flags with kong, SPEC §7's one-line errors, and stdout handling.
package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/alecthomas/kong"
	"github.com/panto-dev/panto/internal/agents"
	"github.com/panto-dev/panto/internal/exitcode"
	"github.com/panto-dev/panto/internal/tty"
)

// Version is printed by --version.
const Version = "0.1.0"

// IO is everything a command may touch of its process. Functions take it
// as proc (proc.Stdout, proc.Getenv), leaving io to the standard package.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Cwd    string
}

// OS returns the IO of this process.
func OS() IO {
	cwd, err := os.Getwd()
	if err != nil {
		cwd = os.Getenv("PWD")
	}
	return IO{os.Stdin, os.Stdout, os.Stderr, os.Getenv, cwd}
}

type exited struct{ code int }

// Parse parses args into grammar. It returns done when the command must end
// now with code: after --help or --version (0), or on a usage error (2,
// never kong's 80), which it reports on stderr.
func Parse(name, help string, grammar any, args []string, proc IO, vars kong.Vars) (ctx *kong.Context, code int, done bool) {
	if vars == nil {
		vars = kong.Vars{}
	}
	vars["agents"] = strings.Join(agents.Names(), ",") // the registry's: --from's values
	p, err := kong.New(grammar,
		kong.Name(name), kong.Description(help),
		kong.Writers(proc.Stdout, proc.Stderr),
		kong.Exit(func(c int) { panic(exited{c}) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Embed(&completion{}),
		vars)
	if err != nil {
		Errorf(proc.Stderr, name, "%v", err)
		return nil, exitcode.Failure, true
	}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(exited)
			if !ok {
				panic(r)
			}
			ctx, code, done = nil, e.code, true
		}
	}()
	args = completionWord(p, args, proc.Cwd)
	args, escaped := escapeArgs(args)
	ctx, err = p.Parse(args)
	if escaped {
		unescapeAll(reflect.ValueOf(grammar))
	}
	if err == nil {
		err = repeated(ctx)
	}
	if err != nil {
		// --help or --version whose output could not be written: an
		// operational failure (3), or, for a reader that left, none.
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Op == "write" {
			if IsBrokenPipe(err) {
				return nil, exitcode.OK, true
			}
			Errorf(proc.Stderr, name, "%v", err)
			return nil, exitcode.Failure, true
		}
		help := name
		if ctx != nil && ctx.Selected() != nil {
			help += " " + ctx.Selected().Path()
		} else if pe, ok := err.(*kong.ParseError); ok && pe.Context != nil && pe.Context.Selected() != nil {
			help += " " + pe.Context.Selected().Path()
		}
		Errorf(proc.Stderr, name, "%s: see %s --help", err, help)
		return nil, exitcode.Usage, true
	}
	return ctx, 0, false
}

// completionWord reads `X completion SHELL`, panto-log's subcommand, as
// --completion SHELL on a command that has no such subcommand, unless a
// file is named completion (then the argument is that file).
func completionWord(p *kong.Kong, args []string, cwd string) []string {
	if len(args) == 0 || args[0] != "completion" {
		return args
	}
	for _, c := range p.Model.Node.Children {
		if c.Name == "completion" {
			return args
		}
	}
	if _, err := os.Lstat(filepath.Join(cwd, "completion")); !errors.Is(err, fs.ErrNotExist) {
		return args
	}
	return append([]string{"--completion"}, args[1:]...)
}

// repeated refuses a flag given twice that holds one value: kong would keep
// the last silently (--by day --by model), and the first was meant too.
func repeated(ctx *kong.Context) error {
	seen := map[*kong.Flag]bool{}
	for _, p := range ctx.Path {
		f := p.Flag
		if f == nil || p.Resolved || f.IsSlice() || f.IsMap() || f.IsCounter() {
			continue
		}
		if seen[f] {
			return fmt.Errorf("--%s is given more than once: give it once", f.Name)
		}
		seen[f] = true
	}
	return nil
}

// Errorf prints "name: error: msg" as one line, control characters
// escaped (a message may quote a log, a row or a file name).
func Errorf(w io.Writer, name, format string, args ...any) {
	fmt.Fprintf(w, "%s: error: %s\n", name, tty.Line(fmt.Sprintf(format, args...)))
}

// Warnf prints "name: warning: msg" as one line, control characters
// escaped.
func Warnf(w io.Writer, name, format string, args ...any) {
	fmt.Fprintf(w, "%s: warning: %s\n", name, tty.Line(fmt.Sprintf(format, args...)))
}

// Notef prints "name: msg" as one line, control characters escaped: what
// a command says it did, on stderr.
func Notef(w io.Writer, name, format string, args ...any) {
	fmt.Fprintf(w, "%s: %s\n", name, tty.Line(fmt.Sprintf(format, args...)))
}

// Fail reports err and returns its exit code. A broken pipe on stdout is no
// failure: the reader left, and every file change was already durable.
func Fail(w io.Writer, name string, err error) int {
	if err == nil {
		return exitcode.OK
	}
	if IsBrokenPipe(err) {
		return exitcode.OK
	}
	Errorf(w, name, "%v", err)
	return exitcode.Of(err)
}

// QuietPipe makes a closed stdout an error that a write returns (EPIPE)
// rather than a SIGPIPE that kills the process (exit 141): each command's
// Main calls it first, so that a reader who leaves (| head) ends the
// command where it stands, between two writes, and Fail reports it as the
// quiet exit 0 of SPEC §7, the same for every command.
func QuietPipe() { signal.Ignore(syscall.SIGPIPE) }

// IsBrokenPipe reports whether err is a write to a closed pipe.
func IsBrokenPipe(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe)
}

// Buffered runs a command body with a buffered stdout (flushed, and its
// error checked, at the end) and turns its error into the one-line report
// and exit code of SPEC §7; otherwise it returns the body's code.
func Buffered(name string, proc IO, body func(out *bufio.Writer) (int, error)) int {
	out := bufio.NewWriterSize(proc.Stdout, 64<<10)
	code, err := body(out)
	// What could not be written is said even when the body had an error
	// of its own (push --status's "do not agree", exit 1, hid that its
	// table never reached a full disk): both, the write's exit 3 last. A
	// reader that left is said by neither.
	if ferr := out.Flush(); ferr != nil && (err == nil || !IsBrokenPipe(ferr)) {
		if err != nil {
			Fail(proc.Stderr, name, err)
		}
		err = exitcode.New(exitcode.Failure, ferr)
	}
	if err != nil {
		return Fail(proc.Stderr, name, err)
	}
	return code
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w any) bool {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	var t syscall.Termios
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), getTermios, uintptr(unsafe.Pointer(&t)))
	return e == 0
}

// Columns is the width output must fit: $COLUMNS when it is a number,
// else the terminal's when stdout is one, else 0 (no limit: a pipe).
func Columns(proc IO) int {
	if n, err := strconv.Atoi(proc.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	f, ok := proc.Stdout.(interface{ Fd() uintptr })
	if !ok {
		return 0
	}
	var ws struct{ row, col, x, y uint16 }
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws))); e != 0 {
		return 0
	}
	return int(ws.col)
}

// StdinHint says on stderr, at once, that the command is about to read
// what from a terminal, so that a user who typed the command alone does not
// wait on a silent prompt. It says nothing when stdin is a pipe or a file.
func StdinHint(proc IO, name, what string) {
	if IsTerminal(proc.Stdin) {
		fmt.Fprintf(proc.Stderr, "%s: reading %s from the terminal: end with Ctrl-D, cancel with Ctrl-C (or give a file; see %s --help)\n", name, what, name)
	}
}

// StoreFlag is every command's --store flag, embedded in its grammar
// (`embed:""`). Its help is written here, not given to kong as a variable:
// kong interpolates every variable again for each flag of a grammar, and
// with the version line and this help that was a fifth of a command's
// start (see VersionFlag).
type StoreFlag struct {
	Store string `help:"Where sessions are: postgres://… (a PostgreSQL database), null: (keeps nothing), or nothing for files (default: $PANTO_STORE)." placeholder:"URL"`
}

// VersionFlag is every command's --version: it prints VersionLine of the
// command's name and exits 0, as kong.VersionFlag prints a "version"
// variable, which kong would interpolate again for each flag of the
// grammar at every start (with the --store help, 5 of the 24 ms of CPU of
// panto-log --version in a race build).
type VersionFlag bool

// BeforeReset prints the version line and ends the command.
func (VersionFlag) BeforeReset(app *kong.Kong) error {
	if _, err := fmt.Fprintln(app.Stdout, VersionLine(app.Model.Name)); err != nil {
		return err // said by Parse (exit 3), unless its reader left
	}
	app.Exit(0)
	return nil
}
