package tune

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Lock holds an interface's journal against every other tune and revert: a tune reads
// the knobs, plans and applies under it, so two at once cannot both take the other's
// half-applied values as "what the user had". An advisory flock on tune-IFACE.lock in
// the state directory: the kernel drops it when its holder dies, kill -9 included.
type Lock struct {
	f *os.File
}

// LockError is a lock held by another process after the wait.
type LockError struct {
	Path   string
	Holder string // "pid 1234: linerate tune eth0 --profile latency, since 15:04:05"
	Waited time.Duration
}

func (e *LockError) Error() string {
	return fmt.Sprintf("another linerate is tuning or reverting this interface (%s): waited %v for %s; let it finish, or stop it", e.Holder, e.Waited, e.Path)
}

// Acquire takes iface's lock in the store's directory, waiting up to wait for a holder to
// let go; then it fails with a *LockError naming the holder.
func (s Store) Acquire(iface string, wait time.Duration) (*Lock, error) {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	p := filepath.Join(s.Dir, "tune-"+iface+".lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", p, err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", p, err)
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(p)
			f.Close()
			holder := strings.TrimSpace(string(b))
			if holder == "" {
				holder = "holder unknown"
			}
			return nil, &LockError{Path: p, Holder: holder, Waited: wait}
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Who holds it, for the message another run gives.
	f.Truncate(0)
	f.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+": "+strings.Join(os.Args, " ")+", since "+time.Now().Format("15:04:05")+"\n"), 0)
	return &Lock{f: f}, nil
}

// Release lets the lock go.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Truncate(0)
	unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
	l.f = nil
}
