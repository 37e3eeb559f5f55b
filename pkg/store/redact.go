package store

import (
	"net/url"
	"regexp"
	"strings"
)

// passwordParam is a password given as a parameter of a URL (or written
// anywhere in a string that is neither a URL nor key=value), quoted or not.
var passwordParam = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'?|[^&\s]*)`)

// dsnKey is the start of a libpq key=value connection string: a keyword,
// maybe spaces, "=".
var dsnKey = regexp.MustCompile(`^\s*[A-Za-z_][A-Za-z0-9_]*\s*=`)

// IsKeyValue reports whether s is a libpq connection string of the
// key=value form ("host=/run/pg dbname=panto password='se cr et'"), not a
// URL.
func IsKeyValue(s string) bool { return !strings.Contains(s, "://") && dsnKey.MatchString(s) }

// Redact returns a store URL or a libpq key=value connection string fit to
// show: its password, in the user part, as a parameter or as a key
// (quoted or not), replaced by "xxxxx".
func Redact(s string) string {
	if IsKeyValue(s) {
		return redactKeyValue(s)
	}
	if !strings.Contains(s, "://") {
		// Neither form: where a password begins, nothing more is shown.
		if i := strings.Index(strings.ToLower(s), "password"); i >= 0 {
			return s[:i] + "password=xxxxx…"
		}
		return s
	}
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			s = u.String()
		}
	} else if i := strings.LastIndex(s, "@"); i > 0 {
		if j := strings.Index(s, "://"); j >= 0 && j < i {
			if k := strings.Index(s[j+3:i], ":"); k >= 0 {
				s = s[:j+3+k+1] + "xxxxx" + s[i:]
			}
		}
	}
	return passwordParam.ReplaceAllString(s, "${1}xxxxx")
}

// Password returns the password s gives (a URL's user part or parameter,
// or a key=value string's password), "" for none.
func Password(s string) string {
	if IsKeyValue(s) {
		pw := ""
		eachKeyValue(s, func(key string, _, _ int, value string) {
			if key == "password" {
				pw = value
			}
		})
		return pw
	}
	if u, err := url.Parse(s); err == nil {
		if pw, ok := u.User.Password(); ok {
			return pw
		}
		return u.Query().Get("password")
	}
	if i, j := strings.Index(s, "://"), strings.LastIndex(s, "@"); i >= 0 && j > i {
		if _, pw, ok := strings.Cut(s[i+3:j], ":"); ok {
			return pw
		}
	}
	return ""
}

// redactKeyValue replaces the value of every password key.
func redactKeyValue(s string) string {
	var b strings.Builder
	last := 0
	eachKeyValue(s, func(key string, start, end int, _ string) {
		if key == "password" {
			b.WriteString(s[last:start])
			b.WriteString("xxxxx")
			last = end
		}
	})
	b.WriteString(s[last:])
	return b.String()
}

// eachKeyValue calls fn with each key of a key=value string, where its
// value starts and ends in s (quotes included), and the value as libpq
// reads it (quotes and backslash escapes undone). What cannot be read
// further (an unterminated quote) is taken as the value to the end.
func eachKeyValue(s string, fn func(key string, start, end int, value string)) {
	i := 0
	for i < len(s) {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		k := i
		for i < len(s) && s[i] != '=' && !isSpace(s[i]) {
			i++
		}
		key := s[k:i]
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) || s[i] != '=' {
			if key == "" {
				return
			}
			continue // not key=value: skip the word
		}
		i++
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		start := i
		var v strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			for i < len(s) && s[i] != '\'' {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				v.WriteByte(s[i])
				i++
			}
			if i < len(s) {
				i++ // the closing quote
			}
		} else {
			for i < len(s) && !isSpace(s[i]) {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				v.WriteByte(s[i])
				i++
			}
		}
		fn(strings.ToLower(key), start, i, v.String())
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// Scrub removes from msg (an error of a library that read the connection
// string s) the password s gives and every quoted part of msg that is a
// piece of it: no part of a password is ever shown.
func Scrub(msg, s string) string {
	pw := Password(s)
	if pw == "" {
		return msg
	}
	msg = strings.ReplaceAll(msg, pw, "xxxxx")
	for _, piece := range strings.FieldsFunc(pw, func(r rune) bool { return r == ' ' || r == ':' || r == '\'' || r == '"' || r == '@' }) {
		if len(piece) >= 4 {
			msg = strings.ReplaceAll(msg, piece, "xxxxx")
		}
	}
	for _, q := range []string{`"`, "`", `'`} {
		parts := strings.Split(msg, q)
		for i := 1; i < len(parts); i += 2 {
			if p := parts[i]; p != "" && (strings.Contains(pw, p) || strings.Contains(p, pw)) {
				parts[i] = "xxxxx"
			}
		}
		msg = strings.Join(parts, q)
	}
	return msg
}
