package session

// Lint is a set of rules of SPEC §2 that a line breaks while it stays
// readable: replay follows such an entry, fsck reports it.
type Lint uint8

// The rules of Lint.
const (
	LintEntryID   Lint = 1 << iota // an entry id is neither 8 lowercase hex characters nor a UUID string
	LintTimestamp                  // a timestamp is not UTC ISO 8601 with milliseconds and "Z"
	LintHeaderID                   // the header's id is not a UUIDv7
)

// Problems names the rules of l, for reports.
func (l Lint) Problems() []string {
	var out []string
	for _, r := range []struct {
		bit  Lint
		what string
	}{
		{LintEntryID, "entry id is not 8 lowercase hex characters (or a UUID string)"},
		{LintTimestamp, "timestamp is not UTC ISO 8601 with milliseconds and Z (2026-04-25T14:00:01.000Z)"},
		{LintHeaderID, "session id is not a lowercase UUIDv7"},
	} {
		if l&r.bit != 0 {
			out = append(out, r.what)
		}
	}
	return out
}

func lintHeader(id, ts string) Lint {
	var l Lint
	if !isUUIDv7(id) {
		l |= LintHeaderID
	}
	if !IsTimestamp(ts) {
		l |= LintTimestamp
	}
	return l
}

// lintEntry checks an entry's id and, when it has one, its timestamp.
func lintEntry(id, ts string, hasTime bool) Lint {
	var l Lint
	if _, ok := HexID(id); !ok && !IsUUID(id) {
		l |= LintEntryID
	}
	if hasTime && !IsTimestamp(ts) {
		l |= LintTimestamp
	}
	return l
}

func isUUIDv7(s string) bool {
	return IsUUID(s) && s[14] == '7' && (s[19] == '8' || s[19] == '9' || s[19] == 'a' || s[19] == 'b')
}

// IsTimestamp reports whether s is a timestamp as SPEC §2 writes them:
// 2026-04-25T14:00:01.000Z, each field in its range.
func IsTimestamp(s string) bool {
	const layout = "dddd-dd-ddTdd:dd:dd.dddZ"
	if len(s) != len(layout) {
		return false
	}
	for i := range len(layout) {
		if c := s[i]; layout[i] == 'd' && (c < '0' || c > '9') || layout[i] != 'd' && c != layout[i] {
			return false
		}
	}
	two := func(i int) int { return int(s[i]-'0')*10 + int(s[i+1]-'0') }
	mo, d := two(5), two(8)
	return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && two(11) <= 23 && two(14) <= 59 && two(17) <= 60
}
