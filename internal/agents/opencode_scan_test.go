package agents

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ocPartRows is what scanParts or selectParts hands out, sorted.
func ocPartRows(t testing.TB, d *ocDB, scan bool) ([]string, error) {
	t.Helper()
	var rows []string
	keep := func(mid, sid, data []byte) { rows = append(rows, fmt.Sprintf("%q %q %q", mid, sid, data)) }
	var err error
	if scan {
		err = d.scanParts(func() error { return nil }, keep)
	} else {
		err = d.selectParts(func() error { return nil }, keep)
	}
	slices.Sort(rows)
	return rows, err
}

// ocScanDB makes an OpenCode database of the shapes a part's row takes,
// with pragmas run first (a page size): step-finish parts small and over a
// page (on overflow pages), type first or not, tools' outputs over a page,
// texts that name "step-finish", ids so long that the data begins on an
// overflow page, parts of no message.
func ocScanDB(t testing.TB, path string, sessions, messages int, pragmas ...string) {
	t.Helper()
	db := ocOpenRW(t, path)
	defer db.Close()
	for _, p := range pragmas {
		if _, err := db.Exec(p); err != nil {
			t.Fatal(err)
		}
	}
	schema, err := os.ReadFile(ocSchema)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatal(err)
	}
	tokens := `"tokens":{"input":%d,"output":7,"reasoning":1,"cache":{"read":3,"write":0}}`
	n := 0
	part := func(mid, sid, data string) {
		n++
		if _, err := db.Exec(`INSERT INTO part VALUES (?, ?, ?, 0, 0, ?)`, fmt.Sprintf("prt_%06d", n), mid, sid, data); err != nil {
			t.Fatal(err)
		}
	}
	for s := 0; s < sessions; s++ {
		sid := fmt.Sprintf("ses_%d", s)
		if _, err := db.Exec(`INSERT INTO session (id, project_id, directory, title, version, time_created, time_updated) VALUES (?, 'p', '/w', 't', 'v1.18.0', ?, ?)`, sid, s, s); err != nil {
			t.Fatal(err)
		}
		for m := 0; m < messages; m++ {
			mid := fmt.Sprintf("msg_%d_%02d", s, m)
			if _, err := db.Exec(`INSERT INTO message VALUES (?, ?, ?, ?, '{"role":"assistant","modelID":"m","providerID":"p"}')`, mid, sid, m, m); err != nil {
				t.Fatal(err)
			}
			part(mid, sid, `{"type":"step-start"}`)
			part(mid, sid, `{"type":"text","text":"a reply that says \"step-finish\" in passing"}`)
			part(mid, sid, `{"text":"type last, \"step-finish\" named","type":"text"}`)
			part(mid, sid, `{"type":"tool","state":{"output":"`+strings.Repeat("o", 600*m)+`"}}`)
			part(mid, sid, `{"type":"x"}`)
			switch m % 4 {
			case 0:
				part(mid, sid, fmt.Sprintf(`{"reason":"stop","type":"step-finish",`+tokens+`}`, m))
			case 1:
				part(mid, sid, fmt.Sprintf(`{"type":"step-finish",`+tokens+`}`, m))
			case 2: // over a page: on overflow pages
				part(mid, sid, fmt.Sprintf(`{"type":"step-finish","snapshot":"`+strings.Repeat("s", 3000*m)+`",`+tokens+`}`, m))
			case 3:
				part(mid, sid, fmt.Sprintf(`{"reason":"tool-calls","pad":"`+strings.Repeat("p", 5000)+`","type":"step-finish",`+tokens+`}`, m))
			}
		}
		long := strings.Repeat("L", 9000)
		part("msg_"+long, sid, fmt.Sprintf(`{"type":"step-finish",`+tokens+`}`, 1))
		part("msg_0_00", sid+long, `{"type":"tool","state":{"output":"`+strings.Repeat("o", 5000)+`"}}`)
		part("msg_none", sid, fmt.Sprintf(`{"type":"step-finish",`+tokens+`}`, 2))
	}
}

// TestOpenCodeScanSame: the part table read from the file (scanParts)
// gives the rows SQL selects (selectParts, ocStepFinish), on databases of
// every page size and on the fixtures and real database; on those it does
// not read, it says so (errNoScan) and allSteps' sums are SQL's.
func TestOpenCodeScanSame(t *testing.T) {
	dir := t.TempDir()
	type dbCase struct {
		name string
		make func(path string)
		scan bool // read from the file, not left to SQL
	}
	cases := []dbCase{
		{"shapes", func(p string) { ocMakeDB(t, p, ocSchema, ocShapes) }, true},
		{"pages of 4096", func(p string) { ocScanDB(t, p, 3, 8) }, true},
		{"pages of 512", func(p string) { ocScanDB(t, p, 3, 8, "PRAGMA page_size = 512") }, true},
		{"pages of 65536", func(p string) { ocScanDB(t, p, 3, 8, "PRAGMA page_size = 65536") }, true},
		{"a column added", func(p string) {
			ocScanDB(t, p, 3, 8)
			w := ocOpenRW(t, p)
			defer w.Close()
			if _, err := w.Exec(`ALTER TABLE part ADD COLUMN extra text; INSERT INTO part VALUES ('prt_z', 'msg_0_01', 'ses_0', 0, 0, '{"type":"step-finish","tokens":{"input":5,"output":5}}', 'x')`); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"UTF-16", func(p string) { ocScanDB(t, p, 3, 8, "PRAGMA encoding = 'UTF-16le'") }, false},
		{"a blob", func(p string) {
			ocScanDB(t, p, 3, 8)
			w := ocOpenRW(t, p)
			defer w.Close()
			if _, err := w.Exec(`INSERT INTO part VALUES ('prt_b', 'msg_0_01', 'ses_0', 0, 0, CAST('{"type":"step-finish"}' AS BLOB))`); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"a session id not a text", func(p string) {
			ocScanDB(t, p, 3, 8)
			w := ocOpenRW(t, p)
			defer w.Close()
			if _, err := w.Exec(`INSERT INTO part VALUES ('prt_n', 'msg_0_01', CAST('ses_0' AS BLOB), 0, 0, '{"type":"step-finish"}')`); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"without rowid", func(p string) {
			w := ocOpenRW(t, p)
			defer w.Close()
			schema, err := os.ReadFile(ocSchema)
			if err != nil {
				t.Fatal(err)
			}
			s := strings.ReplaceAll(strings.Replace(string(schema), "CREATE TABLE part (", "CREATE TABLE part_old (", 1), " ON part (", " ON part_old (")
			if s == string(schema) {
				t.Fatal("no part table in the schema")
			}
			if _, err := w.Exec(s + `; CREATE TABLE part (id text PRIMARY KEY, message_id text, session_id text, time_created integer, time_updated integer, data text) WITHOUT ROWID;
				INSERT INTO part VALUES ('prt_1', 'msg_1', 'ses_1', 0, 0, '{"type":"step-finish","tokens":{"input":5,"output":5}}')`); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	if real := filepath.Join("..", "..", "..", "shared", "real", "opencode", "opencode.db"); fileExists(real) {
		cases = append(cases, dbCase{"real", func(p string) {
			b, err := os.ReadFile(real)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, true})
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprint(i), "opencode.db")
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			c.make(path)
			d, err := openOpenCode(path)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			want, err := ocPartRows(t, d, false)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ocPartRows(t, d, true)
			if !c.scan {
				if !errors.Is(err, errNoScan) {
					t.Fatalf("read from the file (%v), not left to SQL", err)
				}
				// allSteps takes SQL's rows, none twice
				list, err := d.sessions("")
				if err != nil {
					t.Fatal(err)
				}
				if err := d.allSteps(list, func() error { return nil }); err != nil {
					t.Fatal(err)
				}
				parts := 0
				for _, byMsg := range d.steps {
					for _, st := range byMsg {
						parts += st.parts
					}
				}
				inSessions := 0
				for _, r := range want {
					for _, s := range list {
						if strings.Contains(r, fmt.Sprintf(" %q ", s.id)) {
							inSessions++
							break
						}
					}
				}
				if parts != inSessions {
					t.Fatalf("allSteps kept %d parts, SQL selects %d of the sessions'", parts, inSessions)
				}
				return
			}
			if err != nil {
				t.Fatalf("not read from the file: %v", err)
			}
			if len(want) == 0 {
				t.Fatal("no step-finish part: the case tests nothing")
			}
			if !slices.Equal(got, want) {
				t.Fatalf("from the file %d rows:\n%s\nthrough SQL %d rows:\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
			}
		})
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// FuzzOpenCodeScan: scanParts on a damaged database (bytes of one of 512-
// byte pages, changed) neither panics nor loops, and what it reads when it
// does not give up is what SQL selects, when SQL reads the file at all.
func FuzzOpenCodeScan(f *testing.F) {
	seed := filepath.Join(f.TempDir(), "opencode.db")
	ocScanDB(f, seed, 1, 4, "PRAGMA page_size = 512")
	b, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		scanProperty(t, filepath.Join(t.TempDir(), "opencode.db"), b, nil)
	})
}

// scanProperty writes b as a database at path and holds scanParts to SQL
// on it: the same rows whenever both read. SQL reads the whole of every
// row it tests, tools' outputs included, where scanParts stops at their
// first bytes: damage there (their overflow pages, the pointer to them) is
// what it may not see, and what it reads is then truth, the rows before
// the damage, when given. It says whether the scan read and whether SQL
// did not.
func scanProperty(t *testing.T, path string, b []byte, truth []string) (scanned, sqlFailed bool) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := openOpenCode(path)
	if err != nil {
		return false, false
	}
	defer d.Close()
	if d.checkSchema() != nil {
		return false, false
	}
	got, err := ocPartRows(t, d, true)
	if err != nil {
		return false, false
	}
	want, err := ocPartRows(t, d, false)
	if err != nil {
		if truth != nil && !slices.Equal(got, truth) {
			t.Errorf("read from the file, SQL says %v; from the file:\n%s\nbefore the damage:\n%s", err, strings.Join(got, "\n"), strings.Join(truth, "\n"))
		}
		return true, true
	}
	if !slices.Equal(got, want) {
		t.Errorf("from the file:\n%s\nthrough SQL:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	return true, false
}

// TestOpenCodeScanDamaged is FuzzOpenCodeScan's property on bytes changed
// at random (the same each run), more than the fuzzer runs in a minute
// through SQLite: a byte anywhere, a page's header, a page zeroed.
func TestOpenCodeScanDamaged(t *testing.T) {
	seed := filepath.Join(t.TempDir(), "opencode.db")
	ocScanDB(t, seed, 1, 4, "PRAGMA page_size = 512")
	orig, err := os.ReadFile(seed)
	if err != nil {
		t.Fatal(err)
	}
	d, err := openOpenCode(seed)
	if err != nil {
		t.Fatal(err)
	}
	truth, err := ocPartRows(t, d, false)
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	path := filepath.Join(t.TempDir(), "opencode.db")
	scanned, differ := 0, 0
	// The race detector has nothing to look at in this reading of one
	// file by one goroutine: under it, a tenth of the cases (scripts/test
	// runs them all in its plain build).
	cases := 1200
	if raceBuild {
		cases = 120
	}
	for i := range cases {
		b := slices.Clone(orig)
		page := 512 * rng.IntN(len(b)/512)
		switch i % 4 {
		case 0: // a byte anywhere
			b[rng.IntN(len(b))] = byte(rng.Uint32())
		case 1: // in a page's header or cell pointers
			b[page+rng.IntN(16)] = byte(rng.Uint32())
		case 2: // a page zeroed
			clear(b[page : page+512])
		case 3: // a few bytes of a page
			for range 4 {
				b[page+rng.IntN(512)] = byte(rng.Uint32())
			}
		}
		read, failed := scanProperty(t, path, b, truth)
		if read {
			scanned++
		}
		if failed {
			differ++
		}
		if t.Failed() {
			t.Fatalf("case %d", i)
		}
	}
	t.Logf("%d of %d read from the file, %d of them damaged in a tool's output that SQL read", scanned, cases, differ)
	if scanned < cases/2 {
		t.Fatalf("%d of %d read from the file: the test tests little", scanned, cases)
	}
}
