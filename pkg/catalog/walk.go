package catalog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// IsSessionName reports whether a file name is a session file's: *.jsonl,
// not hidden (a writer's temporary files start with a dot).
func IsSessionName(name string) bool {
	return strings.HasSuffix(name, ".jsonl") && !strings.HasPrefix(name, ".")
}

// Walk calls fn with every session file below root, in lexical order,
// root itself when it is not a directory. It follows symbolic links, to
// directories too, and enters each directory once: a link back up the
// tree is not a loop. What is named like a session file is given to fn
// whatever it is (a FIFO, say): opening it is fn's to refuse. An entry that
// cannot be read is given with its error, and the walk goes on; fn's error
// stops it.
func Walk(root string, fn func(path string, err error) error) error {
	return WalkWith(root, nil, fn)
}

// WalkWith is Walk taking the files take says are logs (by path: other
// agents' logs are not all *.jsonl), IsSessionName's when take is nil.
func WalkWith(root string, take func(path string) bool, fn func(path string, err error) error) error {
	fi, err := os.Stat(root)
	if err != nil {
		return fn(root, err)
	}
	if !fi.IsDir() {
		return fn(root, nil)
	}
	w := walker{seen: map[dirID]bool{}, fn: fn, take: take}
	return w.dir(root, fi, -1)
}

// dirID tells directories apart however they are reached.
type dirID struct{ dev, ino uint64 }

func idOf(fi fs.FileInfo) (dirID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return dirID{}, false
	}
	return dirID{uint64(st.Dev), uint64(st.Ino)}, true
}

type walker struct {
	seen map[dirID]bool
	fn   func(string, error) error
	take func(string) bool // nil: IsSessionName
}

// takes reports whether the file at p is one the walk gives.
func (w *walker) takes(p string) bool {
	if w.take != nil {
		return w.take(p)
	}
	return IsSessionName(filepath.Base(p))
}

// dir walks the directory path; depth > 0 limits how deep (-1: no limit).
func (w *walker) dir(path string, fi fs.FileInfo, depth int) error {
	if id, ok := idOf(fi); ok {
		if w.seen[id] {
			return nil
		}
		w.seen[id] = true
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return w.fn(path, err)
	}
	for _, e := range ents {
		p := filepath.Join(path, e.Name())
		typ := e.Type()
		if typ&fs.ModeSymlink != 0 {
			fi, err := os.Stat(p)
			if err != nil {
				if w.takes(p) {
					if err := w.fn(p, err); err != nil {
						return err
					}
				}
				continue // a dangling link that names no session
			}
			if fi.IsDir() {
				if depth != 0 {
					if err := w.dir(p, fi, depth-1); err != nil {
						return err
					}
				}
				continue
			}
			typ = fi.Mode().Type()
		}
		switch {
		case typ.IsDir():
			if depth == 0 {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				if err := w.fn(p, err); err != nil {
					return err
				}
				continue
			}
			if err := w.dir(p, fi, depth-1); err != nil {
				return err
			}
		case w.takes(p):
			if err := w.fn(p, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkFiles returns the session files below dir, no deeper than depth
// directories (0: only dir's own files). A missing dir has none.
func walkFiles(dir string, depth int) ([]string, error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	w := walker{seen: map[dirID]bool{}, fn: func(p string, err error) error {
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	}}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: dir, Err: syscall.ENOTDIR}
	}
	return out, w.dir(dir, fi, depth)
}

// ErrLeftover is a temporary file a writer killed midway left among the
// sessions: said by list, reported and removed by panto-fsck.
var ErrLeftover = errors.New("a temporary file a writer killed midway left")

// IsLeftover reports whether a file name is a writer's temporary file
// (".NAME.jsonl.tmp-N", made beside a session as it is created or
// rewritten): one a writer killed midway leaves behind.
func IsLeftover(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".jsonl.tmp-")
}

// LeftoverSession returns the session file a leftover temporary file was
// to become ("" for none): a session's creation writes its header and first
// entries to ".NAME.jsonl.tmp-N", fsyncs it and links it to NAME.jsonl, so
// a writer killed between the two leaves a whole session in it, acknowledged
// to no one yet but complete. It is one when its first line is a complete
// session header and NAME.jsonl does not exist (a rewrite's temporary file
// stands beside the session it was to replace, which is whole).
func LeftoverSession(path string) string {
	name := filepath.Base(path)
	i := strings.Index(name, ".jsonl.tmp-")
	if !IsLeftover(name) || i < 1 {
		return ""
	}
	target := filepath.Join(filepath.Dir(path), name[1:i]+".jsonl")
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return "" // a FIFO is never opened
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	first, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	if err != nil || !bytes.HasPrefix(first, []byte(`{"type":"session"`)) || !json.Valid(first) {
		return ""
	}
	return target
}

// WalkLeftovers calls fn with every leftover temporary file (IsLeftover)
// below root, as Walk walks (links followed, each directory once), no
// deeper than depth directories (-1: no limit).
func WalkLeftovers(root string, depth int, fn func(path string) error) error {
	fi, err := os.Stat(root)
	if err != nil || !fi.IsDir() {
		return nil
	}
	w := walker{seen: map[dirID]bool{}, take: func(p string) bool { return IsLeftover(filepath.Base(p)) }, fn: func(p string, err error) error {
		if err != nil {
			return nil // what cannot be read is the session walk's to say
		}
		return fn(p)
	}}
	return w.dir(root, fi, depth)
}
