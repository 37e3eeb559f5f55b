package filestore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/panto-dev/panto/pkg/session"
	"github.com/panto-dev/panto/pkg/store"
)

// The test binary doubles as a writer process, so durability tests can kill
// real processes with SIGKILL. PANTO_STORE_HELPER picks what it does:
//
//	append N SIZE   append N batches of a user+assistant pair with SIZE-byte
//	                texts; print each entry id once its batch is acknowledged
//	create          create the session with one batch, print "won" or "lost"
//	fsize LIMIT     set RLIMIT_FSIZE to LIMIT, append one 64 KiB batch
func TestMain(m *testing.M) {
	if mode := os.Getenv("PANTO_STORE_HELPER"); mode != "" {
		os.Exit(helper(mode, os.Getenv("PANTO_STORE_FILE"), strings.Fields(os.Getenv("PANTO_STORE_ARGS"))))
	}
	os.Exit(m.Run())
}

func helper(mode, file string, args []string) int {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	switch mode {
	case "append":
		n, _ := strconv.Atoi(args[0])
		size, _ := strconv.Atoi(args[1])
		for i := range n {
			res, err := (&Files{Wait: time.Minute}).Append(context.Background(), file, pair(fmt.Sprintf("%d-%d", os.Getpid(), i), size), store.AppendOptions{Cwd: "/t"})
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
			for _, id := range ids(res.Lines) {
				fmt.Fprintln(out, id)
			}
			out.Flush()
		}
	case "create":
		none := "" // the creator expects no leaf: the file must not exist yet
		_, err := (&Files{}).Append(context.Background(), file, pair("c", 10), store.AppendOptions{Cwd: "/t", ExpectLeaf: &none})
		switch {
		case err == nil:
			fmt.Fprintln(out, "won")
		case errors.Is(err, store.ErrExists), errors.Is(err, store.ErrLeafMoved):
			fmt.Fprintln(out, "lost")
		default:
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	case "fsize":
		var limit syscall.Rlimit // uint64 here, int64 on the BSDs: Sscan reads either
		fmt.Sscan(args[0], &limit.Cur)
		limit.Max = limit.Cur
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		_, err := (&Files{}).Append(context.Background(), file, pair("big", 64<<10), store.AppendOptions{Cwd: "/t"})
		fmt.Fprintln(out, err)
	}
	return 0
}

// pair is a user prompt and its reply, with texts of about size bytes.
func pair(tag string, size int) []store.Msg {
	text := tag + " " + strings.Repeat("x", size)
	return []store.Msg{
		{Raw: session.TextMessage("user", text), Role: "user"},
		{Raw: []byte(`{"role":"assistant","content":[{"type":"text","text":"` + text + `"}],"provider":"p","model":"m","stopReason":"stop"}`), Role: "assistant"},
	}
}

// ids returns the entry ids of entry lines.
func ids(lines []byte) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(lines), "\n"), "\n") {
		out = append(out, session.Classify([]byte(l)).ID)
	}
	return out
}

// helperCmd returns a command running the helper.
func helperCmd(t *testing.T, mode, file string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PANTO_STORE_HELPER="+mode, "PANTO_STORE_FILE="+file, "PANTO_STORE_ARGS="+strings.Join(args, " "))
	return cmd
}
