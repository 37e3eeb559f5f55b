package store

import (
	"net/url"
	"regexp"
	"strings"
)

// passwordParam is a password given as a parameter of a URL or a libpq
// connection string.
var passwordParam = regexp.MustCompile(`(?i)(password=)[^&\s]*`)

// Redact returns a store URL fit to show: its password, in the user part
// or as a parameter, replaced by "xxxxx".
func Redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			s = u.String()
		}
	} else if i := strings.Index(s, "@"); i > 0 {
		if j := strings.Index(s, "://"); j >= 0 && j < i {
			if k := strings.Index(s[j+3:i], ":"); k >= 0 {
				s = s[:j+3+k+1] + "xxxxx" + s[i:]
			}
		}
	}
	return passwordParam.ReplaceAllString(s, "${1}xxxxx")
}
