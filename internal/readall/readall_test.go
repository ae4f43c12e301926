package readall

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestLimitAndFile(t *testing.T) {
	if b, err := Limit(strings.NewReader("abc"), 3); err != nil || string(b) != "abc" {
		t.Errorf("at the bound: %q %v", b, err)
	}
	var tl *TooLarge
	if _, err := Limit(strings.NewReader("abcd"), 3); !errors.As(err, &tl) || tl.Max != 3 {
		t.Errorf("over the bound: %v", err)
	}
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("hello"), 0o644)
	if b, err := File(p, 10); err != nil || string(b) != "hello" {
		t.Errorf("file: %q %v", b, err)
	}
	if _, err := File(p, 2); !errors.As(err, &tl) || !strings.Contains(err.Error(), p) {
		t.Errorf("large file: %v", err)
	}
	if _, err := File("/dev/zero", 10); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("/dev/zero: %v", err)
	}
	if _, err := File(t.TempDir(), 10); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
	// A FIFO nobody writes to is refused at once, not waited on (a plain open blocks).
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := File(fifo, 10); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("File blocked on a FIFO with no writer")
	}
}

// TestFileReadsAsOsReadFile: File gives what os.ReadFile gives, for files around its
// first buffer's size and at the bound, and for the kernel's own files (sysfs says a
// page, procfs 0, whatever they hold); a missing file is fs.ErrNotExist with its path.
func TestFileReadsAsOsReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 512, 513, 1024, 4095, 4096, 4097, 100_000} {
		p := filepath.Join(dir, "f")
		want := make([]byte, n)
		for i := range want {
			want[i] = byte(i*7 + n)
		}
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := File(p, int64(n)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes at a bound of %d: %d bytes back, %v", n, n, len(got), err)
		}
		var tl *TooLarge
		if _, err := File(p, int64(n)-1); n > 0 && !errors.As(err, &tl) {
			t.Errorf("%d bytes at a bound of %d: %v, want TooLarge", n, n-1, err)
		}
	}
	for _, p := range []string{"/proc/sys/kernel/osrelease", "/proc/filesystems", "/proc/self/limits", "/sys/class/net/lo/address", "/sys/class/net/lo/mtu"} {
		want, err := os.ReadFile(p)
		if err != nil {
			t.Logf("%s: %v", p, err)
			continue
		}
		if got, err := File(p, MaxSys); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %q, %v; os.ReadFile says %q", p, got, err, want)
		}
	}
	missing := filepath.Join(dir, "missing")
	if _, err := File(missing, 10); !errors.Is(err, fs.ErrNotExist) || !os.IsNotExist(err) || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing file: %v", err)
	}
}

// TestKernelReadsAsOsReadFile: Kernel reads the live kernel's files as os.ReadFile does,
// one page or many (a seq_file of several pages, a binary attribute), within its bound;
// a directory and a missing file are errors.
func TestKernelReadsAsOsReadFile(t *testing.T) {
	paths := []string{"/proc/sys/kernel/osrelease", "/proc/filesystems", "/proc/self/limits", "/proc/crypto", "/proc/self/mountinfo", "/sys/class/net/lo/address", "/sys/class/net/lo/mtu", "/sys/kernel/notes"}
	if cfg, _ := filepath.Glob("/sys/bus/pci/devices/*/config"); len(cfg) > 0 {
		paths = append(paths, cfg[0])
	}
	read := 0
	for _, p := range paths {
		want, err := os.ReadFile(p)
		if err != nil {
			t.Logf("%s: %v", p, err)
			continue
		}
		if got, err := Kernel(p, MaxSys); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v; os.ReadFile says %d bytes", p, len(got), err, len(want))
		}
		if len(want) > 1 {
			var tl *TooLarge
			if _, err := Kernel(p, int64(len(want))-1); !errors.As(err, &tl) {
				t.Errorf("%s (%d bytes) at a bound of %d: %v, want TooLarge", p, len(want), len(want)-1, err)
			}
		}
		read++
	}
	if read < 6 {
		t.Errorf("only %d of the kernel's files could be read", read)
	}
	if b, _ := os.ReadFile("/proc/crypto"); len(b) <= 4096 {
		t.Logf("/proc/crypto is %d bytes: no file of several pages was read", len(b))
	}
	if _, err := Kernel("/sys/class/net", MaxSys); err == nil {
		t.Error("a directory was read")
	}
	if _, err := Kernel("/sys/class/net/linerate-no-such-port/mtu", MaxSys); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
