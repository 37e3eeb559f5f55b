// Command followbench measures panto-log push --follow for scripts/bench:
// the lag from an acknowledged panto-log append to the committed row, the
// append latency with and without a follower running, the CPU a follower
// of idle sessions spends, and its peak memory against the number and the
// size of the sessions it follows. It prints Markdown for BENCHMARKS.md.
//
//	followbench -bin BIN -gen BENCH-GEN -url URL -dir DIR [-appends N] [-idle D]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var (
	bin     = flag.String("bin", "bin", "directory of the panto commands")
	gen     = flag.String("gen", "bin/bench-gen", "tools/gen, built")
	url     = flag.String("url", "", "the database")
	dir     = flag.String("dir", "", "scratch directory")
	appends = flag.Int("appends", 500, "appends measured, with and without a follower")
	idle    = flag.Duration("idle", time.Minute, "how long the idle follower is watched")
)

func main() {
	flag.Parse()
	if *url == "" || *dir == "" {
		fmt.Fprintln(os.Stderr, "followbench: give -url and -dir")
		os.Exit(2)
	}
	lag()
	idleCost()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "followbench:", err)
	os.Exit(3)
}

const pair = `{"role":"user","content":[{"type":"text","text":"hello"}]}
{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"p","model":"m","stopReason":"stop","usage":{"input":3,"output":1}}
`

// follower is a running panto-log push --follow --json: the commits it
// reports, by the session's entries after each.
type follower struct {
	cmd      *exec.Cmd
	mu       sync.Mutex
	commits  []commit
	sessions map[string]bool
}

type commit struct {
	total int64
	at    time.Time
}

func startFollower(env []string, args ...string) *follower {
	cmd := exec.Command(filepath.Join(*bin, "panto-log"), append([]string{"push", "--follow", "--json", "--to", *url}, args...)...)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		fail(err)
	}
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	f := &follower{cmd: cmd, sessions: map[string]bool{}}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var c struct {
				Session   string
				Total     int64
				Committed time.Time
			}
			if json.Unmarshal(sc.Bytes(), &c) == nil {
				f.mu.Lock()
				f.commits = append(f.commits, commit{c.Total, c.Committed})
				f.sessions[c.Session] = true
				f.mu.Unlock()
			}
		}
	}()
	return f
}

func (f *follower) stop() {
	f.cmd.Process.Signal(syscall.SIGTERM)
	f.cmd.Wait()
}

// committed returns when the follower committed the session's entry
// total, waiting up to 10 s.
func (f *follower) committed(total int64) (time.Time, bool) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		f.mu.Lock()
		for _, c := range f.commits {
			if c.total >= total {
				f.mu.Unlock()
				return c.at, true
			}
		}
		f.mu.Unlock()
	}
	return time.Time{}, false
}

func (f *follower) waitSessions(n int) {
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		f.mu.Lock()
		k := len(f.sessions)
		f.mu.Unlock()
		if k >= n {
			time.Sleep(500 * time.Millisecond) // the last batches of big sessions
			return
		}
	}
	fail(fmt.Errorf("the follower did not reach %d sessions", n))
}

// appendOne runs one panto-log append and returns its latency.
func appendOne(env []string, file string, n int) time.Duration {
	cmd := exec.Command(filepath.Join(*bin, "panto-log"), "append", "-q", "--user", "line "+strconv.Itoa(n), file)
	cmd.Env = env
	t0 := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		fail(fmt.Errorf("append: %v: %s", err, out))
	}
	return time.Since(t0)
}

func lag() {
	base := filepath.Join(*dir, "follow-lag")
	file := filepath.Join(base, "--bench--", "lag.jsonl")
	env := append(os.Environ(), "PANTO_SESSION_DIR="+base)
	cmd := exec.Command(filepath.Join(*bin, "panto-log"), "append", "-q", "--provider", "p", "--model", "m", file)
	cmd.Env, cmd.Stdin = env, strings.NewReader(pair)
	if out, err := cmd.CombinedOutput(); err != nil {
		fail(fmt.Errorf("append: %v: %s", err, out))
	}
	rng := rand.New(rand.NewPCG(22, 1))
	gap := func() { time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond) }
	// Alone, then with a follower, then alone again: drift shows.
	var alone, with, lags, fromStart []time.Duration
	n := 0
	for range *appends / 2 {
		alone = append(alone, appendOne(env, file, n))
		n++
		gap()
	}
	f := startFollower(env, base)
	entries := int64(2 + n)
	if _, ok := f.committed(entries); !ok {
		fail(fmt.Errorf("the follower did not catch up"))
	}
	missed := 0
	for range *appends {
		start := time.Now()
		d := appendOne(env, file, n)
		acked := start.Add(d)
		n++
		entries++
		with = append(with, d)
		at, ok := f.committed(entries)
		if !ok {
			missed++
			continue
		}
		lags = append(lags, at.Sub(acked))
		fromStart = append(fromStart, at.Sub(start))
		gap()
	}
	f.stop()
	for range *appends / 2 {
		alone = append(alone, appendOne(env, file, n))
		n++
		gap()
	}
	fmt.Printf("Lag from an acknowledged `panto-log append` (its process exited) to the follower's commit of its row, over %d appends (a prompt each, 0–20 ms apart; `committed` of `--json` against the time the append's process ended): median **%s**, p99 **%s**, max %s (goal: p99 ≤ 250 ms); negative: committed before the append's own fsync returned. From the start of the append: median %s, p99 %s.",
		len(lags), q(lags, 0.5), q(lags, 0.99), q(lags, 1), q(fromStart, 0.5), q(fromStart, 0.99))
	if missed > 0 {
		fmt.Printf(" %d appends not seen committed within 10 s.", missed)
	}
	fmt.Printf("\n\nAppend latency (the whole `panto-log append` process, fsync included): without a follower median %s, p99 %s (%d appends, half before and half after); with a follower running median %s, p99 %s (%d appends).\n\n",
		q(alone, 0.5), q(alone, 0.99), len(alone), q(with, 0.5), q(with, 0.99), len(with))
}

// q is the quantile p of ds, in milliseconds.
func q(ds []time.Duration, p float64) string {
	if len(ds) == 0 {
		return "-"
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p*float64(len(s))+0.5) - 1
	i = max(0, min(i, len(s)-1))
	return fmt.Sprintf("%.1f ms", float64(s[i].Microseconds())/1000)
}

// proc reads a process's CPU seconds (user+system) and its resident and
// peak resident memory in MB.
func proc(pid int) (cpu float64, rss, hwm float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		fail(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	cpu = (ut + st) / 100 // USER_HZ
	s, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(s), "\n") {
		k, v, _ := strings.Cut(l, ":")
		kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		switch k {
		case "VmRSS":
			rss = kb / 1024
		case "VmHWM":
			hwm = kb / 1024
		}
	}
	return
}

func generate(sub string, count int, each int64) string {
	d := filepath.Join(*dir, sub)
	out, err := exec.Command(*gen, "-count", strconv.Itoa(count), "-each", strconv.FormatInt(each, 10), "-dir", filepath.Join(d, "--bench--")).CombinedOutput()
	if err != nil {
		fail(fmt.Errorf("gen: %v: %s", err, out))
	}
	return d
}

// idleCost follows 1,000 idle sessions for a while, and compares peak
// memory over sessions of other numbers and sizes.
func idleCost() {
	env := os.Environ()
	type run struct {
		label        string
		count        int
		each         int64
		cpu, rss, hw float64
	}
	runs := []run{{label: "100 sessions of 4 KB", count: 100, each: 4 << 10}, {label: "1,000 sessions of 4 KB", count: 1000, each: 4 << 10},
		{label: "10 sessions of 20 MB", count: 10, each: 20 << 20}}
	for i := range runs {
		r := &runs[i]
		d := generate(fmt.Sprintf("follow-idle-%d", i), r.count, r.each)
		f := startFollower(env, d)
		f.waitSessions(r.count)
		if r.count == 1000 {
			c0, _, _ := proc(f.cmd.Process.Pid)
			time.Sleep(*idle)
			c1, _, _ := proc(f.cmd.Process.Pid)
			r.cpu = (c1 - c0) * float64(time.Minute) / float64(*idle)
		}
		_, r.rss, r.hw = proc(f.cmd.Process.Pid)
		f.stop()
	}
	fmt.Printf("A follower of 1,000 idle sessions (caught up first, watching with inotify) spent **%.2f CPU seconds a minute** (user+system from /proc/PID/stat, over %s).\n\n", runs[1].cpu, *idle)
	fmt.Println("Memory of the follower (from /proc/PID/status after it caught up; the peak includes the catching up):")
	fmt.Println()
	fmt.Println("| sessions followed | resident MB | peak MB |")
	fmt.Println("|---|---|---|")
	for _, r := range runs {
		fmt.Printf("| %s | %.0f | %.0f |\n", r.label, r.rss, r.hw)
	}
	fmt.Println()
}
