package nic

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHostileTreeFiles: a captured tree (show --root, a snapshot) is anyone's; a FIFO in
// place of a sysfs file is refused at once, not waited on for ever, and a file larger
// than any sysfs or procfs file is refused, not read whole.
func TestHostileTreeFiles(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sys/class/net/eth0")
	os.MkdirAll(dir, 0o755)
	if err := syscall.Mkfifo(filepath.Join(dir, "mtu"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Create(filepath.Join(dir, "speed"))
	f.Truncate(64 << 20) // sparse: 64 MiB of zeros on no disk
	f.Close()
	done := make(chan error, 2)
	go func() {
		_, err := ReadFile(root, "sys/class/net/eth0/mtu")
		done <- err
	}()
	go func() {
		_, err := fsRoot{root: root}.readFile("sys/class/net/eth0/speed")
		done <- err
	}()
	for i := 0; i < 2; i++ {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") && !strings.Contains(err.Error(), "larger than") {
				t.Errorf("a hostile file read: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a read of a FIFO in a captured tree blocked")
		}
	}
}
