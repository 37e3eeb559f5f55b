package agents

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// tmpPrefix names the temporary directories that hold panto's private
// copies of an OpenCode database (a snapshot beside a live WAL, standard
// input spooled): panto-opencode-PID-RANDOM.
const tmpPrefix = "panto-opencode-"

// copyDir makes a temporary directory for a copy of a user's database.
// A process killed while it held one (kill -9, the OOM killer) never
// removed it, and each such copy is as large as the user's database: the
// directories of processes that no longer exist are removed first.
func copyDir() (string, error) {
	sweepCopies(os.TempDir())
	return os.MkdirTemp("", tmpPrefix+strconv.Itoa(os.Getpid())+"-*")
}

// sweepCopies removes the copy directories in tmp whose process is gone.
// A directory of a live process (this one's included) or of a process
// that cannot be told dead (another user's: EPERM) is left alone.
func sweepCopies(tmp string) {
	names, err := filepath.Glob(filepath.Join(tmp, tmpPrefix+"*-*"))
	if err != nil {
		return
	}
	for _, name := range names {
		pid, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(filepath.Base(name), tmpPrefix), "-", 2)[0])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(name)
		}
	}
}
