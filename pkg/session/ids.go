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
// compact form id sets keep.
func HexID(id string) (uint32, bool) {
	if len(id) != 8 {
		return 0, false
	}
	var v uint32
	for i := range 8 {
		switch c := id[i]; {
		case c >= '0' && c <= '9':
			v = v<<4 | uint32(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint32(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
