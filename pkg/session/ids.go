package session

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/google/uuid"
)

// NewSessionID returns a new UUIDv7 string.
func NewSessionID() (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// maxDraws is how many random 8-hex ids are tried before falling back to a
// UUIDv7 string.
const maxDraws = 100

// NewEntryID returns an id that taken does not report as in use: 8 lowercase
// hex characters from crypto/rand, or a UUIDv7 string after maxDraws
// collisions.
func NewEntryID(taken func(string) bool) (string, error) {
	var b [4]byte
	for range maxDraws {
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		if id := hex.EncodeToString(b[:]); !taken(id) {
			return id, nil
		}
	}
	return NewSessionID()
}

// IsUUID reports whether s is a canonical lowercase UUID string.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range 36 {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// HexID reads an entry id of 8 lowercase hex characters as a number, the
// compact form id sets keep. It looks each character up in a table: ids
// are random, so a branch between digits and letters would be mispredicted
// on every other line.
func HexID(id string) (uint32, bool) {
	if len(id) != 8 {
		return 0, false
	}
	var v uint32
	var all byte // the values or'ed: more than 15 when a character is not hex
	for i := range 8 {
		d := hexValues[id[i]]
		all |= d
		v = v<<4 | uint32(d)
	}
	if all > 15 {
		return 0, false
	}
	return v, true
}

// hexValues maps '0'-'9' and 'a'-'f' to their values, every other byte
// to 0xff.
var hexValues = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "0123456789abcdef" {
		t[c] = byte(i)
	}
	return t
}()
