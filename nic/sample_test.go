package nic

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
)

// driverStatsKernel answers the driver's counters alone (DriverStatsReader), counting
// the questions, and refuses the whole ethtool question: SampleCounters must not ask it.
type driverStatsKernel struct {
	Kernel
	alone int
}

func (k *driverStatsKernel) DriverStats(iface string) (Counters, error) {
	k.alone++
	et, err := k.Kernel.Ethtool(iface)
	if err != nil {
		return nil, err
	}
	return et.DriverStats, nil
}

func (k *driverStatsKernel) Ethtool(string) (*EthtoolAnswer, error) {
	return nil, errors.New("the whole ethtool question was asked")
}

// TestSampleCounters: a counters sample holds of each port what the whole sample holds
// of its counters (link and driver counters, IRQs), and softnet's and the CPUs' times
// alike, on both captured trees; where the kernel reads the driver's counters alone it
// asks nothing else of ethtool; a port that is not there is an error naming it.
func TestSampleCounters(t *testing.T) {
	for fx, port := range map[string]string{"zynq7000-gem": "eth0", "pcie-igb": "enp3s0f0"} {
		root := filepath.Join("../testdata/show", fx)
		k, err := OpenCaptured(root)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := (&Reader{Root: root, Kernel: k}).Sample(port)
		if err != nil {
			t.Fatal(err)
		}
		alone := &driverStatsKernel{Kernel: k}
		for _, kern := range []Kernel{k, alone} {
			got, err := (&Reader{Root: root, Kernel: kern}).SampleCounters(port)
			if err != nil {
				t.Fatalf("%s: %v", fx, err)
			}
			w, g := whole.Interfaces[0], got.Interfaces[0]
			if len(got.Interfaces) != 1 || g.Name != port || g.Index != w.Index || g.MAC != w.MAC ||
				!reflect.DeepEqual(g.Stats, w.Stats) || !reflect.DeepEqual(g.IRQs, w.IRQs) {
				t.Errorf("%s: counters %+v\nwhole sample's %+v", fx, g, w)
			}
			if len(w.Stats.Driver) == 0 || len(w.IRQs) == 0 {
				t.Errorf("%s: the fixture has no driver counters or IRQs: the test proves nothing", fx)
			}
			if !reflect.DeepEqual(got.Softnet, whole.Softnet) || !reflect.DeepEqual(got.CPUTimes, whole.CPUTimes) || len(got.CPUTimes) == 0 {
				t.Errorf("%s: softnet %v cpu %v, whole sample's %v %v", fx, got.Softnet, got.CPUTimes, whole.Softnet, whole.CPUTimes)
			}
		}
		if alone.alone != 1 {
			t.Errorf("%s: the driver's counters were asked alone %d times, want 1", fx, alone.alone)
		}
		var nf *NotFoundError
		if _, err := (&Reader{Root: root, Kernel: k}).SampleCounters("eth9"); !errors.As(err, &nf) || nf.Name != "eth9" {
			t.Errorf("%s: a missing port: %v", fx, err)
		}
	}
}
