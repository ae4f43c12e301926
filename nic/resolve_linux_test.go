package nic

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestResolveLiveAsTheWalk: on the live tree the kernel's answer (resolveLive) is the
// path the walk finds, link by link, for sysfs and procfs paths that pass links (a
// class's device, a port's, /proc/self), and a missing path is an error of not there.
func TestResolveLiveAsTheWalk(t *testing.T) {
	r := fsRoot{root: "/"}
	if !r.live() || (fsRoot{root: "/tmp"}).live() || (fsRoot{root: "/", rec: NewRecorder()}).live() {
		t.Fatal("live: only / unrecorded is the live tree")
	}
	paths := []string{"sys/class/net/lo", "sys/class/net/lo/subsystem", "sys/class/net", "proc/self", "proc/self/net", "sys/devices/system/cpu/cpu0"}
	if ents, err := os.ReadDir("/sys/class/net"); err == nil {
		for _, e := range ents {
			paths = append(paths, filepath.Join("sys/class/net", e.Name()), filepath.Join("sys/class/net", e.Name(), "device"), filepath.Join("sys/class/net", e.Name(), "device/driver"))
		}
	}
	checked := 0
	for _, p := range paths {
		want := r.real(p)
		_, werr := os.Stat(r.path(want))
		got, ok, err := resolveLive(p)
		if !ok {
			t.Fatalf("%s: /proc could not say where it is", p)
		}
		if werr != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: the walk finds nothing (%v), the kernel says %q, %v", p, werr, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%s: the kernel says %q (%v), the walk %q", p, got, err, want)
		}
		if res, err := r.resolve(p); err != nil || res != want {
			t.Errorf("%s: resolve says %q (%v), want %q", p, res, err, want)
		}
		checked++
	}
	if checked < 6 {
		t.Errorf("only %d paths were there to compare", checked)
	}
	if _, err := r.resolve("sys/class/net/linerate-no-such-port/device"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing port: %v, want not exist", err)
	}
}

// TestProcessRunningByExecutable: on the live tree a process is found by its
// executable's name (a copy of sleep named linerate-irqb here), and no longer once it
// has ended; kernel threads are passed over; a captured tree's by their comm.
func TestProcessRunningByExecutable(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "linerate-irqb")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	r := fsRoot{root: "/"}
	if r.processRunning("linerate-irqb") {
		t.Fatal("linerate-irqb runs before it was started")
	}
	cmd := exec.Command(exe, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	found := false
	for deadline := time.Now().Add(5 * time.Second); !found && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		found = r.processRunning("linerate-irqb")
	}
	if !found {
		t.Fatal("a running linerate-irqb was not found")
	}
	if r.processRunning("kthreadd") {
		t.Error("kthreadd, a kernel thread (no executable), was found: kernel threads are passed over")
	}
	// A captured tree has no executables: its processes are known by their comm.
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "proc/321"), 0o755)
	os.WriteFile(filepath.Join(root, "proc/321/comm"), []byte("irqbalance\n"), 0o644)
	if !(fsRoot{root: root}).processRunning("irqbalance") || (fsRoot{root: root}).processRunning("linerate-irqb") {
		t.Error("a captured tree's processes are not known by their comm")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if r.processRunning("linerate-irqb") {
		t.Error("linerate-irqb is found after it ended")
	}
}
