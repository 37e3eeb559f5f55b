// Command torture runs the crash torture of scripts/torture against the real
// panto-log and panto-fsck binaries: writers killed with SIGKILL at random
// points, concurrent writers, racing creators, full disks (RLIMIT_FSIZE),
// repairs racing writers, torn tails at every offset, bit flips, and a
// 100 MB line. After every iteration panto-fsck must explain the file, no
// entry that panto-log acknowledged on stdout may be missing, and no repair
// may cut an acknowledged entry that came before the damage.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/panto-dev/panto/pkg/scan"
)

var (
	bin      = flag.String("bin", "bin", "directory holding panto-log and panto-fsck")
	long     = flag.Bool("long", false, "the long mode: 10,000+ iterations")
	iters    = flag.Int("iterations", 0, "iterations (default: 120 short, 10000 long)")
	seed     = flag.Uint64("seed", uint64(time.Now().UnixNano()), "random seed (printed, to replay a run)")
	bigLine  = flag.Int("big-line", 0, "bytes of the single-line test (default: 8 MB short, 100 MB long)")
	workRoot = flag.String("dir", "", "work directory (default: a temporary one, removed unless something failed)")
)

type stats struct {
	iterations, kills, killTorn, acked, lost, repaired, torn, flips, enospc, races, busy int
	failures                                                                             []string
}

var (
	st  stats
	rng *rand.Rand
	mu  sync.Mutex
)

func fail(format string, args ...any) {
	mu.Lock()
	defer mu.Unlock()
	st.failures = append(st.failures, fmt.Sprintf(format, args...))
}

func main() {
	flag.Parse()
	if *iters == 0 {
		*iters = 120
		if *long {
			*iters = 10000
		}
	}
	if *bigLine == 0 {
		*bigLine = 8 << 20
		if *long {
			*bigLine = 100 << 20
		}
	}
	rng = rand.New(rand.NewPCG(*seed, 42))
	abs, err := filepath.Abs(*bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	*bin = abs
	dir := *workRoot
	if dir == "" {
		if dir, err = os.MkdirTemp("", "panto-torture-"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	calibrate(dir)
	start := time.Now()
	scenarios := []func(string){killWriter, concurrentWriters, racingCreators, fileSizeLimit, killBesideWriter, repairRacingWriter, tornTails, bitFlip}
	for i := 0; i < *iters; i++ {
		d := filepath.Join(dir, fmt.Sprint(i))
		os.MkdirAll(d, 0o700)
		scenarios[i%len(scenarios)](d)
		st.iterations++
		if len(st.failures) > 0 {
			break
		}
		if len(st.failures) == 0 {
			os.RemoveAll(d)
		}
	}
	if len(st.failures) == 0 {
		hugeLine(filepath.Join(dir, "huge"))
	}
	fmt.Printf("torture: seed=%d iterations=%d kills=%d tornByKill=%d acknowledged=%d lost=%d repaired=%d tornTails=%d bitFlips=%d enospc=%d races=%d busy=%d failures=%d (%s)\n",
		*seed, st.iterations, st.kills, st.killTorn, st.acked, st.lost, st.repaired, st.torn, st.flips, st.enospc, st.races, st.busy, len(st.failures), time.Since(start).Round(time.Second))
	if len(st.failures) > 0 {
		for _, f := range st.failures {
			fmt.Fprintln(os.Stderr, "torture: FAIL:", f)
		}
		fmt.Fprintln(os.Stderr, "torture: work left in", dir)
		os.Exit(1)
	}
	if *workRoot == "" {
		os.RemoveAll(dir)
	}
}

// message returns a message line of about size bytes.
func message(role string, size int) string {
	text := strings.Repeat("x", size)
	if role == "assistant" {
		return `{"role":"assistant","content":[{"type":"text","text":"` + text + `"}],"provider":"p","model":"m","stopReason":"stop"}`
	}
	return `{"role":"user","content":[{"type":"text","text":"` + text + `"}]}`
}

// appendCmd returns a panto-log append of a user+assistant pair.
func appendCmd(file string, size int, extra ...string) (*exec.Cmd, *bytes.Buffer) {
	args := append([]string{"append", "--ids", "--provider", "p", "--model", "m", "--wait", "60s"}, extra...)
	cmd := exec.Command(filepath.Join(*bin, "panto-log"), append(args, file)...)
	cmd.Stdin = strings.NewReader(message("user", size) + "\n" + message("assistant", size) + "\n")
	var out bytes.Buffer
	cmd.Stdout = &out
	return cmd, &out
}

// acked returns the ids a writer printed: only whole lines count.
func acked(out *bytes.Buffer) []string {
	s := out.String()
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	} else {
		s = ""
	}
	return strings.Fields(s)
}

func seedFile(file string) {
	cmd, _ := appendCmd(file, 100)
	if err := cmd.Run(); err != nil {
		fail("%s: seed append: %v", file, err)
	}
}

// fsck runs panto-fsck and returns its exit code.
func fsck(args ...string) int {
	cmd := exec.Command(filepath.Join(*bin, "panto-fsck"), append([]string{"-q"}, args...)...)
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return 8
	}
	return 0
}

// check repairs a torn tail, then requires a clean file holding every
// acknowledged id.
func check(file string, ids []string) {
	code := fsck("--repair", file)
	if code&^1 != 0 {
		fail("%s: panto-fsck --repair exited %d", file, code)
		return
	}
	if code == 1 {
		st.repaired++
	}
	if code := fsck(file); code != 0 {
		fail("%s: not clean after a tail repair (exit %d)", file, code)
	}
	present(file, ids)
}

func present(file string, ids []string) {
	f, err := os.Open(file)
	if err != nil {
		if len(ids) > 0 {
			fail("%s: %d entries acknowledged, but: %v", file, len(ids), err)
			st.lost += len(ids)
		}
		return
	}
	defer f.Close()
	l, err := scan.Scan(f, scan.ScanOptions{})
	if err != nil {
		fail("%s: %v", file, err)
		return
	}
	mu.Lock()
	defer mu.Unlock()
	st.acked += len(ids)
	for _, id := range ids {
		if l.Lookup(id) < 0 {
			st.lost++
			st.failures = append(st.failures, fmt.Sprintf("%s: acknowledged entry %s lost", file, id))
		}
	}
}

// killSize is the text size of the batches killWriter kills, and killAt
// how long such an append takes here: writers are killed around then.
const killSize = 4 << 20

var killAt time.Duration

func calibrate(dir string) {
	file := filepath.Join(dir, "calibrate.jsonl")
	seedFile(file)
	var runs []time.Duration
	for range 3 {
		cmd, _ := appendCmd(file, killSize)
		t := time.Now()
		cmd.Run()
		runs = append(runs, time.Since(t))
	}
	killAt = min(runs[0], runs[1], runs[2])
	os.Remove(file)
}

// killWriter kills writers of large batches with SIGKILL at random moments.
func killWriter(dir string) {
	file := filepath.Join(dir, "s.jsonl")
	seedFile(file)
	var ids []string
	for range 3 {
		cmd, out := appendCmd(file, killSize)
		if err := cmd.Start(); err != nil {
			fail("start: %v", err)
			return
		}
		// Aim at the end of the append, where its one write happens.
		time.Sleep(killAt - killAt/8 + time.Duration(rng.Int64N(int64(killAt/6))))
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		st.kills++
		ids = append(ids, acked(out)...)
		code := fsck(file)
		if code&4 != 0 {
			st.killTorn++
		}
		if code&^4 != 0 {
			fail("%s: panto-fsck cannot explain the file (exit %d)", file, code)
		}
	}
	check(file, ids)
}

// concurrentWriters runs 8 writers on one session at once.
func concurrentWriters(dir string) {
	file := filepath.Join(dir, "s.jsonl")
	seedFile(file)
	var wg sync.WaitGroup
	var all []string
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				cmd, out := appendCmd(file, rng.IntN(64<<10))
				if err := cmd.Run(); err != nil {
					fail("%s: concurrent append: %v", file, err)
					return
				}
				mu.Lock()
				all = append(all, acked(out)...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	check(file, all)
	chain(file)
}

// chain requires every entry's parent to be the entry before it.
func chain(file string) {
	f, err := os.Open(file)
	if err != nil {
		return
	}
	defer f.Close()
	l, _ := scan.Scan(f, scan.ScanOptions{})
	for i, n := range l.Nodes[1:] {
		if n.Parent != int32(i) {
			fail("%s: entry %s is not a child of the entry before it", file, l.ID(int32(i+1)))
			return
		}
	}
}

// racingCreators starts two creators of one new session: one wins.
func racingCreators(dir string) {
	file := filepath.Join(dir, "new.jsonl")
	var wg sync.WaitGroup
	results := make([]error, 2)
	outs := make([]*bytes.Buffer, 2)
	for i := range 2 {
		cmd, out := appendCmd(file, 100, "--expect-leaf", "")
		outs[i] = out
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = cmd.Run() }()
	}
	wg.Wait()
	st.races++
	if (results[0] == nil) == (results[1] == nil) {
		fail("%s: racing creators: %v and %v, want exactly one winner", file, results[0], results[1])
	}
	check(file, append(acked(outs[0]), acked(outs[1])...))
}

// fileSizeLimit appends a batch that RLIMIT_FSIZE stops halfway: it fails
// and the file is as before.
func fileSizeLimit(dir string) {
	file := filepath.Join(dir, "s.jsonl")
	seedFile(file)
	before, _ := os.ReadFile(file)
	limitKB := (len(before) + 4096) / 1024
	sh := fmt.Sprintf("ulimit -f %d; exec %s append --provider p --model m %s", limitKB+1, filepath.Join(*bin, "panto-log"), file)
	cmd := exec.Command("sh", "-c", sh)
	cmd.Stdin = strings.NewReader(message("user", 64<<10) + "\n")
	err := cmd.Run()
	st.enospc++
	after, _ := os.ReadFile(file)
	if err == nil {
		fail("%s: an append past the file size limit succeeded", file)
	}
	if !bytes.Equal(before, after) {
		fail("%s: a failed append changed the file (%d → %d bytes)", file, len(before), len(after))
	}
	check(file, nil)
}

// killBesideWriter kills one writer while another keeps appending.
func killBesideWriter(dir string) {
	file := filepath.Join(dir, "s.jsonl")
	seedFile(file)
	var ids []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 5 {
			cmd, out := appendCmd(file, rng.IntN(32<<10))
			if err := cmd.Run(); err != nil {
				fail("%s: the other writer failed: %v", file, err)
				return
			}
			mu.Lock()
			ids = append(ids, acked(out)...)
			mu.Unlock()
		}
	}()
	cmd, out := appendCmd(file, 1<<20)
	cmd.Start()
	time.Sleep(time.Duration(rng.IntN(5000)) * time.Microsecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	st.kills++
	wg.Wait()
	check(file, append(ids, acked(out)...))
}

// repairRacingWriter runs panto-fsck --repair while writers append.
func repairRacingWriter(dir string) {
	file := filepath.Join(dir, "s.jsonl")
	seedFile(file)
	var ids []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 5 {
			cmd, out := appendCmd(file, rng.IntN(256<<10))
			if err := cmd.Run(); err != nil {
				fail("%s: writer beside a repair failed: %v", file, err)
				return
			}
			ids = append(ids, acked(out)...)
		}
	}()
	for {
		select {
		case <-done:
			check(file, ids)
			return
		default:
		}
		code := fsck("--repair", "--policy", "salvage", file)
		if code&2 != 0 {
			st.busy++
		}
		if code&^(1|2) != 0 {
			fail("%s: repair beside a writer exited %d", file, code)
		}
	}
}

// tornTails cuts a clean log at offsets of its last entry; a tail repair
// keeps exactly the complete entries.
func tornTails(dir string) {
	file := filepath.Join(dir, "s.jsonl")
	seedFile(file)
	cmd, out := appendCmd(file, 300)
	cmd.Run()
	data, _ := os.ReadFile(file)
	start := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	for range 8 {
		k := start + rng.IntN(len(data)-start)
		os.WriteFile(file, data[:k], 0o600)
		if code := fsck("--repair", file); code != 1 && k != start {
			fail("%s: cut at %d: repair exited %d", file, k, code)
		}
		got, _ := os.ReadFile(file)
		if !bytes.Equal(got, data[:start]) {
			fail("%s: cut at %d: repaired to %d bytes, want %d", file, k, len(got), start)
		}
		st.torn++
	}
	ids := acked(out)
	os.WriteFile(file, data, 0o600)
	check(file, ids)
}

// bitFlip flips one bit in the middle; fsck explains it, and no policy
// removes an entry before the damaged line.
func bitFlip(dir string) {
	file := filepath.Join(dir, "s.jsonl")
	seedFile(file)
	var ids []string
	for range 4 {
		cmd, out := appendCmd(file, rng.IntN(2000))
		cmd.Run()
		ids = append(ids, acked(out)...)
	}
	data, _ := os.ReadFile(file)
	off := rng.IntN(len(data))
	flipped := append([]byte(nil), data...)
	flipped[off] ^= 1 << rng.IntN(8)
	lineStart := bytes.LastIndexByte(flipped[:off], '\n') + 1
	st.flips++
	for _, policy := range []string{"tail", "point-in-time", "salvage"} {
		os.WriteFile(file, flipped, 0o600)
		if code := fsck(file); code&^4 != 0 {
			fail("%s: flip at %d: panto-fsck cannot explain it (exit %d)", file, off, code)
		}
		code := fsck("--repair", "--policy", policy, file)
		if code&^(1|4) != 0 {
			fail("%s: flip at %d, %s: exit %d", file, off, policy, code)
		}
		got, _ := os.ReadFile(file)
		if lineStart > 0 && !bytes.HasPrefix(got, data[:lineStart]) && !(policy == "salvage" && off < 3) {
			fail("%s: flip at %d, %s: an entry before the damage was cut", file, off, policy)
		}
	}
	_ = ids
}

// hugeLine appends one message of a single very long line.
func hugeLine(dir string) {
	os.MkdirAll(dir, 0o700)
	file := filepath.Join(dir, "s.jsonl")
	seedFile(file)
	cmd, out := appendCmd(file, *bigLine)
	if err := cmd.Run(); err != nil {
		fail("%s: a %d-byte line: %v", file, *bigLine, err)
		return
	}
	check(file, acked(out))
	replay := exec.Command(filepath.Join(*bin, "panto-replay"), file)
	var b bytes.Buffer
	replay.Stdout = &b
	if err := replay.Run(); err != nil || bytes.Count(b.Bytes(), []byte("\n")) != 4 {
		fail("%s: replay of the big line: %v", file, err)
	}
}
