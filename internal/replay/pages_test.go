package replay

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// TestImageOf: a page shows an image only when it is a png, jpeg, gif or
// webp of at most imageMax bytes whose base64 decodes strictly and whose
// bytes begin as its type's; every other is a note saying why.
func TestImageOf(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n" + strings.Repeat("p", 20)
	b64 := base64.StdEncoding.EncodeToString
	for _, tt := range []struct {
		name, media, data, url string
		shown                  bool
		note                   string
	}{
		{"png", "image/png", b64([]byte(png)), "", true, ""},
		{"the type in capitals", "IMAGE/PNG", b64([]byte(png)), "", true, ""},
		{"jpeg", "image/jpeg", b64([]byte("\xff\xd8\xff\xe0rest")), "", true, ""},
		{"gif", "image/gif", b64([]byte("GIF89a....")), "", true, ""},
		{"webp", "image/webp", b64([]byte("RIFF\x00\x00\x00\x00WEBPVP8 ")), "", true, ""},
		{"a RIFF not webp", "image/webp", b64([]byte("RIFF\x00\x00\x00\x00WAVEfmt ")), "", false, "its bytes are not a webp image"},
		{"svg", "image/svg+xml", b64([]byte(`<svg onload="alert(1)"/>`)), "", false, "a page shows png, jpeg, gif and webp only"},
		{"a png named a jpeg", "image/jpeg", b64([]byte(png)), "", false, "its bytes are not a jpeg image"},
		{"html named a png", "image/png", b64([]byte("<script>alert(1)</script>")), "", false, "its bytes are not a png image"},
		{"bad base64", "image/png", `AAAA" onerror="alert(1)`, "", false, "its data is not valid base64"},
		{"base64 with a newline", "image/png", b64([]byte(png))[:8] + "\n" + b64([]byte(png))[8:], "", false, "its data is not valid base64"},
		{"base64 of the URL alphabet", "image/png", base64.URLEncoding.EncodeToString([]byte(png + "\xff\xfe")), "", false, "its data is not valid base64"},
		{"a breakout in the type", `image/png;base64,AAAA" onerror="x`, b64([]byte(png)), "", false, "a page shows png"},
		{"too large", "image/png", b64([]byte(png + strings.Repeat("x", imageMax))), "", false, "larger than 1.0 MiB, not shown"},
		{"at a URL", "", "", "https://example.test/a.png", false, "an image at https://example.test/a.png: not fetched"},
		{"no data", "image/png", "", "", false, "its bytes are not a png image"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := `{"mimeType":` + strconv.Quote(tt.media) + `,"data":` + strconv.Quote(tt.data) + `}`
			if tt.url != "" {
				obj = `{"mimeType":"","url":` + strconv.Quote(tt.url) + `}`
			}
			v := imageOf(gjson.Parse(obj))
			if shown := v.Src != ""; shown != tt.shown {
				t.Fatalf("shown %v, want %v (%q)", shown, tt.shown, v.Note)
			}
			if tt.shown && string(v.Src) != "data:"+strings.ToLower(tt.media)+";base64,"+tt.data {
				t.Errorf("src %.60q", v.Src)
			}
			if !strings.Contains(v.Note, tt.note) {
				t.Errorf("note %q, want %q in it", v.Note, tt.note)
			}
		})
	}
}

// TestCut: a text longer than a page shows is cut at a character's
// start, never inside one, and says how much it left out.
func TestCut(t *testing.T) {
	s := &Session{maxText: 10}
	for _, tt := range []struct {
		in   string
		want string
		left int
	}{
		{"short", "short", 0},
		{"0123456789", "0123456789", 0},
		{"0123456789abc", "0123456789", 3},
		{"012345678é", "012345678", 2},                               // é is 2 bytes: 9 and 10
		{"01234567€x", "01234567", 4},                                // € is 3 bytes: 8 to 10
		{"0123456€€€", "0123456€", 6},                                // € ends at 10
		{strings.Repeat("\xff", 20), strings.Repeat("\xff", 10), 10}, // no character starts: cut at the limit
	} {
		got, left := s.cut(tt.in)
		if got != tt.want || left != tt.left {
			t.Errorf("cut(%q) = %q, %d; want %q, %d", tt.in, got, left, tt.want, tt.left)
		}
		if utf8.ValidString(tt.in) && !utf8.ValidString(got) {
			t.Errorf("cut(%q) = %q: not valid UTF-8", tt.in, got)
		}
	}
	if got, left := (&Session{}).cut(strings.Repeat("x", 1<<20)); len(got) != 1<<20 || left != 0 {
		t.Error("a session with no limit cut a text")
	}
}
