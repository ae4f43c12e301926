package readall

import (
	"errors"
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
