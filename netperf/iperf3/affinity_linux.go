package iperf3

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// SetAffinity pins the whole process to one CPU, as iperf3's -A does: every thread
// it has now (sched_setaffinity is per thread), and so every thread they start.
func SetAffinity(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("set CPU affinity: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("unable to set CPU affinity to CPU %d: %w", cpu, err)
		}
	}
	return nil
}
