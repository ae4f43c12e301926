package rawsock

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/zynqnet/linerate/internal/threads"
)

// lockMemory locks the process's pages in RAM, those it has and those it will fault in.
// MCL_ONFAULT locks each page when first touched instead of making every mapping
// resident at once (the Go heap maps its arenas 64 MB at a time).
func lockMemory() error {
	if err := unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE | unix.MCL_ONFAULT); err != nil {
		return fmt.Errorf("mlockall: %w%s", err, needs(err, "CAP_IPC_LOCK"))
	}
	return nil
}

// setFIFO makes the calling thread SCHED_FIFO at RTPriority. The caller holds the
// thread (lockThread) and lets it end with its goroutine, never handing a real-time
// thread back to the Go scheduler's pool.
func setFIFO() error {
	attr := unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: RTPriority}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		return fmt.Errorf("sched_setattr SCHED_FIFO %d: %w%s", RTPriority, err, needs(err, "CAP_SYS_NICE"))
	}
	return nil
}

func needs(err error, capability string) string {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOMEM) {
		return " (needs root or " + capability + ")"
	}
	return ""
}

// realtimeNote says how the reflecting threads ran, from the process's memory lock and
// each thread's policy (nil: set).
func realtimeNote(rt Realtime, mem error, threads []error, cpus []int) string {
	if !rt.On {
		return ""
	}
	var b strings.Builder
	if rt.Busy {
		fmt.Fprintf(&b, "busy polling on CPU %s", cpuList(cpus))
	} else {
		var refused []string
		for _, err := range threads {
			if err != nil {
				refused = append(refused, err.Error())
			}
		}
		switch {
		case len(refused) == len(threads):
			fmt.Fprintf(&b, "not real-time: %s", refused[0])
		case len(refused) > 0:
			fmt.Fprintf(&b, "real-time (SCHED_FIFO %d) but %d of %d threads: %s", RTPriority, len(refused), len(threads), refused[0])
		default:
			fmt.Fprintf(&b, "real-time (SCHED_FIFO %d)", RTPriority)
		}
	}
	if mem != nil {
		fmt.Fprintf(&b, ", memory not locked: %v", mem)
	} else {
		b.WriteString(", memory locked")
	}
	return b.String()
}

func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// KeepCPUs picks n CPUs for n reflectors to have to themselves: the highest of those
// this process may run on, when at least leave others remain for the rest of the
// process's work; none (nil) when the machine has too few.
func KeepCPUs(n, leave int) ([]int, error) {
	all, err := CPUs(0)
	if err != nil || n <= 0 || len(all)-n < leave {
		return nil, err
	}
	return all[len(all)-n:], nil
}

// KeepOff moves every thread of this process off cpus, the CPUs kept for reflectors.
// Threads made later inherit their maker's CPUs, so they stay off too; the walk is
// repeated for threads made while it ran.
func KeepOff(cpus []int) error {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return fmt.Errorf("sched_getaffinity: %w", err)
	}
	for _, c := range cpus {
		set.Clear(c)
	}
	if set.Count() == 0 {
		return fmt.Errorf("keeping CPUs %s would leave this process none", cpuList(cpus))
	}
	for range 3 {
		if err := threads.SetAll(&set); err != nil {
			return fmt.Errorf("keep this process's threads off CPU %s: %w", cpuList(cpus), err)
		}
	}
	return nil
}
