package logcmd

import (
	"bufio"
	"io"
	"strings"
	"unicode/utf8"
)

// writeColumns writes rows as aligned columns, two spaces apart; the last
// cell of a row is not padded (as text/tabwriter does, without its cost
// on ten thousand rows).
// writeColumns writes rows in aligned columns; the last cell of a row is
// not padded.
func writeColumns(w io.Writer, rows [][]string) error { return writeColumnsFit(w, rows, 0) }

// writeColumnsFit is writeColumns with the last cell of a row cut (with
// "…") so that the line fits columns, when that is not 0, leaving it at
// least 16 characters.
func writeColumnsFit(w io.Writer, rows [][]string, columns int) error {
	var width []int
	for _, r := range rows {
		for i, c := range r[:len(r)-1] {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	pad := strings.Repeat(" ", 256)
	for _, r := range rows {
		at := 0
		for i, c := range r {
			if i == len(r)-1 && columns > 0 {
				if n := utf8.RuneCountInString(c); at+n > columns {
					c = string([]rune(c)[:max(15, columns-at-1)]) + "…"
				}
			}
			bw.WriteString(c)
			if i < len(r)-1 {
				at += width[i] + 2
				for k := width[i] - utf8.RuneCountInString(c) + 2; k > 0; k -= len(pad) {
					bw.WriteString(pad[:min(k, len(pad))])
				}
			}
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
