package tune

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zynqnet/linerate/internal/readall"
)

// Lock holds an interface against every other command that changes it (tune, revert,
// sweep, autotune, compare, a PHY loopback test): a command reads the knobs, plans and
// applies under it, so two at once cannot both take the other's half-applied values as
// "what the user had". There is one lock per interface of a network namespace, whatever
// state directory a command journals in: an advisory flock on a file in LockDir, which
// the kernel drops when its holder dies, kill -9 included.
type Lock struct {
	f   *os.File
	key string
}

// LockError is a lock held by another process after the wait.
type LockError struct {
	Path   string
	Holder string // "pid 1234: linerate tune eth0 --profile latency, since 15:04:05"
	Waited time.Duration
}

func (e *LockError) Error() string {
	return fmt.Sprintf("another linerate is changing this interface (%s): waited %v for %s; let it finish, or stop it", e.Holder, e.Waited, e.Path)
}

// LockDir is where the interfaces' locks and the list of their journals live: on the
// run-time file system, where a reboot (which undoes every change too) clears them.
func LockDir() string {
	for _, d := range []string{"/run/linerate/lock", filepath.Join(os.TempDir(), "linerate-lock")} {
		if err := os.MkdirAll(d, 0o755); err == nil && unix.Access(d, unix.W_OK) == nil {
			return d
		}
	}
	return filepath.Join(os.TempDir(), "linerate-lock")
}

// ifaceKey names an interface of the calling thread's network namespace: eth0 of the
// host and eth0 of a namespace are different ports.
func ifaceKey(iface string) string {
	var st unix.Stat_t
	ns := "0"
	if unix.Stat("/proc/thread-self/ns/net", &st) == nil {
		ns = strconv.FormatUint(st.Ino, 10)
	}
	return "net" + ns + "-" + iface
}

// journalName is the file of iface's journal in a state directory: tune-IFACE.json for
// an interface of init's network namespace, tune-IFACE:netINODE.json for one of another
// namespace, so that eth0 of two namespaces sharing a state directory never share a
// journal (nor does revert in one find the other's). Where init's namespace cannot be
// read (no privilege), every name carries the namespace.
func journalName(iface string) string {
	var self, init unix.Stat_t
	if unix.Stat("/proc/thread-self/ns/net", &self) != nil {
		return "tune-" + iface + ".json"
	}
	if unix.Stat("/proc/1/ns/net", &init) == nil && init.Ino == self.Ino && init.Dev == self.Dev {
		return "tune-" + iface + ".json"
	}
	return "tune-" + iface + ":net" + strconv.FormatUint(self.Ino, 10) + ".json"
}

// Acquire takes iface's lock, waiting up to wait for a holder to let go; then it fails
// with a *LockError naming the holder. (The lock is the interface's, not the store's:
// every state directory shares it.)
func (s Store) Acquire(iface string, wait time.Duration) (*Lock, error) {
	key := ifaceKey(iface)
	p := filepath.Join(LockDir(), key+".lock")
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
			holder := holderOf(p)
			f.Close()
			return nil, &LockError{Path: p, Holder: holder, Waited: wait}
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Who holds it, for the message another run gives.
	f.Truncate(0)
	f.WriteAt([]byte("pid "+strconv.Itoa(os.Getpid())+": "+strings.Join(os.Args, " ")+", since "+time.Now().Format("15:04:05")+"\n"), 0)
	return &Lock{f: f, key: key}, nil
}

func holderOf(p string) string {
	b, _ := readall.File(p, readall.MaxSys)
	if h := strings.TrimSpace(string(b)); h != "" {
		return h
	}
	return "holder unknown"
}

// Release lets the lock go.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	// When it was let go: a link event the kernel reports a moment later is still the
	// holder's (see Excuse).
	l.f.Truncate(0)
	l.f.WriteAt([]byte(releasedPrefix+time.Now().Format(time.RFC3339Nano)+"\n"), 0)
	unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	l.f.Close()
	l.f = nil
}

// Busy says who is changing iface now ("": nobody): a link that bounces while another
// linerate holds the interface's lock is that command's doing (linerate watch and the
// stability step take it so).
func Busy(iface string) string {
	p := filepath.Join(LockDir(), ifaceKey(iface)+".lock")
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		return holderOf(p)
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return ""
}

const releasedPrefix = "released at "

// excuseGrace is how long after a command let an interface go a link event is still
// taken as its doing: the kernel reports the carrier a moment after the command saw it.
const excuseGrace = 3 * time.Second

// Excuse is a link watcher's question, for iface: was linerate changing the port at t
// (holding its lock, or having let it go within excuseGrace)? It answers with who, or
// "" when nobody was.
func Excuse(iface string) func(t time.Time) string {
	return func(t time.Time) string {
		if h := Busy(iface); h != "" {
			return "linerate was changing the port: " + h
		}
		h := holderOf(filepath.Join(LockDir(), ifaceKey(iface)+".lock"))
		if at, ok := strings.CutPrefix(h, releasedPrefix); ok {
			if r, err := time.Parse(time.RFC3339Nano, at); err == nil && t.Sub(r) < excuseGrace && t.After(r.Add(-time.Second)) {
				return "linerate changed the port until " + r.Format("15:04:05.000")
			}
		}
		return ""
	}
}

// journalsFile lists, per interface, the journals of every state directory that hold
// changes of it, so that a command in one directory sees what another left.
func journalsFile(key string) string { return filepath.Join(LockDir(), key+".journals") }

func listJournals(key string) []string {
	f, err := os.Open(journalsFile(key))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

func writeJournals(key string, list []string) {
	if len(list) == 0 {
		os.Remove(journalsFile(key))
		return
	}
	os.WriteFile(journalsFile(key), []byte(strings.Join(list, "\n")+"\n"), 0o644)
}

// noteJournal records (or, with gone, forgets) that path journals iface's changes. A
// list that already says so is left as it is: a journal saved again (each tune saves
// its journal before its writes and after them) rewrites nothing.
func noteJournal(iface, path string, gone bool) {
	key := ifaceKey(iface)
	had := listJournals(key)
	if slices.Contains(had, path) != gone {
		return
	}
	list := slices.DeleteFunc(had, func(p string) bool { return p == path })
	if !gone {
		list = append(list, path)
	}
	writeJournals(key, list)
}

// Pending is, under the lock, why iface must not be changed now: a journal, in any state
// directory, of a change that did not finish (a sweep or PHY loopback test that was
// killed, a tune cut off mid-way) holds values that are not the user's. It names the
// command that gives them back. Revert does not ask.
func (l *Lock) Pending(iface string) error {
	var keep []string
	var bad error
	for _, p := range listJournals(l.key) {
		j, err := loadJournal(p)
		if err != nil || j == nil {
			continue // gone: forget it
		}
		keep = append(keep, p)
		if bad != nil || (j.Complete && !j.temporary()) {
			continue
		}
		what := "a tune that did not finish"
		if j.temporary() {
			what = "a " + strings.Join(j.Profiles, ", ") + " that did not finish"
		}
		cmd := "linerate revert " + iface
		if d := filepath.Dir(p); d != DefaultStateDir() {
			cmd += " --state-dir " + d
		}
		bad = &PendingError{Iface: iface, Journal: p, What: what, Command: cmd}
	}
	writeJournals(l.key, keep)
	return bad
}

// PendingError is an interface that holds values of a change that did not finish.
type PendingError struct {
	Iface, Journal, What, Command string
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("%s holds values of %s (journal %s): run '%s' first", e.Iface, e.What, e.Journal, e.Command)
}
