package pgstore

import (
	"context"
	"slices"
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

// BenchmarkAppend: one append of a batch (one prompt; a prompt and its
// reply) to a session in the database, a transaction each, as
// panto-log append does it (after connecting).
func BenchmarkAppend(b *testing.B) {
	for _, batch := range []struct {
		name string
		msgs []store.Msg
	}{{"prompt", []store.Msg{{Raw: session.TextMessage("user", "a prompt of a few words"), Role: "user"}}}, {"pair", pair("bench")}} {
		b.Run(batch.name, func(b *testing.B) {
			p := open(b, testDB(b))
			ctx := context.Background()
			id, _ := p.NewName("/b")
			if _, err := p.Append(ctx, id, pair("seed"), store.AppendOptions{Cwd: "/b"}); err != nil {
				b.Fatal(err)
			}
			var times []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := p.Append(ctx, id, batch.msgs, store.AppendOptions{}); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0))
			}
			b.ReportMetric(medianMicros(times), "median-µs")
		})
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
