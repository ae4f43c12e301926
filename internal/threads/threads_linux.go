// Package threads sets the CPUs of every thread of this process: sched_setaffinity is
// per thread, and a Go process has several; a thread made later inherits its maker's.
package threads

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// SetAll gives every thread of the process the CPUs of set. A thread that ended while
// the walk ran is skipped.
func SetAll(set *unix.CPUSet) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("thread %d: sched_setaffinity: %w", tid, err)
		}
	}
	return nil
}
