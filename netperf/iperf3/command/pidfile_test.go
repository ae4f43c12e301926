package command

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPidfile: -I writes the pid alone (no newline, as iperf3) and removes it at the
// end; a file naming a live process refuses the start, a stale one is taken over; what
// is not a regular file is refused and left as it was; a file another process claimed
// meanwhile is not removed.
func TestPidfile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "iperf3.pid")
	remove, err := createPidfile(p)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != strconv.Itoa(os.Getpid()) {
		t.Errorf("pid file holds %q; want %d and no newline", b, os.Getpid())
	}
	remove()
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("pid file left after the end: %v", err)
	}

	// A stale pid (no such process) is taken over; a live one (pid 1) refuses.
	os.WriteFile(p, []byte("2147483646\n"), 0o644)
	if remove, err = createPidfile(p); err != nil {
		t.Errorf("stale pid file refused: %v", err)
	} else {
		remove()
	}
	os.WriteFile(p, []byte("1"), 0o644)
	if _, err := createPidfile(p); err == nil || !strings.Contains(err.Error(), "another instance of iperf3 appears to be running (pid 1 in "+p) {
		t.Errorf("pid file of a live process: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "1" {
		t.Errorf("refused pid file rewritten: %q", b)
	}

	// Ours, then claimed by another: not removed at our end.
	os.Remove(p)
	remove, _ = createPidfile(p)
	os.WriteFile(p, []byte("1"), 0o644)
	remove()
	if b, _ := os.ReadFile(p); string(b) != "1" {
		t.Errorf("another's pid file removed or changed: %q", b)
	}

	// Not regular files: refused by kind, left as they were.
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o644)
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	for path, want := range map[string]string{"/dev/null": "a device", fifo: "a FIFO", link: "a symbolic link", dir: "a directory"} {
		before, _ := os.Lstat(path)
		done := make(chan error, 1)
		go func() { _, err := createPidfile(path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "-I "+path+" is "+want+", not a regular file") {
				t.Errorf("-I %s: %v; want it refused as %s", path, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("-I %s: still waiting after 5 s", path)
		}
		if after, err := os.Lstat(path); err != nil || after.Mode() != before.Mode() {
			t.Errorf("-I %s: it changed: %v %v", path, after.Mode(), err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("a link's target written through: %q", b)
	}

	// Through the command: iperf3's words and status.
	var stdout, stderr bytes.Buffer
	err = Run(context.Background(), []string{"-s", "-1", "-I", "/dev/null"}, &stdout, &stderr, "test")
	if err == nil || stderr.String() != "iperf3: error - -I /dev/null is a device, not a regular file: give the path of a pid file of its own\n" {
		t.Errorf("iperf3 -s -I /dev/null: %v, stderr %q", err, stderr.String())
	}
}
