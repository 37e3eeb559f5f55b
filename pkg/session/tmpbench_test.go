package session

import (
	"bytes"
	"os"
	"testing"
	"unicode/utf8"
)

func loadLines(b *testing.B) [][]byte {
	data, err := os.ReadFile("/tmp/b1g.jsonl")
	if err != nil {
		b.Skip()
	}
	data = data[:200<<20]
	var ls [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		ls = append(ls, data[:i])
		data = data[i+1:]
	}
	return ls
}

func BenchmarkV(b *testing.B) {
	ls := loadLines(b)
	n := 0
	for _, l := range ls {
		n += len(l)
	}
	b.Run("json", func(b *testing.B) {
		b.SetBytes(int64(n))
		for b.Loop() {
			for _, l := range ls {
				ValidJSON(l)
			}
		}
	})
	b.Run("jsonutf8", func(b *testing.B) {
		b.SetBytes(int64(n))
		for b.Loop() {
			for _, l := range ls {
				ValidJSONUTF8(l)
			}
		}
	})
	b.Run("utf8", func(b *testing.B) {
		b.SetBytes(int64(n))
		for b.Loop() {
			for _, l := range ls {
				utf8.Valid(l)
			}
		}
	})
	b.Run("classify", func(b *testing.B) {
		b.SetBytes(int64(n))
		for b.Loop() {
			for _, l := range ls {
				classifyLine(l, false, false)
			}
		}
	})
	b.Run("classifyfsck", func(b *testing.B) {
		b.SetBytes(int64(n))
		for b.Loop() {
			for _, l := range ls {
				classifyLine(l, true, true)
			}
		}
	})
}
