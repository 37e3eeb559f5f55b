package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/panto-dev/panto/pkg/session"
)

// Env is the part of the environment that locates sessions.
type Env struct {
	SessionDir string // PANTO_SESSION_DIR
	DataHome   string // XDG_DATA_HOME
	Home       string // HOME
}

// EnvFrom reads Env with getenv (os.Getenv in commands).
func EnvFrom(getenv func(string) string) Env {
	return Env{getenv("PANTO_SESSION_DIR"), getenv("XDG_DATA_HOME"), getenv("HOME")}
}

// BaseDir is where sessions live (SPEC §4).
func (e Env) BaseDir() (string, error) {
	switch {
	case e.SessionDir != "":
		return e.SessionDir, nil
	case e.DataHome != "":
		return filepath.Join(e.DataHome, "panto", "sessions"), nil
	case e.Home != "":
		return filepath.Join(e.Home, ".local", "share", "panto", "sessions"), nil
	}
	return "", fmt.Errorf("%w: set PANTO_SESSION_DIR, XDG_DATA_HOME or HOME", ErrNoSessionDir)
}

// ProjectDir is the directory of the sessions of cwd.
func (e Env) ProjectDir(cwd string) (string, error) {
	base, err := e.BaseDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, EncodeCwd(cwd)), nil
}

// EncodeCwd turns a working directory into a directory name: leading
// slashes stripped, "/", "\" and ":" turned into "-", wrapped in "--". A
// NUL byte, which no directory's name may hold, is turned into "-" too: a
// session whose cwd holds one (crafted, or from another store) has a
// directory, and its header keeps the cwd exactly.
func EncodeCwd(cwd string) string {
	s := strings.TrimLeft(cwd, "/")
	s = strings.NewReplacer("/", "-", `\`, "-", ":", "-", "\x00", "-").Replace(s)
	return "--" + s + "--"
}

// FileName is the file name of session id.
func FileName(id string) string { return id + ".jsonl" }

// IDFromPath returns the session id a file name carries, or "" when the name
// is not <uuid>.jsonl.
func IDFromPath(path string) string {
	name := filepath.Base(path)
	id, ok := strings.CutSuffix(name, ".jsonl")
	if ok && session.IsUUID(id) {
		return id
	}
	return ""
}

// SplitSession splits FILE#SESSION, one session of a log that holds
// several (an OpenCode database), into the file and the session's id: ok
// when path names no file, FILE is a regular file and SESSION is not
// empty. A file whose name holds a '#' is itself.
func SplitSession(path string) (file, id string, ok bool) {
	i := strings.LastIndexByte(path, '#')
	if i <= 0 || i == len(path)-1 || strings.ContainsRune(path[i+1:], filepath.Separator) {
		return path, "", false
	}
	if _, err := os.Lstat(path); err == nil {
		return path, "", false
	}
	if fi, err := os.Stat(path[:i]); err != nil || !fi.Mode().IsRegular() {
		return path, "", false
	}
	return path[:i], path[i+1:], true
}
