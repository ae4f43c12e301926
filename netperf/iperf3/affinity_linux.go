package iperf3

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/zynqnet/linerate/internal/threads"
)

// SetAffinity pins the whole process to one CPU, as iperf3's -A does: every thread
// it has now (sched_setaffinity is per thread), and so every thread they start.
// restore gives every thread the process then has the CPUs it had before: a server
// pins for one test (the client's -A n,m), not for every later one nor for what else
// runs in the process (linerate station's HTTP server).
func SetAffinity(cpu int) (restore func() error, err error) {
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("unable to read the CPU affinity: %w", err)
	}
	set.Set(cpu)
	if err := threads.SetAll(&set); err != nil {
		threads.SetAll(&old)
		return nil, fmt.Errorf("unable to set CPU affinity to CPU %d: %w", cpu, err)
	}
	// One CPU, one P: with more, the Go scheduler's threads take turns on the one CPU
	// (and spin looking for work) where iperf3's single thread just runs.
	procs := runtime.GOMAXPROCS(1)
	return func() error {
		err := threads.SetAll(&old)
		runtime.GOMAXPROCS(procs)
		return err
	}, nil
}
