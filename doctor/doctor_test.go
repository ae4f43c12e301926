package doctor

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/snapshot"
)

const (
	fixtures = "../testdata/show"
	captures = "../testdata/captures"
)

// capCache holds each capture's sample as JSON: extracted once, copied for each case.
var (
	capMu    sync.Mutex
	capCache = map[string][]byte{}
)

// read samples a fixture tree (testdata/show, see its README), or with "capture:BOARD"
// the second sample of a snapshot captured on the emulated board (testdata/captures).
func read(t *testing.T, fx string) *nic.Sample {
	t.Helper()
	if board, ok := strings.CutPrefix(fx, "capture:"); ok {
		capMu.Lock()
		defer capMu.Unlock()
		if capCache[board] == nil {
			_, after, _, err := snapshot.Samples(filepath.Join(captures, board+".tar.gz"), nil)
			if err != nil {
				t.Fatal(err)
			}
			capCache[board], _ = json.Marshal(after)
		}
		var s nic.Sample // a fresh copy for each case to change
		if err := json.Unmarshal(capCache[board], &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	root := filepath.Join(fixtures, fx)
	k, err := nic.OpenCaptured(root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := (&nic.Reader{Root: root, Kernel: k}).Sample()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func i64(v int64) *int64   { return &v }
func str(s string) *string { return &s }
func intp(v int) *int      { return &v }

// bump raises a driver counter in the after sample.
func bump(s *nic.Sample, name string, by uint64) {
	for i, c := range s.Interfaces[0].Stats.Driver {
		if c.Name == name {
			s.Interfaces[0].Stats.Driver[i].Value += by
			return
		}
	}
	panic("no counter " + name)
}

type ruleCase struct {
	id      string
	fixture string
	profile string
	board   string
	// trigger makes the rule fire; clear makes the same fixture not fire it.
	trigger, clear func(b, a *nic.Sample)
	sev            Severity
}

var ruleCases = []ruleCase{
	{id: "LINK_DOWN", fixture: "zynq7000-gem", sev: Fail,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Link.Carrier = false },
		clear:   func(b, a *nic.Sample) {}},
	{id: "LINK_SPEED_DOWNGRADED", fixture: "zynq7000-gem", sev: Fail,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Link.SpeedMbps = intp(100) },
		clear: func(b, a *nic.Sample) {
			// 100 Mb/s is right when the partner only does 100.
			a.Interfaces[0].Link.SpeedMbps = intp(100)
			a.Interfaces[0].Link.Partner = []string{"100baseT/Full", "Autoneg"}
		}},
	{id: "LINK_HALF_DUPLEX", fixture: "zynq7000-gem", sev: Fail,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Link.Duplex = str("half") },
		clear:   func(b, a *nic.Sample) {}},
	{id: "AUTONEG_OFF", fixture: "zynq7000-gem", sev: Warn,
		trigger: func(b, a *nic.Sample) { f := false; a.Interfaces[0].Link.Autoneg = &f },
		clear: func(b, a *nic.Sample) {
			f := false
			a.Interfaces[0].Link.Autoneg = &f
			a.Interfaces[0].Link.Supported = []string{"10000baseT/Full"} // cannot negotiate
		}},
	{id: "JUMBO_UNSUPPORTED_SOC", fixture: "zynq7000-gem", sev: Fail,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].MTU = 9000 },
		clear:   func(b, a *nic.Sample) {}},
	{id: "MTU_ABOVE_HW_MAX", fixture: "zynq7000-gem", sev: Fail,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].MTU = 1600 },
		clear:   func(b, a *nic.Sample) { a.Interfaces[0].MTU = 1500 }},
	{id: "MTU_ABOVE_HW_MAX", fixture: "zynq7000-gem", board: "zcu102", sev: Fail,
		// A ZynqMP's macb reports max_mtu 10222 itself.
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].MTU, a.Interfaces[0].MaxMTU = 10240, intp(10240) },
		clear:   func(b, a *nic.Sample) { a.Interfaces[0].MTU, a.Interfaces[0].MaxMTU = 9000, intp(10222) }},
	{id: "RX_ERRORS_RISING", fixture: "zynq7000-gem", sev: Fail,
		trigger: func(b, a *nic.Sample) { bump(a, "rx_frame_check_sequence_errors", 5) },
		clear:   func(b, a *nic.Sample) { bump(a, "rx_frames", 5000) }},
	{id: "RX_DROPS_RISING", fixture: "zynq7000-gem", sev: Fail,
		trigger: func(b, a *nic.Sample) { bump(a, "rx_resource_errors", 12) },
		clear:   func(b, a *nic.Sample) {}},
	{id: "RX_DROPS_RISING", fixture: "pcie-igb", sev: Fail,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Stats.Link.RXMissedErrors += 3 },
		clear:   func(b, a *nic.Sample) { a.Interfaces[0].Stats.Link.RXPackets += 3 }},
	{id: "TX_ERRORS_RISING", fixture: "zynq7000-gem", sev: Fail,
		trigger: func(b, a *nic.Sample) { bump(a, "tx_underrun", 1) },
		clear:   func(b, a *nic.Sample) { bump(a, "tx_frames", 1) }},
	{id: "BACKLOG_DROPS", fixture: "zynq7000-gem", sev: Fail,
		trigger: func(b, a *nic.Sample) { a.Softnet[0].Dropped += 7 },
		clear:   func(b, a *nic.Sample) { a.Softnet[0].Processed += 7 }},
	{id: "BACKLOG_DROPS", fixture: "zynq7000-gem", sev: Warn,
		trigger: func(b, a *nic.Sample) { a.Softnet[1].TimeSqueeze += 2 },
		clear:   func(b, a *nic.Sample) {}},
	{id: "VIRTUAL_NIC", fixture: "pcie-igb", sev: Info,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Kind = "veth" },
		clear:   func(b, a *nic.Sample) {}},
	{id: "NAPI_WEIGHT_MYTH", fixture: "zynq7000-gem", sev: Info,
		trigger: func(b, a *nic.Sample) {},
		clear:   func(b, a *nic.Sample) { a.Interfaces[0].Driver.Name = "igb" }},
	{id: "DT_RING_DEPTH_IGNORED", fixture: "zynq7000-gem", sev: Warn,
		trigger: func(b, a *nic.Sample) {},
		clear:   func(b, a *nic.Sample) { delete(a.GEMNodes[0].Props, "dma-rx-depth") }},
	{id: "CPUS_OFFLINE", fixture: "zynq7000-gem", sev: Warn,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Platform.CPUs = 1 },
		clear:   func(b, a *nic.Sample) {}},
	{id: "SINGLE_QUEUE_NO_RPS", fixture: "zynq7000-gem", sev: Warn,
		trigger: func(b, a *nic.Sample) {},
		clear:   func(b, a *nic.Sample) { a.Interfaces[0].Queues[0].RPSCPUs = str("3") }},
	{id: "IRQS_ON_ONE_CPU", fixture: "zynq7000-gem", sev: Warn,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].IRQs[0].PerCPU[0] += 5000 },
		clear: func(b, a *nic.Sample) {
			a.Interfaces[0].IRQs[0].PerCPU[0] += 2500
			a.Interfaces[0].IRQs[0].PerCPU[1] += 2500
		}},
	{id: "IRQS_ON_ONE_CPU", fixture: "pcie-igb", sev: Warn,
		trigger: func(b, a *nic.Sample) {},
		clear: func(b, a *nic.Sample) {
			for q := range a.Interfaces[0].IRQs {
				a.Interfaces[0].IRQs[q].PerCPU[q%4] += 100000
			}
		}},
	{id: "CHANNELS_BELOW_MAX", fixture: "pcie-igb", sev: Warn,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Channels.Combined = 2 },
		clear:   func(b, a *nic.Sample) {}}, // 4 of 8 with 4 CPUs is right
	{id: "RINGS_SMALL", fixture: "zynq7000-gem", sev: Warn,
		trigger: func(b, a *nic.Sample) { bump(a, "q0_rx_dropped", 40) },
		clear: func(b, a *nic.Sample) {
			bump(a, "q0_rx_dropped", 40)
			a.Interfaces[0].Rings.RX = 8192
		}},
	{id: "RINGS_LARGE_FOR_LATENCY", fixture: "zynq7000-gem", profile: Latency, sev: Warn,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Rings.RX = 8192 },
		clear:   func(b, a *nic.Sample) {}},
	{id: "NO_IRQ_COALESCING", fixture: "zynq7000-gem", sev: Warn,
		trigger: func(b, a *nic.Sample) {},
		clear: func(b, a *nic.Sample) {
			a.Interfaces[0].NAPI.DeferHardIRQs = i64(2)
			a.Interfaces[0].NAPI.GROFlushTimeout = i64(200000)
		}},
	{id: "SOCKET_BUFFERS_SMALL", fixture: "pcie-igb", sev: Warn,
		trigger: func(b, a *nic.Sample) {},
		clear: func(b, a *nic.Sample) {
			s := a.Interfaces[0].Sysctl
			s["net.core.rmem_max"], s["net.core.wmem_max"] = str("4194304"), str("4194304")
			s["net.ipv4.tcp_rmem"], s["net.ipv4.tcp_wmem"] = str("4096 131072 6291456"), str("4096 16384 4194304")
		}},
	{id: "CPU_GOVERNOR_NOT_PERFORMANCE", fixture: "pcie-igb", sev: Warn,
		trigger: func(b, a *nic.Sample) {},
		clear: func(b, a *nic.Sample) {
			for i := range a.Interfaces[0].Platform.CPUFreq {
				a.Interfaces[0].Platform.CPUFreq[i].Governor = "performance"
			}
		}},
	{id: "DEEP_CSTATES", fixture: "pcie-igb", profile: Latency, sev: Warn,
		trigger: func(b, a *nic.Sample) {},
		clear: func(b, a *nic.Sample) {
			for _, ci := range a.Interfaces[0].Platform.CPUIdle {
				for j := range ci.States {
					ci.States[j].Disabled = ci.States[j].LatencyUS > 10
				}
			}
		}},
	{id: "PCIE_LINK_DOWNGRADED", fixture: "pcie-igb", sev: Fail,
		trigger: func(b, a *nic.Sample) {},
		clear:   func(b, a *nic.Sample) { a.Interfaces[0].Platform.PCIe.CurrentWidth = 4 }},
	{id: "PCIE_ASPM_ON", fixture: "pcie-igb", sev: Warn,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Platform.PCIe.ASPM = map[string]string{"l1_aspm": "1"} },
		clear:   func(b, a *nic.Sample) { a.Interfaces[0].Platform.PCIe.ASPM = map[string]string{"l1_aspm": "0"} }},
	{id: "PROMISC_ON", fixture: "zynq7000-gem", sev: Warn,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Flags.Promisc = true },
		clear:   func(b, a *nic.Sample) {}},
	{id: "CAPTURE_SOCKET_OPEN", fixture: "zynq7000-gem", sev: Warn,
		trigger: func(b, a *nic.Sample) {
			a.PacketSockets = []nic.PacketSocket{{Inode: 99, Ifindex: 2, Owners: []nic.Owner{{PID: 42, Comm: "tcpdump"}}}}
		},
		clear: func(b, a *nic.Sample) {
			a.PacketSockets = []nic.PacketSocket{{Inode: 99, Ifindex: 7}} // another interface
		}},
}

// captureCases are rules on the snapshots captured on the emulated boards' real macb
// (testdata/captures): the same rules over what the kernel really answered.
var captureCases = []ruleCase{
	{id: "LINK_DOWN", fixture: "capture:zc702", sev: Fail,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Link.Carrier = false },
		clear:   func(b, a *nic.Sample) {}},
	{id: "RX_ERRORS_RISING", fixture: "capture:zc702", sev: Fail,
		trigger: func(b, a *nic.Sample) { bump(a, "rx_frame_check_sequence_errors", 5) },
		clear:   func(b, a *nic.Sample) { bump(a, "rx_frames", 5000) }},
	{id: "RX_DROPS_RISING", fixture: "capture:zcu102", sev: Fail,
		trigger: func(b, a *nic.Sample) { bump(a, "rx_resource_errors", 12) },
		clear:   func(b, a *nic.Sample) {}},
	{id: "TX_ERRORS_RISING", fixture: "capture:zc702", sev: Fail,
		trigger: func(b, a *nic.Sample) { bump(a, "tx_underrun", 1) },
		clear:   func(b, a *nic.Sample) { bump(a, "tx_frames", 1) }},
	{id: "RINGS_SMALL", fixture: "capture:zcu102", sev: Warn,
		trigger: func(b, a *nic.Sample) { bump(a, "q0_rx_dropped", 40) },
		clear: func(b, a *nic.Sample) {
			bump(a, "q0_rx_dropped", 40)
			a.Interfaces[0].Rings.RX = 8192
		}},
	{id: "NAPI_WEIGHT_MYTH", fixture: "capture:zcu102", sev: Info,
		trigger: func(b, a *nic.Sample) {},
		clear:   func(b, a *nic.Sample) { a.Interfaces[0].Driver.Name = "igb" }},
	// QEMU's xilinx-zynq-a9 runs one of the ZC702's two cores: doctor says so.
	{id: "CPUS_OFFLINE", fixture: "capture:zc702", sev: Warn,
		trigger: func(b, a *nic.Sample) {},
		clear:   func(b, a *nic.Sample) { a.Interfaces[0].Platform.CPUs, a.Interfaces[0].Platform.CPUsOnline = 2, "0-1" }},
	{id: "SINGLE_QUEUE_NO_RPS", fixture: "capture:zc702", sev: Warn,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Platform.CPUs = 2 },
		clear:   func(b, a *nic.Sample) {}},
	{id: "NO_IRQ_COALESCING", fixture: "capture:zcu102", sev: Warn,
		trigger: func(b, a *nic.Sample) {},
		clear: func(b, a *nic.Sample) {
			a.Interfaces[0].NAPI.DeferHardIRQs = i64(2)
			a.Interfaces[0].NAPI.GROFlushTimeout = i64(200000)
		}},
	{id: "SOCKET_BUFFERS_SMALL", fixture: "capture:zc702", sev: Warn,
		trigger: func(b, a *nic.Sample) {},
		clear: func(b, a *nic.Sample) {
			s := a.Interfaces[0].Sysctl
			s["net.core.rmem_max"], s["net.core.wmem_max"] = str("4194304"), str("4194304")
		}},
	{id: "JUMBO_UNSUPPORTED_SOC", fixture: "capture:zc702", sev: Fail,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].MTU = 9000 },
		clear:   func(b, a *nic.Sample) {}},
	// The ZynqMP's macb reports its own max_mtu (10222) in the capture.
	{id: "MTU_ABOVE_HW_MAX", fixture: "capture:zcu102", sev: Fail,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].MTU = 10240 },
		clear:   func(b, a *nic.Sample) { a.Interfaces[0].MTU = 9000 }},
	{id: "IRQS_ON_ONE_CPU", fixture: "capture:zcu102", sev: Warn,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].IRQs[0].PerCPU[0] += 5000 },
		clear: func(b, a *nic.Sample) {
			for cpu := range a.Interfaces[0].IRQs[0].PerCPU {
				a.Interfaces[0].IRQs[0].PerCPU[cpu] += 1250
			}
		}},
}

// boundaryCases put each threshold's value on either side of it: the rule fires one
// step past the threshold and not at it, so a threshold cannot move unnoticed.
var boundaryCases = []ruleCase{
	// LINK_UP_NO_RX at its boundary: noRxTxMin frames out with none in fires; one fewer,
	// or one frame in, does not.
	{id: "LINK_UP_NO_RX", fixture: "zynq7000-gem", sev: Fail,
		trigger: func(b, a *nic.Sample) {
			a.Interfaces[0].Stats.Link.TXPackets = b.Interfaces[0].Stats.Link.TXPackets + noRxTxMin
		},
		clear: func(b, a *nic.Sample) {
			a.Interfaces[0].Stats.Link.TXPackets = b.Interfaces[0].Stats.Link.TXPackets + noRxTxMin - 1
		}},
	{id: "LINK_UP_NO_RX", fixture: "zynq7000-gem", sev: Fail,
		trigger: func(b, a *nic.Sample) {
			a.Interfaces[0].Stats.Link.TXPackets = b.Interfaces[0].Stats.Link.TXPackets + 1000
		},
		clear: func(b, a *nic.Sample) {
			a.Interfaces[0].Stats.Link.TXPackets = b.Interfaces[0].Stats.Link.TXPackets + 1000
			a.Interfaces[0].Stats.Link.RXPackets = b.Interfaces[0].Stats.Link.RXPackets + 1
		}},
	// PHY_GENERIC_DRIVER: the ZC702's Marvell bound to phylib's generic driver fires; the
	// vendor's driver, or a board profile naming none, does not.
	{id: "PHY_GENERIC_DRIVER", fixture: "zynq7000-gem", board: "zc702", sev: Warn,
		trigger: func(b, a *nic.Sample) {
			a.Interfaces[0].PHY = &nic.PHY{Device: "e000b000.ethernet-ffffffff:07", ID: "0x01410e40", Driver: "Generic PHY"}
		},
		clear: func(b, a *nic.Sample) {
			a.Interfaces[0].PHY = &nic.PHY{Device: "e000b000.ethernet-ffffffff:07", ID: "0x01410e40", Driver: "Marvell 88E1116R"}
		}},
	{id: "PHY_GENERIC_DRIVER", fixture: "zynq7000-gem", board: "zc702", sev: Warn,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].PHY = &nic.PHY{Driver: "Generic Clause 45 PHY"} },
		clear:   func(b, a *nic.Sample) { a.Interfaces[0].PHY = nil }},
	{id: "RINGS_LARGE_FOR_LATENCY", fixture: "capture:zcu102", profile: Latency, sev: Warn,
		trigger: func(b, a *nic.Sample) {
			a.Interfaces[0].Rings.RX, a.Interfaces[0].Rings.TX = latencyRingMax+1, latencyRingMax
		},
		clear: func(b, a *nic.Sample) {
			a.Interfaces[0].Rings.RX, a.Interfaces[0].Rings.TX = latencyRingMax, latencyRingMax
		}},
	{id: "RINGS_LARGE_FOR_LATENCY", fixture: "capture:zcu102", profile: Latency, sev: Warn,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Rings.TX = latencyRingMax + 1 },
		clear:   func(b, a *nic.Sample) { a.Interfaces[0].Rings.TX = latencyRingMax }},
	{id: "RINGS_LARGE_FOR_LATENCY", fixture: "capture:zcu102", profile: Latency, sev: Warn,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Rings.RX = 1025 }, // the number, not only the constant
		clear:   func(b, a *nic.Sample) { a.Interfaces[0].Rings.RX = 1024 }},
	{id: "IRQS_ON_ONE_CPU", fixture: "capture:zcu102", sev: Warn,
		trigger: func(b, a *nic.Sample) {
			a.Interfaces[0].IRQs[0].PerCPU[0] += 950
			a.Interfaces[0].IRQs[0].PerCPU[1] += 50
		},
		clear: func(b, a *nic.Sample) {
			a.Interfaces[0].IRQs[0].PerCPU[0] += 949
			a.Interfaces[0].IRQs[0].PerCPU[1] += 51
		}},
	{id: "IRQS_ON_ONE_CPU", fixture: "capture:zcu102", sev: Warn,
		// An idle interval falls back to the counts since boot, judged from 1000 on.
		trigger: func(b, a *nic.Sample) {
			b.Interfaces[0].IRQs[0].PerCPU[0] += irqBootMin - 6
			a.Interfaces[0].IRQs[0].PerCPU[0] += irqBootMin - 6
		},
		clear: func(b, a *nic.Sample) {
			b.Interfaces[0].IRQs[0].PerCPU[0] += irqBootMin - 7
			a.Interfaces[0].IRQs[0].PerCPU[0] += irqBootMin - 7
		}},
	{id: "SOCKET_BUFFERS_SMALL", fixture: "capture:zc702", sev: Warn,
		trigger: func(b, a *nic.Sample) {
			s := a.Interfaces[0].Sysctl
			s["net.core.rmem_max"], s["net.core.wmem_max"] = str("4194303"), str("4194304")
		},
		clear: func(b, a *nic.Sample) {
			s := a.Interfaces[0].Sysctl
			s["net.core.rmem_max"], s["net.core.wmem_max"] = str("4194304"), str("4194304")
		}},
	{id: "DEEP_CSTATES", fixture: "pcie-igb", profile: Latency, sev: Warn,
		trigger: func(b, a *nic.Sample) { onlyIdleState(a, deepCStateUS+1) },
		clear:   func(b, a *nic.Sample) { onlyIdleState(a, deepCStateUS) }},
	{id: "HW_COALESCING_OFF", fixture: "pcie-igb", sev: Warn,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Coalesce["rx-usecs"] = 0 },
		clear:   func(b, a *nic.Sample) { a.Interfaces[0].Coalesce["rx-usecs"] = 1 }},
	{id: "HW_COALESCING_OFF", fixture: "pcie-igb", sev: Warn,
		trigger: func(b, a *nic.Sample) {
			a.Interfaces[0].Coalesce["rx-usecs"], a.Interfaces[0].Coalesce["rx-frames"] = 0, 1
		},
		clear: func(b, a *nic.Sample) {
			a.Interfaces[0].Coalesce["rx-usecs"], a.Interfaces[0].Coalesce["rx-frames"] = 0, 2
		}},
	{id: "HW_COALESCING_OFF", fixture: "pcie-igb", sev: Warn,
		trigger: func(b, a *nic.Sample) { a.Interfaces[0].Coalesce["rx-usecs"] = 0 },
		clear: func(b, a *nic.Sample) {
			a.Interfaces[0].Coalesce["rx-usecs"], a.Interfaces[0].Coalesce["adaptive-rx"] = 0, 1
		}},
}

// onlyIdleState leaves each CPU one enabled idle state, of the given exit latency.
func onlyIdleState(a *nic.Sample, us int64) {
	for _, ci := range a.Interfaces[0].Platform.CPUIdle {
		for j := range ci.States {
			ci.States[j].Disabled = j != 0
			if j == 0 {
				ci.States[j].LatencyUS = us
			}
		}
	}
}

func diagnose(t *testing.T, c ruleCase, mutate func(b, a *nic.Sample)) *Interface {
	t.Helper()
	b, a := read(t, c.fixture), read(t, c.fixture)
	mutate(b, a)
	in := Input{Before: b, After: a, Interval: 3 * time.Second, Profile: c.profile}
	if c.board != "" {
		bd, err := board.Lookup(c.board)
		if err != nil {
			t.Fatal(err)
		}
		in.Board = bd
	}
	rep, err := Diagnose(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rep.Interfaces {
		if rep.Interfaces[i].Name != "lo" {
			return &rep.Interfaces[i]
		}
	}
	t.Fatal("no interface in report")
	return nil
}

func find(ifc *Interface, id string) *Finding {
	for i := range ifc.Findings {
		if ifc.Findings[i].ID == id {
			return &ifc.Findings[i]
		}
	}
	return nil
}

func TestRules(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range append(append(append([]ruleCase{}, ruleCases...), captureCases...), boundaryCases...) {
		covered[c.id] = true
		t.Run(c.id+"/"+c.fixture, func(t *testing.T) {
			got := diagnose(t, c, c.trigger)
			f := find(got, c.id)
			if f == nil {
				t.Fatalf("%s did not fire; findings: %v", c.id, ids(got))
			}
			if f.Severity != c.sev || f.Why == "" || f.Fix == "" || len(f.Evidence) == 0 {
				t.Errorf("%s = %+v, want severity %s with evidence, why and fix", c.id, *f, c.sev)
			}
			if f := find(diagnose(t, c, c.clear), c.id); f != nil {
				t.Errorf("%s fired on the clear case: %+v", c.id, *f)
			}
		})
	}
	// Every rule the issue names has a case.
	for _, id := range []string{"LINK_DOWN", "LINK_SPEED_DOWNGRADED", "LINK_HALF_DUPLEX", "AUTONEG_OFF",
		"RX_ERRORS_RISING", "RX_DROPS_RISING", "TX_ERRORS_RISING", "BACKLOG_DROPS", "SINGLE_QUEUE_NO_RPS",
		"IRQS_ON_ONE_CPU", "CHANNELS_BELOW_MAX", "RINGS_SMALL", "RINGS_LARGE_FOR_LATENCY", "NO_IRQ_COALESCING",
		"SOCKET_BUFFERS_SMALL", "PROMISC_ON", "CAPTURE_SOCKET_OPEN", "MTU_ABOVE_HW_MAX", "JUMBO_UNSUPPORTED_SOC",
		"CPU_GOVERNOR_NOT_PERFORMANCE", "DEEP_CSTATES", "PCIE_LINK_DOWNGRADED", "PCIE_ASPM_ON", "VIRTUAL_NIC",
		"DT_RING_DEPTH_IGNORED", "NAPI_WEIGHT_MYTH", "HW_COALESCING_OFF", "LINK_UP_NO_RX", "PHY_GENERIC_DRIVER"} {
		if !covered[id] {
			t.Errorf("rule %s has no table case", id)
		}
	}
}

func ids(i *Interface) []string {
	var out []string
	for _, f := range i.Findings {
		out = append(out, f.ID)
	}
	return out
}

// TestOrderAndExit: findings come in troubleshooting order; Failed follows fail findings.
func TestOrderAndExit(t *testing.T) {
	c := ruleCase{fixture: "pcie-igb"}
	got := diagnose(t, c, func(b, a *nic.Sample) {
		a.Interfaces[0].Flags.Promisc = true
		a.Interfaces[0].Link.Duplex = str("half")
	})
	last := -1
	for _, f := range got.Findings {
		g := groupIndex(f.Group)
		if g < last {
			t.Errorf("finding %s (group %s) after a later group: %v", f.ID, f.Group, ids(got))
		}
		last = g
	}
	if got.Findings[0].ID != "LINK_HALF_DUPLEX" {
		t.Errorf("first finding %s, want the link first", got.Findings[0].ID)
	}
	if _, err := Diagnose(Input{Before: read(t, "pcie-igb"), After: read(t, "pcie-igb"), Profile: "fastest"}); err == nil {
		t.Error("unknown profile accepted")
	}
}

// TestSocketBuffersFixOnlyRaises: the fix never lowers a limit that is already large
// enough (pcie-igb's tcp_rmem max is 6 MiB, above the 4 MiB need).
func TestSocketBuffersFixOnlyRaises(t *testing.T) {
	got := diagnose(t, ruleCase{fixture: "pcie-igb"}, func(b, a *nic.Sample) {})
	f := find(got, "SOCKET_BUFFERS_SMALL")
	if f == nil {
		t.Fatal("SOCKET_BUFFERS_SMALL missing")
	}
	if f.Fix != "sysctl -w net.core.rmem_max=4194304 net.core.wmem_max=4194304" {
		t.Errorf("fix = %q: want only rmem_max and wmem_max raised", f.Fix)
	}
}

// countersOnly is b with what SampleCounters reads alone: each port's name, link and
// driver counters and IRQs, softnet's and the CPUs' times.
func countersOnly(b *nic.Sample) *nic.Sample {
	out := &nic.Sample{Softnet: b.Softnet, CPUTimes: b.CPUTimes}
	for _, i := range b.Interfaces {
		out.Interfaces = append(out.Interfaces, &nic.Interface{Name: i.Name, Index: i.Index, Kind: i.Kind, MAC: i.MAC, Stats: i.Stats, IRQs: i.IRQs})
	}
	return out
}

// TestBeforeCountersAlone: Diagnose reads of its Before sample only what SampleCounters
// reads (a run's baseline is such a sample): every rule's firing and clear case, with
// Before cut down to its counters, gives the report the whole sample gives.
func TestBeforeCountersAlone(t *testing.T) {
	for _, c := range append(append(append([]ruleCase{}, ruleCases...), captureCases...), boundaryCases...) {
		for name, mutate := range map[string]func(b, a *nic.Sample){"trigger": c.trigger, "clear": c.clear} {
			whole := func(b, a *nic.Sample) { mutate(b, a) }
			cut := func(b, a *nic.Sample) { mutate(b, a); *b = *countersOnly(b) }
			want, got := diagnose(t, c, whole), diagnose(t, c, cut)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s/%s %s: with Before's counters alone %v, with the whole sample %v", c.id, c.fixture, name, ids(got), ids(want))
			}
		}
	}
}
