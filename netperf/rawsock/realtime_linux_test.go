package rawsock

import (
	"errors"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/zynqnet/linerate/internal/threads"
)

// TestRealtimeNote: what a reflector says of how it runs, for each outcome.
func TestRealtimeNote(t *testing.T) {
	perm := errors.New("sched_setattr SCHED_FIFO 10: operation not permitted (needs root or CAP_SYS_NICE)")
	mem := errors.New("mlockall: cannot allocate memory (needs root or CAP_IPC_LOCK)")
	for _, tc := range []struct {
		rt      Realtime
		mem     error
		threads []error
		cpus    []int
		want    string
	}{
		{Realtime{}, nil, []error{nil}, nil, ""},
		{Realtime{On: true}, nil, []error{nil}, nil, "real-time (SCHED_FIFO 10), memory locked"},
		{Realtime{On: true}, mem, []error{perm}, nil, "not real-time: " + perm.Error() + ", memory not locked: " + mem.Error()},
		{Realtime{On: true}, nil, []error{nil, perm}, []int{0, 1}, "real-time (SCHED_FIFO 10) but 1 of 2 threads: " + perm.Error() + ", memory locked"},
		{Realtime{On: true, Busy: true}, nil, []error{nil}, []int{3}, "busy polling on CPU 3, memory locked"},
	} {
		if got := realtimeNote(tc.rt, tc.mem, tc.threads, tc.cpus); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.rt, got, tc.want)
		}
	}
	if s := needs(unix.EPERM, "CAP_SYS_NICE"); s != " (needs root or CAP_SYS_NICE)" {
		t.Errorf("needs: %q", s)
	}
}

// TestKeepCPUs: CPUs are kept for reflectors only where enough remain for the rest, and
// KeepOff moves every thread of the process off them (restored after).
func TestKeepCPUs(t *testing.T) {
	all, err := CPUs(0)
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := KeepCPUs(1, len(all)); k != nil {
		t.Errorf("KeepCPUs(1, %d) on %d CPUs: %v, want none", len(all), len(all), k)
	}
	if len(all) < 2 {
		t.Skipf("%d CPU: none to keep", len(all))
	}
	k, err := KeepCPUs(1, len(all)-1)
	if err != nil || len(k) != 1 || k[0] != all[len(all)-1] {
		t.Fatalf("KeepCPUs(1, %d): %v %v, want [%d]", len(all)-1, k, err, all[len(all)-1])
	}
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := threads.SetAll(&before); err != nil {
			t.Errorf("restore: %v", err)
		}
	})
	if err := KeepOff(k); err != nil {
		t.Fatal(err)
	}
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &set); err == nil && set.IsSet(k[0]) {
			t.Errorf("thread %d may still run on kept CPU %d", tid, k[0])
		}
	}
	if err := KeepOff(all); err == nil {
		t.Error("KeepOff of every CPU: no error")
	}
}
