package nic

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/zynqnet/linerate/internal/readall"
)

// fsRoot is the one way nic touches files: every read is under root and, when rec is set,
// recorded so that a snapshot holds exactly what was read (and nothing the reader did not
// look at). Recorded paths are real paths under root; each symlink passed on the way is
// recorded with a target rewritten to stay inside the tree, so the recorded tree reads
// back through the same code.
type fsRoot struct {
	root string
	rec  *Recorder
}

func (r fsRoot) path(p string) string { return filepath.Join(r.root, p) }

// live says r reads this machine's own tree as it is: under "/", not recording (a
// recording keeps every symlink and file it passes, which the kernel's own answers
// would skip).
func (r fsRoot) live() bool { return r.rec == nil && filepath.Clean(r.root) == "/" }

// readFileUnder reads p under root: a file of the live kernel's sysfs or procfs with
// readall.Kernel (no question of what it is: those trees hold no FIFO or device, a
// process's fd links aside, never read here), any other with readall.File.
func readFileUnder(root, p string) ([]byte, error) {
	full := filepath.Join(root, p)
	if filepath.Clean(root) == "/" && (strings.HasPrefix(full, "/sys/") || strings.HasPrefix(full, "/proc/")) && !strings.Contains(full, "/fd/") {
		return readall.Kernel(full, readall.MaxSys)
	}
	return readall.File(full, readall.MaxSys)
}

// Recorder collects what an fsRoot read.
type Recorder struct {
	mu    sync.Mutex
	files map[string][]byte
	dirs  map[string]bool
	links map[string]string
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{files: map[string][]byte{}, dirs: map[string]bool{}, links: map[string]string{}}
}

// RecordedEntry is one thing a Recorder saw: a file with its content, a directory, or a
// symlink with its (relative) target.
type RecordedEntry struct {
	Path   string
	Kind   byte // 'f', 'd' or 'l'
	Data   []byte
	Target string
}

// Entries lists what was recorded, directories first, each group sorted by path.
func (rec *Recorder) Entries() []RecordedEntry {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []RecordedEntry
	for p := range rec.dirs {
		out = append(out, RecordedEntry{Path: p, Kind: 'd'})
	}
	for p, t := range rec.links {
		out = append(out, RecordedEntry{Path: p, Kind: 'l', Target: t})
	}
	for p, d := range rec.files {
		out = append(out, RecordedEntry{Path: p, Kind: 'f', Data: d})
	}
	order := map[byte]int{'d': 0, 'f': 1, 'l': 2}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return order[out[i].Kind] < order[out[j].Kind]
		}
		return out[i].Path < out[j].Path
	})
	return out
}

func (rec *Recorder) addDir(p string) {
	rec.mu.Lock()
	rec.dirs[p] = true
	rec.mu.Unlock()
}

// real resolves p under root component by component, recording each symlink it passes,
// and returns the real path relative to root. A link that would lead outside root is
// not followed.
func (r fsRoot) real(p string) string {
	parts := strings.Split(filepath.Clean(p), string(filepath.Separator))
	cur := ""
	for i, hops := 0, 0; i < len(parts); i++ {
		if parts[i] == "" || parts[i] == "." {
			continue
		}
		next := filepath.Join(cur, parts[i])
		fi, err := os.Lstat(r.path(next))
		if err != nil || fi.Mode()&os.ModeSymlink == 0 || hops > 40 {
			cur = next
			continue
		}
		target, err := os.Readlink(r.path(next))
		if err != nil {
			cur = next
			continue
		}
		var resolved string
		if filepath.IsAbs(target) {
			resolved = filepath.Clean(strings.TrimPrefix(target, "/"))
		} else {
			resolved = filepath.Join(cur, target)
		}
		if resolved == ".." || strings.HasPrefix(resolved, "../") {
			cur = next
			continue
		}
		if r.rec != nil {
			rel, err := filepath.Rel(cur, resolved)
			if err == nil {
				r.rec.mu.Lock()
				r.rec.links[next] = rel
				r.rec.mu.Unlock()
			}
		}
		hops++
		parts = append(strings.Split(resolved, string(filepath.Separator)), parts[i+1:]...)
		cur, i = "", -1
	}
	return cur
}

// readFile reads a file under root.
func (r fsRoot) readFile(p string) ([]byte, error) {
	if r.rec == nil {
		return readFileUnder(r.root, p)
	}
	real := r.real(p)
	b, err := readall.File(r.path(real), readall.MaxSys)
	if err == nil {
		r.rec.mu.Lock()
		r.rec.files[real] = b
		r.rec.mu.Unlock()
	}
	return b, err
}

// readDir lists a directory under root; recorded, its subdirectories exist in a snapshot
// even when nothing in them was read.
func (r fsRoot) readDir(p string) ([]fs.DirEntry, error) {
	if r.rec == nil {
		return os.ReadDir(r.path(p))
	}
	real := r.real(p)
	ents, err := os.ReadDir(r.path(real))
	if err == nil {
		r.rec.addDir(real)
		for _, e := range ents {
			if e.IsDir() {
				r.rec.addDir(filepath.Join(real, e.Name()))
			}
		}
	}
	return ents, err
}

// exists reports whether p exists under root (following links), recording a directory.
func (r fsRoot) exists(p string) (bool, error) {
	real := p
	if r.rec != nil {
		real = r.real(p)
	}
	fi, err := os.Stat(r.path(real))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	if r.rec != nil && fi.IsDir() {
		r.rec.addDir(real)
	}
	return true, nil
}

// resolve returns the real path of p relative to root (filepath.EvalSymlinks confined to
// root), recording the links on the way. The live tree's paths the kernel resolves
// itself (resolveLive): a sysfs path passes three or four links, and the walk asks
// about every part of the way again after each, some 25 calls where the kernel's answer
// takes three.
func (r fsRoot) resolve(p string) (string, error) {
	if r.live() {
		if real, ok, err := resolveLive(p); ok {
			return real, err
		}
	}
	real := r.real(p)
	if _, err := os.Stat(r.path(real)); err != nil {
		return "", err
	}
	return real, nil
}

// readlink reads a symlink's target as it is (/proc/PID/fd/N -> socket:[inode]).
func (r fsRoot) readlink(p string) (string, error) {
	t, err := os.Readlink(r.path(p))
	if err == nil && r.rec != nil && !filepath.IsAbs(t) {
		real := filepath.Join(r.real(filepath.Dir(p)), filepath.Base(p))
		r.rec.mu.Lock()
		r.rec.links[real] = t
		r.rec.mu.Unlock()
	}
	return t, err
}
