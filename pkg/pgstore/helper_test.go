package pgstore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/panto-dev/panto/internal/pgtest"
	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// The tests run against a real server: the one scripts/test starts
// (PANTO_TEST_PG), where each test gets a database of its own, or for the
// tests that kill the server, one they start themselves (scripts/pg).

// The test binary doubles as a client process, so the tests can kill real
// clients with SIGKILL. PANTO_PG_HELPER picks what it does:
//
//	append ID N   append N batches of a prompt and its reply to session ID;
//	              print each entry id once its batch is committed
//	create ID     create session ID with one batch (no leaf expected);
//	              print "won" or "lost"
//	push FILE     push the session file FILE
//	sleep         run a query of a minute (print "started" first)
func TestMain(m *testing.M) {
	if mode := os.Getenv("PANTO_PG_HELPER"); mode != "" {
		os.Exit(helper(mode, strings.Fields(os.Getenv("PANTO_PG_ARGS"))))
	}
	os.Exit(m.Run())
}

func helper(mode string, args []string) int {
	ctx := context.Background()
	p, err := Open(ctx, os.Getenv("PANTO_PG_URL"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer p.Close()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	switch mode {
	case "append":
		n, _ := strconv.Atoi(args[1])
		p.SetWait(time.Minute)
		for i := range n {
			res, err := p.Append(ctx, args[0], pair(fmt.Sprintf("%d-%d", os.Getpid(), i)), store.AppendOptions{Cwd: "/t"})
			if err != nil {
				out.Flush()
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
			for _, l := range strings.Split(strings.TrimSpace(string(res.Lines)), "\n") {
				fmt.Fprintln(out, session.Classify([]byte(l)).ID)
			}
			out.Flush()
		}
	case "create":
		none := ""
		_, err := p.Append(ctx, args[0], pair("c"), store.AppendOptions{Cwd: "/t", ExpectLeaf: &none})
		switch {
		case err == nil:
			fmt.Fprintln(out, "won")
		case isStoreError(err):
			fmt.Fprintln(out, "lost")
		default:
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	case "sleep":
		out.Flush()
		if err := sleeper(ctx, os.Getenv("PANTO_PG_URL")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	case "push":
		if _, err := pushFile(ctx, p, args[0]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	}
	return 0
}

// pair is a prompt and its reply.
func pair(tag string) []store.Msg {
	reply, _ := store.ParseMessage([]byte(`{"role":"assistant","content":[{"type":"text","text":"re ` + tag + `"}],"provider":"p","model":"m","stopReason":"stop","usage":{"input":1,"output":1}}`))
	return []store.Msg{{Raw: session.TextMessage("user", "q "+tag), Role: "user"}, reply}
}

// client starts the test binary as a client process of the database at u.
func client(t *testing.T, u, mode string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PANTO_PG_HELPER="+mode, "PANTO_PG_URL="+u, "PANTO_PG_ARGS="+strings.Join(args, " "))
	return cmd
}

// testDB returns the URL of a new, empty database on the test server,
// dropped when the test ends.
func testDB(t testing.TB) string {
	base := os.Getenv("PANTO_TEST_PG")
	if base == "" {
		t.Skip("PANTO_TEST_PG is not set: ./scripts/test starts a PostgreSQL server for these tests")
	}
	return newDatabase(t, base)
}

func newDatabase(t testing.TB, base string) string { return pgtest.On(t, base, "t") }

// fileSource is a session file to receive.
type fileSource struct {
	*os.File
	size int64
}

func (f fileSource) Size() int64 { return f.size }

// pushFile receives the session file at path into the database.
func pushFile(ctx context.Context, p *PG, path string) (*store.Received, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return p.Receive(ctx, fileSource{f, fi.Size()})
}

// sleeper runs a query of a minute on a connection of the database at u,
// for the tests that kill a client in the middle of a query.
func sleeper(ctx context.Context, u string) error {
	p, err := Open(ctx, u)
	if err != nil {
		return err
	}
	defer p.Close()
	fmt.Println("started")
	_, err = p.conn.Exec(ctx, `SELECT pg_sleep(60), 'panto-sleeper'`)
	return err
}
