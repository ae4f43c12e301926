package rawsock

import (
	"fmt"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// CPUs picks n CPUs for n senders or receive rings from those this process may run on
// (sched_getaffinity, so a taskset or cgroup limit is kept), lowest first; n 0 is all
// of them.
func CPUs(n int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for c := 0; c < len(set)*64 && (n == 0 || len(cpus) < n); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if n > len(cpus) {
		return nil, fmt.Errorf("%d CPUs asked for, this process may run on %d (%v)", n, len(cpus), cpus)
	}
	return cpus, nil
}

// thread is a goroutine locked to its OS thread, optionally pinned to a CPU, that
// measures the CPU time the thread spends (RUSAGE_THREAD: user and system time of this
// thread alone, the send() and poll() work in the kernel included).
type thread struct{ start time.Duration }

// lockThread locks the calling goroutine to its thread and pins it to cpu (-1: not
// pinned). The caller defers unlock.
func lockThread(cpu int) (*thread, error) {
	runtime.LockOSThread()
	if cpu >= 0 {
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			runtime.UnlockOSThread()
			return nil, fmt.Errorf("pin a thread to CPU %d: %w", cpu, err)
		}
	}
	return &thread{start: threadCPU()}, nil
}

// used is the thread's CPU time since lockThread.
func (t *thread) used() time.Duration { return threadCPU() - t.start }

// unlock ends the lock. A pinned thread is not handed back to the scheduler's pool with
// its narrowed affinity: locked goroutines that end without unlocking take their thread
// with them, which is what a pinned one must do.
func (t *thread) unlock(pinned bool) {
	if !pinned {
		runtime.UnlockOSThread()
	}
}

func threadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
