package engine

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestPlanReflectors: each port's reflector in the kernel where the probe attaches one;
// where it does not, the log says why and the port gets a real-time thread, on a CPU of
// its own where the machine has them to spare (the kept CPUs go to the threads only).
func TestPlanReflectors(t *testing.T) {
	probe := func(name string) error {
		if name == "eth2" {
			return errors.New("attach at TC ingress (TCX, Linux 6.6+): invalid argument")
		}
		return nil
	}
	for _, tc := range []struct {
		spare []int // what keep gives for the threads
		want  [][]string
	}{
		{nil, [][]string{
			{"reflect", "eth1", "--bpf", "--duration", "1m0s", "--json"},
			{"reflect", "eth2", "--realtime", "on", "--duration", "1m0s", "--json"},
			{"reflect", "eth3", "--bpf", "--duration", "1m0s", "--json"},
		}},
		{[]int{7}, [][]string{
			{"reflect", "eth1", "--bpf", "--duration", "1m0s", "--json"},
			{"reflect", "eth2", "--realtime", "7", "--duration", "1m0s", "--json"},
			{"reflect", "eth3", "--bpf", "--duration", "1m0s", "--json"},
		}},
	} {
		var logged []string
		var asked int
		keep := func(n, leave int) ([]int, error) {
			asked = n
			if leave != 2 {
				t.Errorf("keep leaves %d CPUs to the station, want 2", leave)
			}
			return tc.spare, nil
		}
		args, kept, err := planReflectors([]string{"eth1", "eth2", "eth3"}, time.Minute, probe, keep, func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) })
		if err != nil || !reflect.DeepEqual(args, tc.want) || !reflect.DeepEqual(kept, tc.spare) || asked != 1 {
			t.Errorf("spare %v: %v, kept %v, %v (keep asked for %d)", tc.spare, args, kept, err, asked)
		}
		if len(logged) != 1 || !strings.HasPrefix(logged[0], "reflector on eth2: not in the kernel (attach at TC ingress") || !strings.HasSuffix(logged[0], "): on a thread") {
			t.Errorf("log: %q", logged)
		}
	}
	if _, _, err := planReflectors([]string{"eth1"}, time.Minute, probe, func(int, int) ([]int, error) { return nil, errors.New("sched_getaffinity: no") }, t.Logf); err == nil {
		t.Error("keep's error was lost")
	}
}
