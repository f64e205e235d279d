package sqlite

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dpbandit/dpbandit/store"
)

// The one-server lock of a SQLite database: an exclusive OS lock (flock on
// Unix, LockFileEx on Windows) on PATH.lock beside the database, held from
// Open to Close. Two servers on one file would each log decisions and
// commit their own policies and ledgers (the last to stop rolls the privacy
// ledger back), so a second Open is refused at once, even in the same
// process (the lock belongs to an open file, not to the process). The OS
// frees it when the holder exits, however it exits: after a crash the next
// Open simply takes it. The lock file keeps its holder's pid and start time
// for the refusal's message; it is never deleted (deleting it would let a
// second holder lock a new file while the first holds the old one).

// errWouldBlock is what tryLock returns when another open file holds the
// lock.
var errWouldBlock = errors.New("lock held by another open file")

// holder is what the lock file says about the process that holds it.
type holder struct {
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Host    string    `json:"host,omitempty"`
	Program string    `json:"program,omitempty"`
}

// fileLock is a held lock file.
type fileLock struct {
	f    *os.File
	path string
}

// LockPath is the lock file of the database at path.
func LockPath(path string) string { return path + ".lock" }

// lockDB takes the lock of the database at path, or fails at once: with an
// error wrapping store.ErrLocked that names the holder when another open
// file holds it.
func lockDB(path string) (*fileLock, error) {
	lp := LockPath(path)
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: lock file: %w", path, err)
	}
	if err := tryLock(f); err != nil {
		var h *holder
		if errors.Is(err, errWouldBlock) {
			h = readHolder(f)
		}
		f.Close()
		if errors.Is(err, errWouldBlock) {
			return nil, &lockedError{path: path, lockPath: lp, h: h}
		}
		return nil, fmt.Errorf("sqlite store %s: locking %s: %w", path, lp, err)
	}
	host, _ := os.Hostname()
	me := holder{PID: os.Getpid(), Started: time.Now().UTC().Truncate(time.Second), Host: host, Program: program()}
	b, _ := json.Marshal(me)
	if err := f.Truncate(0); err == nil {
		f.WriteAt(append(b, '\n'), 0) // informative only: a failure changes nothing
	}
	return &fileLock{f: f, path: lp}, nil
}

// release clears the holder and unlocks (the OS would at exit anyway).
func (l *fileLock) release() error {
	if l == nil {
		return nil
	}
	l.f.Truncate(0)
	err := unlock(l.f)
	return errors.Join(err, l.f.Close())
}

func readHolder(f *os.File) *holder {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 4096))
	if err != nil || len(b) == 0 {
		return nil
	}
	var h holder
	if json.Unmarshal(b, &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}

// program names this process for the lock file: "dpbandit serve" for the
// server.
func program() string {
	if len(os.Args) == 0 {
		return ""
	}
	p := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	if len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-") {
		p += " " + os.Args[1]
	}
	return p
}

// lockedError is Open's refusal when another open file holds the lock.
type lockedError struct {
	path, lockPath string
	h              *holder // nil when the lock file does not say
}

func (e *lockedError) Unwrap() error { return store.ErrLocked }

func (e *lockedError) Error() string {
	h := e.h
	if h == nil {
		return fmt.Sprintf("database %s is in use by another process (lock file %s): stop it first, or use another --db", e.path, e.lockPath)
	}
	who := "another " + h.Program
	if h.Program == "" {
		who = "another process"
	}
	where := ""
	if host, _ := os.Hostname(); h.Host != "" && h.Host != host {
		where = " on host " + h.Host
	}
	if h.PID == os.Getpid() && where == "" {
		return fmt.Sprintf("database %s is already open in this process (pid %d, since %s; lock file %s): close the other store first",
			e.path, h.PID, h.Started.Format(time.RFC3339), e.lockPath)
	}
	return fmt.Sprintf("database %s is in use by %s (pid %d%s, started %s; lock file %s): stop it first, or use another --db",
		e.path, who, h.PID, where, h.Started.Format(time.RFC3339), e.lockPath)
}
