package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestWrite(t *testing.T) {
	p := filepath.Join(t.TempDir(), "j.json")
	for _, s := range []string{"one", "two"} {
		if err := Write(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != s {
			t.Errorf("content %q, want %q", b, s)
		}
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	if err := Write(filepath.Join(t.TempDir(), "no/such/dir/f"), nil, 0o644); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

// TestWriteNeverReplacesWhatIsNotAFile: a FIFO and a device node are written into and
// stay what they were; a link is refused and its target left alone; so is a directory.
func TestWriteNeverReplacesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(fifo, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "nobody reads") {
		t.Errorf("a FIFO without a reader: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	var err error
	for i := 0; i < 100; i++ { // until the reader has opened its end
		if err = Write(fifo, []byte("through the fifo"), 0o644); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil || <-got != "through the fifo" {
		t.Errorf("FIFO with a reader: %v", err)
	}
	if fi, _ := os.Lstat(fifo); fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v", fi.Mode())
	}
	if os.Geteuid() == 0 {
		null := filepath.Join(dir, "null")
		if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatal(err)
		}
		if err := Write(null, []byte("gone"), 0o644); err != nil {
			t.Errorf("a device node: %v", err)
		}
		if fi, _ := os.Lstat(null); fi.Mode()&fs.ModeCharDevice == 0 {
			t.Errorf("the device node was replaced: %v", fi.Mode())
		}
	}
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	if err := Write(link, []byte("new"), 0o644); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a link: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
	if err := Write(dir, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("a directory: %v", err)
	}
}
