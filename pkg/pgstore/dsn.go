package pgstore

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/panto-dev/panto/pkg/store"
)

// This file is the one place that reads a connection string: which strings
// name a database (IsConnString), and what of one may be shown (Redact,
// Scrub). Every command and store.Open go through it.

func init() {
	store.RegisterForm("postgres", store.Form{Claims: IsKeyValue, Redact: Redact, Password: Password, Scrub: Scrub})
}

// dsnKey is the start of a libpq key=value connection string: a keyword,
// maybe spaces, "=".
var dsnKey = regexp.MustCompile(`^\s*[A-Za-z_][A-Za-z0-9_]*\s*=`)

// IsKeyValue reports whether s is a libpq connection string of the
// key=value form ("host=/run/pg dbname=panto password='se cr et'"), not a
// URL. A value may hold "://" (application_name=http://x, a password): as
// libpq and pgx, only a string starting with a postgres scheme is a URL.
func IsKeyValue(s string) bool { return urlScheme(s) == "" && dsnKey.MatchString(s) }

// IsConnString reports whether s names a PostgreSQL database in one of
// libpq's two forms: a URL (postgres:// or postgresql://, in any case) or
// key=value settings.
func IsConnString(s string) bool { return urlScheme(s) != "" || IsKeyValue(s) }

// urlScheme returns the scheme of a postgres URL, as written ("" for none).
func urlScheme(s string) string {
	scheme, _, ok := strings.Cut(s, "://")
	if ok && (strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql")) {
		return scheme
	}
	return ""
}

// normalize lowercases a URL's scheme, which pgx takes in lowercase only.
func normalize(s string) string {
	if scheme := urlScheme(s); scheme != "" {
		return strings.ToLower(scheme) + s[len(scheme):]
	}
	return s
}

// passwordParam is a password given as a parameter of a URL: its value
// runs to the next parameter (or a fragment), spaces and quotes included.
var passwordParam = regexp.MustCompile(`(?i)((?:^|[?&])password\s*=\s*)[^&#]*`)

// Redact returns a connection string fit to show: its password, in a
// URL's user part, as a URL parameter or as a key=value setting (quoted or
// not), replaced by "xxxxx" to the end of its value. A string of neither
// form shows nothing from "password" on.
func Redact(s string) string {
	if IsKeyValue(s) {
		return redactKeyValue(s)
	}
	if !strings.Contains(s, "://") {
		if i := strings.Index(strings.ToLower(s), "password"); i >= 0 {
			return s[:i] + "password=xxxxx…"
		}
		return s
	}
	if u, err := url.Parse(s); err == nil {
		if _, has := u.User.Password(); !has {
			return redactParams(s)
		}
	}
	j := strings.Index(s, "://") + 3
	// The user part ends at the last "@" before the path (a password may
	// hold "@", ":" or spaces); a URL without one has no user part.
	end := len(s)
	if k := strings.IndexAny(s[j:], "/?#"); k >= 0 {
		end = j + k
	}
	if at := strings.LastIndex(s[j:end], "@"); at >= 0 {
		if c := strings.Index(s[j:j+at], ":"); c >= 0 {
			s = s[:j+c+1] + "xxxxx" + s[j+at:]
		}
	} else if at := strings.LastIndex(s, "@"); at > j {
		// An "@" after a "/" or "?" of the password itself: the user
		// part is read to the last "@" of the string.
		if c := strings.Index(s[j:at], ":"); c >= 0 {
			s = s[:j+c+1] + "xxxxx" + s[at:]
		}
	}
	return redactParams(s)
}

// urlParam is a parameter of a URL's query: its key, "=", and its value to
// the next parameter or a fragment.
var urlParam = regexp.MustCompile(`([?&])([^&#=]*)(=\s*)[^&#]*`)

// redactParams redacts every password parameter of a URL's query, its key
// read as pgx and libpq read it (percent-decoded: %70assword is password).
func redactParams(s string) string {
	q := strings.Index(s, "?")
	if q < 0 {
		return s
	}
	return s[:q] + urlParam.ReplaceAllStringFunc(s[q:], func(m string) string {
		g := urlParam.FindStringSubmatch(m)
		key := strings.TrimSpace(g[2])
		if k, err := url.QueryUnescape(key); err == nil {
			key = strings.TrimSpace(k)
		}
		if !strings.EqualFold(key, "password") {
			return m
		}
		return g[1] + g[2] + g[3] + "xxxxx"
	})
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
		if pw := u.Query().Get("password"); pw != "" {
			return pw
		}
		if q := strings.Index(s, "?"); q < 0 || !passwordParam.MatchString(s[q:]) {
			return ""
		}
	}
	if i, j := strings.Index(s, "://"), strings.LastIndex(s, "@"); i >= 0 && j > i {
		if _, pw, ok := strings.Cut(s[i+3:j], ":"); ok {
			return pw
		}
	}
	if q := strings.Index(s, "?"); q >= 0 {
		if m := passwordParam.FindString(s[q:]); m != "" {
			_, pw, _ := strings.Cut(m, "=")
			return strings.TrimSpace(pw)
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
func Scrub(msg, s string) string { return scrub(msg, Password(s)) }

// scrub removes a password, its pieces and every quoted piece of it from
// msg.
func scrub(msg, pw string) string {
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
