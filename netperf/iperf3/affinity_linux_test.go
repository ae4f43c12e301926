package iperf3

import (
	"context"
	"net"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadMasks is every thread's CPU set.
func threadMasks(t *testing.T) map[int]unix.CPUSet {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]unix.CPUSet{}
	for _, e := range tasks {
		tid, _ := strconv.Atoi(e.Name())
		var set unix.CPUSet
		if unix.SchedGetaffinity(tid, &set) == nil {
			out[tid] = set
		}
	}
	return out
}

// TestServerAffinityUndone: a client's -A n,m pins the server to CPU m for its test
// only: while the test runs every thread of the process is on that CPU, and when it
// ends every thread (those started meanwhile too) has the CPUs it had before.
func TestServerAffinityUndone(t *testing.T) {
	var orig unix.CPUSet
	if err := unix.SchedGetaffinity(0, &orig); err != nil {
		t.Fatal(err)
	}
	if orig.Count() < 2 {
		t.Skipf("this process may run on %d CPU: pinning changes nothing to see", orig.Count())
	}
	addr, _, _ := testServer(t, 10*time.Second)
	host, port, _ := net.SplitHostPort(addr)
	p, _ := strconv.Atoi(port)
	procs := runtime.GOMAXPROCS(0)
	during := make(chan map[int]unix.CPUSet, 1)
	go func() {
		time.Sleep(700 * time.Millisecond) // within the test's second and a half
		during <- threadMasks(t)
	}()
	c := &Client{Host: host, Port: p, Version: "test", Params: Params{Time: 1, Parallel: 2, Bandwidth: 1e6, ServerAffinity: 1, HasServerAffinity: true}}
	if _, err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for tid, set := range <-during {
		if set.Count() != 1 || !set.IsSet(1) {
			t.Errorf("during the test thread %d may run on %d CPUs; want CPU 1 alone", tid, set.Count())
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		wrong := 0
		for _, set := range threadMasks(t) {
			if set != orig {
				wrong++
			}
		}
		if wrong == 0 && runtime.GOMAXPROCS(0) == procs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the test %d threads still pinned, GOMAXPROCS %d (was %d); want what they had", wrong, runtime.GOMAXPROCS(0), procs)
		}
		time.Sleep(50 * time.Millisecond) // the server's end of the test
	}
}
