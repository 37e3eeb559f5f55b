package session

import "github.com/panto-dev/panto/internal/rawjson"

// MessageOf returns the raw "message" value of a valid entry line (the
// first, if the key repeats), byte for byte; nil when there is none.
func MessageOf(line []byte) []byte {
	var msg []byte
	rawjson.Members(line, func(k, v []byte) bool {
		if rawjson.KeyIs(k, "message") {
			msg = v
			return false
		}
		return true
	})
	return msg
}

// Field returns the raw value of key in the valid JSON object obj (the
// first, if the key repeats); nil when there is none.
func Field(obj []byte, key string) []byte {
	var val []byte
	rawjson.Members(obj, func(k, v []byte) bool {
		if rawjson.KeyIs(k, key) {
			val = v
			return false
		}
		return true
	})
	return val
}
