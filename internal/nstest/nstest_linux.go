// Package nstest gives tests their own network namespaces with veth pairs, and runs code
// inside them as `ip netns exec` would: the network namespace, plus a private mount
// namespace with a fresh sysfs, so /sys/class/net shows that namespace's interfaces.
package nstest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// NS is a named network namespace made for one test.
type NS struct {
	Name   string
	Handle netns.NsHandle
}

// Require skips the test, saying why, where the kernel or user cannot make namespaces.
func Require(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces (CI runs as root)")
	}
	if _, err := os.Stat("/proc/self/ns/net"); err != nil {
		t.Skipf("no network namespaces on this kernel: %v", err)
	}
}

// New creates a named namespace (visible to `ip netns exec`) removed at cleanup.
func New(t testing.TB) *NS {
	t.Helper()
	Require(t)
	b := make([]byte, 4)
	rand.Read(b)
	name := "lrt-" + hex.EncodeToString(b)
	type res struct {
		h   netns.NsHandle
		err error
	}
	ch := make(chan res)
	go func() {
		// Creating a namespace moves the calling thread into it: do it on a thread that is
		// thrown away afterwards.
		runtime.LockOSThread()
		h, err := netns.NewNamed(name)
		ch <- res{h, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Skipf("cannot create a network namespace: %v", r.err)
	}
	ns := &NS{Name: name, Handle: r.h}
	t.Cleanup(func() {
		ns.Handle.Close()
		netns.DeleteNamed(name)
	})
	// Loopback up, as ip netns add leaves it down but tests expect it. IPv6 off for links
	// made from here on, so no DAD or MLD traffic moves counters between two reads.
	ns.Do(t, func() error {
		if err := os.WriteFile("/proc/sys/net/ipv6/conf/default/disable_ipv6", []byte("1"), 0); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("disable IPv6 in %s: %w", name, err)
		}
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			return err
		}
		return netlink.LinkSetUp(lo)
	})
	return ns
}

// Veth creates a veth pair a (here) and b (in peer, or here when peer is nil), both up.
// queues sets the number of rx and tx queues of each end (0: the kernel's default).
func (ns *NS) Veth(t testing.TB, a, b string, peer *NS, queues int) {
	t.Helper()
	ns.Do(t, func() error {
		v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a, NumRxQueues: queues, NumTxQueues: queues}, PeerName: b}
		if queues > 0 {
			v.PeerNumRxQueues, v.PeerNumTxQueues = uint32(queues), uint32(queues)
		}
		if err := netlink.LinkAdd(v); err != nil {
			return fmt.Errorf("add veth %s/%s: %w", a, b, err)
		}
		pb, err := netlink.LinkByName(b)
		if err != nil {
			return err
		}
		if peer != nil {
			if err := netlink.LinkSetNsFd(pb, int(peer.Handle)); err != nil {
				return err
			}
		} else if err := netlink.LinkSetUp(pb); err != nil {
			return err
		}
		la, err := netlink.LinkByName(a)
		if err != nil {
			return err
		}
		return netlink.LinkSetUp(la)
	})
	if peer != nil {
		peer.Do(t, func() error {
			l, err := netlink.LinkByName(b)
			if err != nil {
				return err
			}
			return netlink.LinkSetUp(l)
		})
	}
}

// Run runs fn on an OS thread inside the namespace with its own sysfs mounted on /sys.
// The thread is never returned to the scheduler: it ends with fn. fn must not call
// t.Fatal (it is not the test goroutine): return an error instead.
func (ns *NS) Run(fn func() error) error {
	ch := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		// No UnlockOSThread: the thread has left the process's namespaces and dies with
		// this goroutine.
		defer func() {
			if p := recover(); p != nil {
				ch <- fmt.Errorf("panic in namespace %s: %v", ns.Name, p)
			}
		}()
		if err := enter(ns.Handle); err != nil {
			ch <- fmt.Errorf("enter namespace %s: %w", ns.Name, err)
			return
		}
		ch <- fn()
	}()
	return <-ch
}

// Do is Run that fails the test on error.
func (ns *NS) Do(t testing.TB, fn func() error) {
	t.Helper()
	if err := ns.Run(fn); err != nil {
		t.Fatal(err)
	}
}

func enter(h netns.NsHandle) error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("unshare mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := netns.Set(h); err != nil {
		return fmt.Errorf("setns: %w", err)
	}
	unix.Unmount("/sys", unix.MNT_DETACH)
	if err := unix.Mount("sysfs", "/sys", "sysfs", 0, ""); err != nil {
		return fmt.Errorf("mount sysfs: %w", err)
	}
	return nil
}

// Exec runs a command inside the namespace (ip netns exec) and returns its stdout; the
// error carries stderr.
func (ns *NS) Exec(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := ns.Try(name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Try is Exec that returns the error.
func (ns *NS) Try(name string, args ...string) (string, error) {
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns.Name, name}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("ip netns exec %s %s %s: %v: %s", ns.Name, name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// NeedTool skips the test when a reference tool is missing (make test installs them).
func NeedTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; make test installs it (apt-get)", name)
		}
		t.Skipf("%s is not installed; make test installs it", name)
	}
}

// Inode is the namespace's identity (the inode of its net namespace file), as linerate
// names per-namespace state with it.
func (n *NS) Inode(t testing.TB) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(int(n.Handle), &st); err != nil {
		t.Fatalf("namespace %s: %v", n.Name, err)
	}
	return st.Ino
}
