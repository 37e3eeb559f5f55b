package cli

import (
	"reflect"
	"strings"
	"unicode/utf8"
)

// Arguments are used as the bytes given (a path of a Latin-1 system), but
// kong writes U+FFFD for a byte that is not UTF-8. So such a byte goes
// through kong as a rune of the last private-use plane (U+10FF00 + the
// byte) and is given back in every string the grammar holds after.

const escBase = 0x10FF00

// escapeArgs returns args with every byte that is not UTF-8 escaped, and
// whether any was.
func escapeArgs(args []string) ([]string, bool) {
	out, any := args, false
	for i, a := range args {
		if utf8.ValidString(a) {
			continue
		}
		if !any {
			out, any = append([]string(nil), args...), true
		}
		var b strings.Builder
		for j := 0; j < len(a); {
			r, n := utf8.DecodeRuneInString(a[j:])
			if r == utf8.RuneError && n == 1 {
				b.WriteRune(escBase + rune(a[j]))
			} else {
				b.WriteString(a[j : j+n])
			}
			j += n
		}
		out[i] = b.String()
	}
	return out, any
}

// unescape gives back the bytes escapeArgs escaped in s.
func unescape(s string) string {
	if !hasEscape(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r >= escBase+0x80 && r <= escBase+0xff {
			b.WriteByte(byte(r - escBase))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hasEscape(s string) bool {
	for _, r := range s {
		if r >= escBase+0x80 && r <= escBase+0xff {
			return true
		}
	}
	return false
}

// unescapeAll gives back the escaped bytes in every string v holds: fields
// of structs (commands, flags, arguments), pointers, slices.
func unescapeAll(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			unescapeAll(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				unescapeAll(f)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			unescapeAll(v.Index(i))
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(unescape(v.String()))
		}
	}
}
