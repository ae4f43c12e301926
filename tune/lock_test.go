package tune

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testIface is a name no real port has, so the test's locks and journals in LockDir are
// its own.
func testIface(t *testing.T) string {
	name := fmt.Sprintf("lrt%d", os.Getpid()%100000)
	t.Cleanup(func() {
		os.Remove(LockDir() + "/" + ifaceKey(name) + ".lock")
		os.Remove(journalsFile(ifaceKey(name)))
	})
	return name
}

func TestBusyAndExcuse(t *testing.T) {
	iface := testIface(t)
	excuse := Excuse(iface)
	if Busy(iface) != "" || excuse(time.Now()) != "" {
		t.Fatal("busy before any lock")
	}
	l, err := StoreAt(t.TempDir()).Acquire(iface, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if h := Busy(iface); !strings.Contains(h, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("Busy under the lock: %q, want the holder", h)
	}
	if e := excuse(time.Now()); !strings.HasPrefix(e, "linerate was changing the port: pid ") {
		t.Errorf("excuse under the lock: %q", e)
	}
	if _, err := StoreAt(t.TempDir()).Acquire(iface, 100*time.Millisecond); !errors.As(err, new(*LockError)) {
		t.Errorf("a second lock from another state directory: %v, want a LockError", err)
	}
	released := time.Now()
	l.Release()
	if Busy(iface) != "" {
		t.Error("busy after the release")
	}
	// The kernel reports a carrier a moment after the holder saw it: still its doing.
	if e := excuse(released.Add(500 * time.Millisecond)); !strings.HasPrefix(e, "linerate changed the port until ") {
		t.Errorf("excuse just after the release: %q", e)
	}
	if e := excuse(released.Add(excuseGrace + time.Second)); e != "" {
		t.Errorf("excuse long after the release: %q", e)
	}
	if e := excuse(released.Add(-time.Minute)); e != "" {
		t.Errorf("excuse for an event before the lock: %q", e)
	}
}

// A temporary change left by a killed command in one state directory stops a change
// from another until it is reverted; a finished tune does not.
func TestPendingAcrossStateDirs(t *testing.T) {
	iface := testIface(t)
	a, b := StoreAt(t.TempDir()), StoreAt(t.TempDir())
	l, err := b.Acquire(iface, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := l.Pending(iface); err != nil {
		t.Fatalf("nothing journalled: %v", err)
	}
	done := &Journal{Format: JournalFormat, Iface: iface, Profiles: []string{"throughput"}, Complete: true, Entries: []Change{{Knob: "rings.rx", Old: "512", New: "4096"}}}
	if err := a.Save(done); err != nil {
		t.Fatal(err)
	}
	if err := l.Pending(iface); err != nil {
		t.Errorf("a finished tune is the user's choice, not pending: %v", err)
	}
	loop := &Journal{Format: JournalFormat, Iface: iface, Profiles: []string{"phy.bmcr test"}, Complete: true, Entries: []Change{{Knob: "phy.bmcr", Old: "0x1140", New: "0x4140", Temporary: true}}}
	if err := a.Save(loop); err != nil {
		t.Fatal(err)
	}
	var pe *PendingError
	if err := l.Pending(iface); !errors.As(err, &pe) || pe.Command != "linerate revert "+iface+" --state-dir "+a.Dir || !strings.Contains(err.Error(), "a phy.bmcr test that did not finish") {
		t.Fatalf("a killed loopback test: %v", err)
	}
	if err := a.Remove(iface); err != nil {
		t.Fatal(err)
	}
	if err := l.Pending(iface); err != nil {
		t.Errorf("after the revert: %v", err)
	}
	if got := listJournals(ifaceKey(iface)); len(got) != 0 {
		t.Errorf("journals still listed: %v", got)
	}
}

// TestRevertNamesPendingJournals: with no journal of its own in the state directory,
// revert says so and names the interface's journals in the directory's own
// directories (a killed sweep's), each with the command that undoes it.
func TestRevertNamesPendingJournals(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sweep"), 0o755)
	os.WriteFile(filepath.Join(dir, "sweep", journalName("eth0")), []byte("{}"), 0o644)
	_, err := Revert(context.Background(), nil, Store{Dir: dir}, "eth0")
	want := "nothing to revert for eth0: no journal in " + dir + "; pending elsewhere: " + filepath.Join(dir, "sweep", journalName("eth0")) +
		" (linerate revert eth0 --state-dir " + filepath.Join(dir, "sweep") + ")"
	if !errors.Is(err, ErrNothingToRevert) || err.Error() != want {
		t.Errorf("revert: %v\nwant %s", err, want)
	}
	if _, err := Revert(context.Background(), nil, Store{Dir: dir}, "eth1"); err == nil || strings.Contains(err.Error(), "pending") {
		t.Errorf("another interface: %v", err)
	}
}
