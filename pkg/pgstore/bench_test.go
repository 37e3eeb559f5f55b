package pgstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// medianMicros is the median of durations, in µs.
func medianMicros(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2]) / 1e3
}

// quantileMicros is the q-quantile of durations (sorted), in µs.
func quantileMicros(d []time.Duration, q float64) float64 {
	slices.Sort(d)
	return float64(d[min(len(d)-1, int(q*float64(len(d))))]) / 1e3
}

// prose is n bytes of words drawn from 2,000 made-up ones (seeded by
// seed): text with as many different trigrams as an agent's reply has.
func prose(seed, n int) string {
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	words := make([]string, 2000)
	w := rand.New(rand.NewPCG(7, 7))
	for i := range words {
		b := make([]byte, 3+w.IntN(8))
		for j := range b {
			b[j] = 'a' + byte(w.IntN(26))
		}
		words[i] = string(b)
	}
	var s strings.Builder
	for s.Len() < n {
		s.WriteString(words[r.IntN(len(words))])
		s.WriteByte(' ')
	}
	return s.String()
}

// BenchmarkAppend: one append of a batch (one prompt; a prompt and a
// reply of 2 KB) to a session in the database, a transaction each, as
// panto-log append does it (after connecting). The text of each batch
// differs, as a session's does. The tail (p99, max) is the writer that
// fills the trigram index's pending list (GIN fastupdate, 4 MB by
// default) and merges it into the index; /noindex is the same with the
// index dropped, for the difference.
func BenchmarkAppend(b *testing.B) {
	for _, batch := range []struct {
		name string
		msgs func(i int) []store.Msg
	}{
		{"prompt", func(i int) []store.Msg {
			return []store.Msg{{Raw: session.TextMessage("user", fmt.Sprintf("a prompt of a few words, number %d", i)), Role: "user"}}
		}},
		{"pair", func(i int) []store.Msg { return pair(fmt.Sprintf("bench %d: %s", i, prose(i, 2048))) }},
	} {
		for _, index := range []bool{true, false} {
			name := batch.name
			if !index {
				name += "/noindex"
			}
			b.Run(name, func(b *testing.B) {
				p := open(b, testDB(b))
				ctx := context.Background()
				if !index {
					if _, err := p.conn.Exec(ctx, `DROP INDEX panto_entries_search`); err != nil {
						b.Fatal(err)
					}
				}
				id, _ := p.NewName("/b")
				if _, err := p.Append(ctx, id, pair("seed"), store.AppendOptions{Cwd: "/b"}); err != nil {
					b.Fatal(err)
				}
				var times []time.Duration
				i := 0
				for b.Loop() {
					i++
					msgs := batch.msgs(i)
					t0 := time.Now()
					if _, err := p.Append(ctx, id, msgs, store.AppendOptions{}); err != nil {
						b.Fatal(err)
					}
					times = append(times, time.Since(t0))
				}
				b.ReportMetric(medianMicros(times), "median-µs")
				b.ReportMetric(quantileMicros(times, 0.99), "p99-µs")
				b.ReportMetric(quantileMicros(times, 1), "max-µs")
			})
		}
	}
}

// BenchmarkInsert: the reference for BenchmarkAppend: a bare transaction
// of one single-row INSERT from the same client library.
func BenchmarkInsert(b *testing.B) {
	p := open(b, testDB(b))
	ctx := context.Background()
	if _, err := p.conn.Exec(ctx, `CREATE TABLE bench_rows (id bigserial PRIMARY KEY, line bytea NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	line := []byte(`{"type":"message","id":"a1b2c3d4","parentId":"b2c3d4e5","timestamp":"2026-04-25T14:00:01.000Z","provider":"p","model":"m","message":{"role":"user","content":[{"type":"text","text":"a prompt of a few words"}]}}`)
	var times []time.Duration
	for b.Loop() {
		t0 := time.Now()
		err := pgx.BeginFunc(ctx, p.conn, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO bench_rows (line) VALUES ($1)`, line)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
	}
	b.ReportMetric(medianMicros(times), "median-µs")
}
