package store

import (
	"net/url"
	"strings"
	"sync"
)

// A Form is how a backend's locations are written, so that Open sends a
// location to its backend and a message shows it without its secrets. The
// backend owns its syntax (pkg/pgstore: libpq's URL and key=value forms).
type Form struct {
	Claims   func(s string) bool        // s is this backend's though it has no scheme (libpq's key=value)
	Redact   func(s string) string      // s fit to show
	Password func(s string) string      // the password s gives, "" for none
	Scrub    func(msg, s string) string // msg without any piece of s's password
}

var forms sync.Map // scheme → Form

// RegisterForm makes a backend's location syntax known by its scheme.
func RegisterForm(scheme string, f Form) { forms.Store(scheme, f) }

// claimant returns the scheme of the backend that claims s though it has
// no scheme of its own (libpq's key=value), "" for none.
func claimant(s string) string {
	scheme := ""
	forms.Range(func(k, v any) bool {
		if f := v.(Form); f.Claims != nil && f.Claims(s) {
			scheme = k.(string)
			return false
		}
		return true
	})
	return scheme
}

// formOf returns the form of the backend s names, if one is registered.
func formOf(s string) (Form, bool) {
	scheme := claimant(s)
	if scheme == "" {
		var has bool
		if scheme, _, has = strings.Cut(s, ":"); !has {
			return Form{}, false
		}
		if scheme = strings.ToLower(scheme); scheme == "postgresql" {
			scheme = "postgres"
		}
	}
	v, has := forms.Load(scheme)
	if !has {
		return Form{}, false
	}
	return v.(Form), true
}

// IsKeyValue reports whether a registered backend claims s though it has
// no scheme (libpq's key=value settings: "host=/run/pg dbname=panto").
func IsKeyValue(s string) bool { return claimant(s) != "" }

// Redact returns a store location fit to show, as its backend redacts it
// (pkg/pgstore for a database). A location no backend knows shows its
// URL with its password replaced by xxxxx and no query (which may hold
// one), one that does not parse as its scheme only, or, without a scheme,
// nothing from "password" on.
func Redact(s string) string {
	if f, ok := formOf(s); ok && f.Redact != nil {
		return f.Redact(s)
	}
	if i := strings.Index(s, "://"); i >= 0 {
		u, err := url.Parse(s)
		if err != nil || u.Opaque != "" {
			return s[:i] + "://…"
		}
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		u.RawQuery, u.Fragment = "", ""
		return u.String()
	}
	if i := strings.Index(strings.ToLower(s), "password"); i >= 0 {
		return s[:i] + "password=xxxxx…"
	}
	return s
}

// Password returns the password a location gives, as its backend reads
// it ("" for none, or for a location no backend knows).
func Password(s string) string {
	if f, ok := formOf(s); ok && f.Password != nil {
		return f.Password(s)
	}
	return ""
}

// Scrub removes from msg every piece of the password the location s
// gives, as its backend knows it.
func Scrub(msg, s string) string {
	if f, ok := formOf(s); ok && f.Scrub != nil {
		return f.Scrub(msg, s)
	}
	return msg
}
