package doctor

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/zynqnet/linerate/nic"
)

// rules in troubleshooting order; Diagnose also sorts findings by group.
// The rules' thresholds, each with its boundary tested (doctor_test.go).
const (
	// latencyRingMax: under the latency profile, rings longer than this let queues
	// build (RINGS_LARGE_FOR_LATENCY); 1024 descriptors are 12 ms of 1518-byte frames
	// at 1 Gbit/s.
	latencyRingMax = 1024
	// irqIntervalMin and irqBootMin: fewer interrupts than this in the interval (or
	// since boot, on an idle link) say nothing about where they land.
	irqIntervalMin = 100
	irqBootMin     = 1000
	// irqOneCPUShare: this share of the interrupts on one CPU is "all on one CPU".
	irqOneCPUShare = 0.95
	// bufGigabit and bufFaster: socket buffer limits a TCP stream needs, up to ~30 ms
	// RTT, at 1 Gbit/s and above (SOCKET_BUFFERS_SMALL).
	bufGigabit = 4 << 20
	bufFaster  = 16 << 20
	// deepCStateUS: a C-state whose exit takes longer than this delays the first
	// packet of a burst (DEEP_CSTATES).
	deepCStateUS = 10
	// noRxTxMin: this many frames sent in the interval with none received is a port that
	// talks and does not hear (LINK_UP_NO_RX); fewer say nothing (an idle port's few
	// announcements).
	noRxTxMin = 10
)

var rules = []func(*check){
	linkDown, linkSpeed, linkDuplex, autonegOff, mtuRules, linkUpNoRX,
	rxErrors, rxDrops, txErrors, backlogDrops,
	virtualNIC, phyGenericDriver, napiWeightMyth, dtRingDepth,
	cpusOffline, singleQueueNoRPS, irqsOnOneCPU, channelsBelowMax,
	ringsSmall, ringsLargeForLatency,
	noIRQCoalescing, hwCoalescingOff,
	socketBuffersSmall,
	cpuGovernor, deepCStates,
	pcieDowngraded, pcieASPM,
	promiscOn, captureSocketOpen,
}

func (c *check) up() bool { return c.a.Flags.Up && c.a.Link.Carrier }

func linkDown(c *check) {
	if c.up() {
		return
	}
	ev := map[string]any{"up": c.a.Flags.Up, "carrier": c.a.Link.Carrier, "operstate": c.a.Link.Operstate}
	if !c.a.Flags.Up {
		c.add("LINK_DOWN", Fail, "link", ev, "the interface is administratively down: nothing can pass",
			fmt.Sprintf("ip link set dev %s up", c.a.Name))
		return
	}
	c.add("LINK_DOWN", Fail, "link", ev, "the interface is up but has no carrier: no link with the partner",
		fmt.Sprintf("check the cable and the partner port; 'ethtool %s' shows what the PHY sees", c.a.Name))
}

// modeSpeed is the speed of a link mode name such as "1000baseT/Full", 0 for others.
func modeSpeed(m string) int {
	i := strings.Index(m, "base")
	if i <= 0 {
		return 0
	}
	n, err := strconv.Atoi(m[:i])
	if err != nil {
		return 0
	}
	return n
}

func maxSpeed(modes []string) int {
	best := 0
	for _, m := range modes {
		if s := modeSpeed(m); s > best {
			best = s
		}
	}
	return best
}

func intersect(a, b []string) []string {
	set := map[string]bool{}
	for _, x := range b {
		set[x] = true
	}
	var out []string
	for _, x := range a {
		if set[x] {
			out = append(out, x)
		}
	}
	return out
}

func linkSpeed(c *check) {
	l := c.a.Link
	if !c.up() || l.SpeedMbps == nil {
		return
	}
	best, source := 0, ""
	switch {
	case len(l.Partner) > 0:
		best, source = maxSpeed(intersect(l.Advertised, l.Partner)), "the best mode both ends advertise"
	case c.board != nil && c.board.LinkMbps > 0:
		best, source = c.board.LinkMbps, "the "+c.board.Name+" board profile"
	default:
		best, source = maxSpeed(l.Supported), "the best mode the NIC supports"
	}
	if best == 0 || *l.SpeedMbps >= best {
		return
	}
	c.add("LINK_SPEED_DOWNGRADED", Fail, "link",
		map[string]any{"speed_mbps": *l.SpeedMbps, "expected_mbps": best, "expected_from": source},
		fmt.Sprintf("the link runs at %d Mb/s where %s is %d Mb/s: a bad cable (1000BASE-T needs all four pairs) or a forced setting on one end", *l.SpeedMbps, source, best),
		fmt.Sprintf("ethtool -s %s autoneg on; replace the cable (Cat5e or better) or try another partner port; 'ethtool %s' lists what both ends advertise", c.a.Name, c.a.Name))
}

func linkDuplex(c *check) {
	if !c.up() || c.a.Link.Duplex == nil || *c.a.Link.Duplex != "half" {
		return
	}
	c.add("LINK_HALF_DUPLEX", Fail, "link", map[string]any{"duplex": "half"},
		"half duplex means collisions and at best half the throughput; it is what a port falls back to when the other end is forced",
		fmt.Sprintf("ethtool -s %s autoneg on (and set the partner to autonegotiate too)", c.a.Name))
}

func autonegOff(c *check) {
	l := c.a.Link
	if l.Autoneg == nil || *l.Autoneg || !contains(l.Supported, "Autoneg") {
		return
	}
	c.add("AUTONEG_OFF", Warn, "link", map[string]any{"autoneg": false},
		"autonegotiation is off on a port that supports it: a mismatch with the partner silently costs speed or duplex, and 1000BASE-T requires autonegotiation",
		fmt.Sprintf("ethtool -s %s autoneg on", c.a.Name))
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func mtuRules(c *check) {
	if c.board == nil {
		return
	}
	mtu := c.a.MTU
	if c.board.SoC == "zynq-7000" && mtu > 1500 {
		c.add("JUMBO_UNSUPPORTED_SOC", Fail, "link",
			map[string]any{"mtu": mtu, "board": c.board.Name, "soc": c.board.SoC},
			"the Zynq-7000 GEM has no jumbo frames: frames above 1518 bytes are dropped",
			fmt.Sprintf("ip link set dev %s mtu 1500", c.a.Name))
	}
	if mtu > c.board.MaxMTU {
		c.add("MTU_ABOVE_HW_MAX", Fail, "link",
			map[string]any{"mtu": mtu, "hw_max_mtu": c.board.MaxMTU, "board": c.board.Name},
			fmt.Sprintf("the MTU is above what the %s's GEM can receive (%d)", c.board.Name, c.board.MaxMTU),
			fmt.Sprintf("ip link set dev %s mtu %d", c.a.Name, c.board.MaxMTU))
	} else if c.a.MaxMTU != nil && *c.a.MaxMTU > 0 && mtu > *c.a.MaxMTU {
		c.add("MTU_ABOVE_HW_MAX", Fail, "link",
			map[string]any{"mtu": mtu, "hw_max_mtu": *c.a.MaxMTU},
			"the MTU is above the driver's maximum", fmt.Sprintf("ip link set dev %s mtu %d", c.a.Name, *c.a.MaxMTU))
	}
}

// linkUpNoRX: carrier up, frames going out, nothing coming in: the RGMII delay fault of
// Zynq bring-up (link at 1000/full, nothing received), or a partner that never answers.
func linkUpNoRX(c *check) {
	if !c.up() || c.in.Interval <= 0 {
		return
	}
	tx := delta(c.a.Stats.Link.TXPackets, c.b.Stats.Link.TXPackets)
	rx := delta(c.a.Stats.Link.RXPackets, c.b.Stats.Link.RXPackets)
	if tx < noRxTxMin || rx > 0 {
		return
	}
	c.add("LINK_UP_NO_RX", Fail, "link", map[string]any{"tx_packets": tx, "rx_packets": rx, "interval_s": c.in.Interval.Seconds()},
		"the link is up and the port sends, but nothing arrives: on a board, the RGMII clock delay is wrong (the PHY's and the MAC's both add it, or neither does: link at 1000/full and no frame received); else the partner does not answer",
		fmt.Sprintf("check the device tree's phy-mode (rgmii-id lets the PHY add both delays) against the PHY's delay straps; 'linerate phy %s --loopback' tells a board fault (frames do not come back) from the cable or the partner's (they do)", c.a.Name))
}

// phyGenericDriver: the board profile names its PHY's vendor driver, and phylib bound
// its generic one: no RGMII delays, no errata.
func phyGenericDriver(c *check) {
	p := c.a.PHY
	if c.board == nil || c.board.GEM.PHYDriver == "" || p == nil || !contains(nic.GenericDrivers, p.Driver) {
		return
	}
	c.add("PHY_GENERIC_DRIVER", Warn, "driver", map[string]any{"driver": p.Driver, "expected": c.board.GEM.PHYDriver, "phy_id": p.ID, "board": c.board.Name},
		fmt.Sprintf("phylib bound %q to the PHY where the %s has a %s: the generic driver sets up no RGMII delays, LEDs or errata, so the link can come up and carry nothing", p.Driver, c.board.Name, c.board.GEM.PHYDriver),
		fmt.Sprintf("build the PHY's vendor driver into the kernel (CONFIG_MARVELL_PHY, CONFIG_DP83867_PHY, CONFIG_REALTEK_PHY) or load it before the GEM's; 'linerate phy %s' shows the PHY's id", c.a.Name))
}

func linkDelta(c *check, fields ...string) []counterDelta {
	get := func(s nic.LinkStats, f string) uint64 {
		switch f {
		case "rx_crc_errors":
			return s.RXCRCErrors
		case "rx_frame_errors":
			return s.RXFrameErrors
		case "rx_length_errors":
			return s.RXLengthErrors
		case "rx_missed_errors":
			return s.RXMissedErrors
		case "rx_fifo_errors":
			return s.RXFIFOErrors
		case "rx_over_errors":
			return s.RXOverErrors
		case "tx_errors":
			return s.TXErrors
		case "tx_aborted_errors":
			return s.TXAbortedErrors
		case "tx_carrier_errors":
			return s.TXCarrierErrors
		case "tx_fifo_errors":
			return s.TXFIFOErrors
		case "tx_heartbeat_errors":
			return s.TXHeartbeatErrors
		case "tx_window_errors":
			return s.TXWindowErrors
		}
		return 0
	}
	var out []counterDelta
	for _, f := range fields {
		if d := delta(get(c.a.Stats.Link, f), get(c.b.Stats.Link, f)); d > 0 {
			out = append(out, counterDelta{"link." + f, d})
		}
	}
	return out
}

func rxErrors(c *check) {
	ds := linkDelta(c, "rx_crc_errors", "rx_frame_errors", "rx_length_errors")
	ds = append(ds, c.driverDeltas(func(n string) bool {
		return strings.HasPrefix(n, "rx_") && containsAny(n, "crc", "fcs", "frame_check_sequence", "symbol", "alignment", "jabber", "undersize", "oversize", "length_field")
	})...)
	if len(ds) == 0 {
		return
	}
	c.add("RX_ERRORS_RISING", Fail, "errors", evidenceOf(ds, c.in.Interval),
		"frames arrive damaged (CRC/FCS, symbol, alignment errors): a physical-layer fault, not a tuning problem",
		fmt.Sprintf("replace the cable, check the connectors and the partner port; on a board, check the RGMII delays (phy-mode rgmii-id) and the PHY's clock; watch with 'ethtool -S %s'", c.a.Name))
}

// ringDrops are the counters that rise when the NIC had no receive buffer for a frame.
func ringDrops(c *check) []counterDelta {
	ds := linkDelta(c, "rx_missed_errors", "rx_fifo_errors", "rx_over_errors")
	return append(ds, c.driverDeltas(func(n string) bool {
		return containsAny(n, "missed", "no_buffer", "nobuf", "rx_dropped", "rx_resource", "rx_overrun", "rx_fifo") ||
			strings.HasPrefix(n, "rx_queue_") && strings.HasSuffix(n, "_drops")
	})...)
}

func rxDrops(c *check) {
	ds := ringDrops(c)
	if len(ds) == 0 {
		return
	}
	c.add("RX_DROPS_RISING", Fail, "errors", evidenceOf(ds, c.in.Interval),
		"the NIC drops received frames because the CPU does not empty the receive ring fast enough",
		fmt.Sprintf("spread receive work (RPS, IRQ affinity), enlarge the ring (ethtool -G %s rx N), or run 'linerate tune %s --profile throughput'", c.a.Name, c.a.Name))
}

func txErrors(c *check) {
	ds := linkDelta(c, "tx_errors", "tx_aborted_errors", "tx_carrier_errors", "tx_fifo_errors", "tx_heartbeat_errors", "tx_window_errors")
	ds = append(ds, c.driverDeltas(func(n string) bool {
		return strings.HasPrefix(n, "tx_") && containsAny(n, "underrun", "late_coll", "excessive_coll", "carrier", "tx_fifo", "timeout")
	})...)
	if len(ds) == 0 {
		return
	}
	c.add("TX_ERRORS_RISING", Fail, "errors", evidenceOf(ds, c.in.Interval),
		"transmit errors (underruns, late collisions, carrier loss): a duplex mismatch, a bad link, or DMA starved of memory bandwidth",
		fmt.Sprintf("check duplex on both ends (ethtool %s), the cable, and the AXI/DDR load of the SoC", c.a.Name))
}

func backlogDrops(c *check) {
	before := map[int]nic.SoftnetCPU{}
	for _, s := range c.in.Before.Softnet {
		before[s.CPU] = s
	}
	var dropped, squeezed uint64
	for _, s := range c.in.After.Softnet {
		b := before[s.CPU]
		dropped += delta(s.Dropped, b.Dropped)
		squeezed += delta(s.TimeSqueeze, b.TimeSqueeze)
	}
	if dropped == 0 && squeezed == 0 {
		return
	}
	ev := map[string]any{"softnet_dropped": dropped, "softnet_time_squeeze": squeezed, "interval_s": c.in.Interval.Seconds()}
	sev, why := Warn, "NAPI ran out of budget or time before the queue was empty (time_squeeze): receive work is delayed"
	fix := "sysctl -w net.core.netdev_budget=600 net.core.netdev_budget_usecs=8000"
	if dropped > 0 {
		sev = Fail
		why = "the per-CPU backlog (netdev_max_backlog) overflowed: the kernel dropped frames after the NIC had delivered them"
		fix = "sysctl -w net.core.netdev_max_backlog=" + strconv.Itoa(backlogWanted(c)) + "; spread the work over CPUs with RPS; " + fix
	}
	c.add("BACKLOG_DROPS", sev, "buffers and backlog", ev, why, fix)
}

func backlogWanted(c *check) int {
	v := 1000
	if s := c.a.Sysctl["net.core.netdev_max_backlog"]; s != nil {
		if n, err := strconv.Atoi(*s); err == nil && n > 0 {
			v = n
		}
	}
	return v * 2
}

// virtualKinds are rtnetlink kinds and drivers that are software, not a NIC.
var virtualDrivers = map[string]bool{"veth": true, "virtio_net": true, "tun": true, "vmxnet3": true, "hv_netvsc": true, "vif": true, "bridge": true, "dummy": true, "ifb": true}

func virtualNIC(c *check) {
	if c.a.Kind == "" && !virtualDrivers[c.driver()] {
		return
	}
	c.add("VIRTUAL_NIC", Info, "driver", map[string]any{"kind": c.a.Kind, "driver": c.driver()},
		"this is a virtual interface: its throughput and latency say nothing about hardware",
		"measure on the board's own port; virtual interfaces are for testing linerate itself")
}

func napiWeightMyth(c *check) {
	if c.driver() != "macb" {
		return
	}
	c.add("NAPI_WEIGHT_MYTH", Info, "driver", map[string]any{"napi_weight": 64},
		"macb's NAPI weight is fixed at 64 and there is no per-device napi_rx_weight; what can be tuned is net.core.dev_weight (the backlog RPS feeds), netdev_budget and netdev_budget_usecs, napi_defer_hard_irqs with gro_flush_timeout, and threaded NAPI",
		fmt.Sprintf("sysctl net.core.dev_weight net.core.netdev_budget net.core.netdev_budget_usecs; cat /sys/class/net/%s/napi_defer_hard_irqs /sys/class/net/%s/gro_flush_timeout", c.a.Name, c.a.Name))
}

func dtRingDepth(c *check) {
	if c.driver() != "macb" {
		return
	}
	for _, n := range c.in.After.GEMNodes {
		ev := map[string]any{"node": n.Path}
		for _, p := range []string{"dma-rx-depth", "dma-tx-depth"} {
			if v, ok := n.Props[p]; ok {
				if len(v) == 4 {
					ev[p] = binary.BigEndian.Uint32(v)
				} else {
					ev[p] = fmt.Sprintf("%x", v)
				}
			}
		}
		if len(ev) == 1 {
			continue
		}
		c.add("DT_RING_DEPTH_IGNORED", Warn, "driver", ev,
			"the device tree sets dma-rx-depth/dma-tx-depth on a GEM node, but no upstream driver reads them: macb takes ring sizes only from ethtool -G",
			fmt.Sprintf("ethtool -G %s rx N tx N at boot, or carry the depths as linerate,rx-ring-size / linerate,tx-ring-size ('linerate dts overlay') and let 'linerate tune --from-dt' apply them", c.a.Name))
	}
}

func cpusOffline(c *check) {
	if c.board == nil || c.cpus() >= c.board.CPUs {
		return
	}
	c.add("CPUS_OFFLINE", Warn, "queues and irqs", map[string]any{"online": c.cpus(), "board_cpus": c.board.CPUs},
		fmt.Sprintf("only %d of the %s's %d cores are online, so receive work cannot spread", c.cpus(), c.board.Name, c.board.CPUs),
		"remove maxcpus=/nosmp from the kernel command line, or echo 1 > /sys/devices/system/cpu/cpuN/online")
}

func allCPUMask(n int) string {
	if n <= 0 {
		return "1"
	}
	var words []string
	for n > 0 {
		bits := n
		if bits > 32 {
			bits = 32
		}
		words = append([]string{fmt.Sprintf("%x", uint64(1)<<bits-1)}, words...)
		n -= bits
	}
	return strings.Join(words, ",")
}

func rxQueues(i *nic.Interface) []nic.Queue {
	var out []nic.Queue
	for _, q := range i.Queues {
		if strings.HasPrefix(q.Name, "rx-") {
			out = append(out, q)
		}
	}
	return out
}

func singleQueueNoRPS(c *check) {
	rx := rxQueues(c.a)
	if len(rx) != 1 || c.cpus() < 2 || rx[0].RPSCPUs == nil || len(nic.MaskCPUs(*rx[0].RPSCPUs)) > 0 {
		return
	}
	mask := allCPUMask(c.cpus())
	c.add("SINGLE_QUEUE_NO_RPS", Warn, "queues and irqs",
		map[string]any{"rx_queues": 1, "cpus": c.cpus(), "rps_cpus": *rx[0].RPSCPUs},
		fmt.Sprintf("one receive queue and RPS off: all receive processing runs on the CPU that takes the interrupt while the other %d CPU(s) wait", c.cpus()-1),
		fmt.Sprintf("echo %s > /sys/class/net/%s/queues/rx-0/rps_cpus; echo 4096 > /sys/class/net/%s/queues/rx-0/rps_flow_cnt; sysctl -w net.core.rps_sock_flow_entries=32768 (or: linerate tune %s --profile throughput)", mask, c.a.Name, c.a.Name, c.a.Name))
}

func irqsOnOneCPU(c *check) {
	if c.cpus() < 2 || len(c.a.IRQs) == 0 {
		return
	}
	before := map[int]nic.IRQ{}
	for _, q := range c.b.IRQs {
		before[q.Number] = q
	}
	per := map[int]uint64{}
	var total uint64
	for _, q := range c.a.IRQs {
		b := before[q.Number]
		for cpu, v := range q.PerCPU {
			var bv uint64
			if cpu < len(b.PerCPU) {
				bv = b.PerCPU[cpu]
			}
			d := delta(v, bv)
			per[cpu] += d
			total += d
		}
	}
	basis := "during the interval"
	if total < irqIntervalMin { // idle link: judge by the totals since boot
		per, total, basis = map[int]uint64{}, 0, "since boot"
		for _, q := range c.a.IRQs {
			for cpu, v := range q.PerCPU {
				per[cpu] += v
				total += v
			}
		}
		if total < irqBootMin {
			return
		}
	}
	top, topN := 0, uint64(0)
	for cpu, n := range per {
		if n > topN || n == topN && cpu < top {
			top, topN = cpu, n
		}
	}
	if float64(topN) < irqOneCPUShare*float64(total) {
		return
	}
	var irqs []string
	for _, q := range c.a.IRQs {
		irqs = append(irqs, strconv.Itoa(q.Number))
	}
	ev := map[string]any{"irqs": strings.Join(irqs, ","), "cpu": top, "share": float64(topN) / float64(total), "counted": basis, "irqbalance": c.a.Platform.IRQBalance}
	if idle, ok := othersIdle(c, top); ok {
		ev["others_idle_share"] = idle
	}
	fix := fmt.Sprintf("echo %s > /proc/irq/N/smp_affinity for each of the interface's IRQs to spread them", allCPUMask(c.cpus()))
	if len(c.a.IRQs) == 1 {
		fix = fmt.Sprintf("one IRQ line cannot be split: let RPS carry receive work to the other CPUs (echo %s > /sys/class/net/%s/queues/rx-0/rps_cpus), or run 'linerate tune %s --profile throughput'", allCPUMask(c.cpus()), c.a.Name, c.a.Name)
	}
	if c.a.Platform.IRQBalance {
		fix += "; irqbalance is running and will undo hand-set affinity: stop it or ban these IRQs"
	}
	c.add("IRQS_ON_ONE_CPU", Warn, "queues and irqs", ev,
		fmt.Sprintf("all of the interface's interrupts land on CPU %d while the others idle", top), fix)
}

// othersIdle is the idle share of all CPUs but top over the interval.
func othersIdle(c *check, top int) (float64, bool) {
	before := map[int]nic.CPUTimes{}
	for _, t := range c.in.Before.CPUTimes {
		before[t.CPU] = t
	}
	var idle, all uint64
	for _, t := range c.in.After.CPUTimes {
		if t.CPU == top {
			continue
		}
		b := before[t.CPU]
		idle += delta(t.Idle, b.Idle)
		all += delta(t.Total, b.Total)
	}
	if all == 0 {
		return 0, false
	}
	return float64(idle) / float64(all), true
}

func channelsBelowMax(c *check) {
	ch := c.a.Channels
	if ch == nil {
		return
	}
	want := func(cur, max uint32) (uint32, bool) {
		w := max
		if n := uint32(c.cpus()); n > 0 && n < w {
			w = n
		}
		return w, max > 0 && cur < w
	}
	if w, low := want(ch.Combined, ch.CombinedMax); low {
		c.add("CHANNELS_BELOW_MAX", Warn, "queues and irqs", map[string]any{"combined": ch.Combined, "combined_max": ch.CombinedMax, "cpus": c.cpus()},
			"fewer queues than the NIC and the CPUs could use: receive work concentrates on fewer cores",
			fmt.Sprintf("ethtool -L %s combined %d", c.a.Name, w))
	} else if w, low := want(ch.RX, ch.RXMax); low {
		c.add("CHANNELS_BELOW_MAX", Warn, "queues and irqs", map[string]any{"rx": ch.RX, "rx_max": ch.RXMax, "cpus": c.cpus()},
			"fewer receive queues than the NIC and the CPUs could use",
			fmt.Sprintf("ethtool -L %s rx %d", c.a.Name, w))
	}
}

func ringsSmall(c *check) {
	r := c.a.Rings
	if r == nil || r.RX >= r.RXMax || len(ringDrops(c)) == 0 {
		return
	}
	fix := fmt.Sprintf("ethtool -G %s rx %d", c.a.Name, r.RXMax)
	if c.driver() == "macb" {
		fix += " (macb closes and reopens the interface: the link drops for a moment)"
	}
	c.add("RINGS_SMALL", Warn, "rings", map[string]any{"rx": r.RX, "rx_max": r.RXMax},
		"frames are dropped for lack of receive buffers while the ring could be larger", fix)
}

func ringsLargeForLatency(c *check) {
	r := c.a.Rings
	if c.in.Profile != Latency || r == nil || (r.RX <= latencyRingMax && r.TX <= latencyRingMax) {
		return
	}
	c.add("RINGS_LARGE_FOR_LATENCY", Warn, "rings", map[string]any{"rx": r.RX, "tx": r.TX, "profile": Latency},
		"long rings let queues build up, which adds latency under load (bufferbloat in the NIC)",
		fmt.Sprintf("ethtool -G %s rx 256 tx 256", c.a.Name))
}

func noIRQCoalescing(c *check) {
	if c.in.Profile != Throughput || c.a.Coalesce != nil {
		return
	}
	n := c.a.NAPI
	if n.DeferHardIRQs != nil && *n.DeferHardIRQs > 0 && n.GROFlushTimeout != nil && *n.GROFlushTimeout > 0 {
		return
	}
	ev := map[string]any{"ethtool_coalesce": "not supported by " + c.driver()}
	fix := fmt.Sprintf("echo 2 > /sys/class/net/%s/napi_defer_hard_irqs; echo 200000 > /sys/class/net/%s/gro_flush_timeout (or: linerate tune %s --profile throughput)", c.a.Name, c.a.Name, c.a.Name)
	if n.DeferHardIRQs == nil {
		ev["napi_defer_hard_irqs"] = "absent"
		fix = "software IRQ coalescing needs kernel 5.7 or later (napi_defer_hard_irqs); on this kernel only RPS and budgets can help"
	} else {
		ev["napi_defer_hard_irqs"] = *n.DeferHardIRQs
		if n.GROFlushTimeout != nil {
			ev["gro_flush_timeout"] = *n.GROFlushTimeout
		}
	}
	c.add("NO_IRQ_COALESCING", Warn, "coalescing", ev,
		"the driver has no interrupt coalescing (no ethtool -C) and software coalescing is off: one interrupt per few frames eats the CPU at high packet rates", fix)
}

// hwCoalescingOff: a NIC with interrupt coalescing (ethtool -C) set to none raises an
// interrupt per received frame; under the throughput profile that costs the CPU what
// the NIC could save it. (Under the latency profile rx-usecs 0 is a choice.)
func hwCoalescingOff(c *check) {
	co := c.a.Coalesce
	if c.in.Profile != Throughput || co == nil {
		return
	}
	us, ok := co["rx-usecs"]
	if !ok || us != 0 {
		return
	}
	if frames, ok := co["rx-frames"]; ok && frames > 1 {
		return // coalescing by frame count instead
	}
	if adaptive, ok := co["adaptive-rx"]; ok && adaptive != 0 {
		return // the driver adapts it
	}
	c.add("HW_COALESCING_OFF", Warn, "coalescing", map[string]any{"rx-usecs": us},
		"the NIC raises an interrupt for every frame it receives (rx-usecs 0): at high packet rates interrupts take the CPU the stack needs",
		fmt.Sprintf("ethtool -C %s rx-usecs 50 (or: linerate tune %s --profile throughput)", c.a.Name, c.a.Name))
}

func socketBuffersSmall(c *check) {
	if c.in.Profile != Throughput {
		return
	}
	// 4 MiB covers a gigabit path up to ~30 ms RTT; faster links want 16 MiB. A virtual
	// NIC's speed is a made-up number, so it is judged as gigabit.
	need := bufGigabit
	if s := c.a.Link.SpeedMbps; s != nil && *s > 1000 && c.a.Kind == "" && !virtualDrivers[c.driver()] {
		need = bufFaster
	}
	ev := map[string]any{"needed_bytes": need}
	var small []string
	for _, k := range []string{"net.core.rmem_max", "net.core.wmem_max", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"} {
		v := c.a.Sysctl[k]
		if v == nil {
			continue
		}
		f := strings.Fields(*v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.Atoi(f[len(f)-1])
		if err != nil {
			continue
		}
		ev[k] = *v
		if n < need {
			small = append(small, k)
		}
	}
	if len(small) == 0 {
		return
	}
	ev["below_need"] = strings.Join(small, " ")
	// Raise only what is short; the tcp_*mem triples keep their min and default.
	var sets []string
	for _, k := range small {
		f := strings.Fields(*c.a.Sysctl[k])
		if len(f) == 3 {
			sets = append(sets, fmt.Sprintf("%s='%s %s %d'", k, f[0], f[1], need))
		} else {
			sets = append(sets, fmt.Sprintf("%s=%d", k, need))
		}
	}
	c.add("SOCKET_BUFFERS_SMALL", Warn, "buffers and backlog", ev,
		"socket buffer limits below the bandwidth-delay product cap a TCP stream's window and so its throughput",
		"sysctl -w "+strings.Join(sets, " "))
}

func cpuGovernor(c *check) {
	var slow []string
	for _, f := range c.a.Platform.CPUFreq {
		if f.Governor != "performance" {
			slow = append(slow, fmt.Sprintf("cpu%d=%s", f.CPU, f.Governor))
		}
	}
	if len(slow) == 0 {
		return
	}
	c.add("CPU_GOVERNOR_NOT_PERFORMANCE", Warn, "cpu power", map[string]any{"governors": strings.Join(slow, " ")},
		"a power-saving governor keeps the clock low between bursts; the first packets of a burst are handled slowly",
		"for g in /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor; do echo performance > $g; done")
}

func deepCStates(c *check) {
	deep := map[string]int64{}
	var cpus []string
	for _, ci := range c.a.Platform.CPUIdle {
		found := false
		for i, s := range ci.States {
			if !s.Disabled && s.LatencyUS > deepCStateUS {
				deep[fmt.Sprintf("state%d %s", i, s.Name)] = s.LatencyUS
				found = true
			}
		}
		if found {
			cpus = append(cpus, strconv.Itoa(ci.CPU))
		}
	}
	if len(deep) == 0 {
		return
	}
	sev := Info
	if c.in.Profile == Latency {
		sev = Warn
	}
	var names []string
	for n := range deep {
		names = append(names, n)
	}
	sort.Strings(names)
	ev := map[string]any{"cpus": strings.Join(cpus, ",")}
	for _, n := range names {
		ev[n+" latency_us"] = deep[n]
	}
	c.add("DEEP_CSTATES", sev, "cpu power", ev,
		"deep idle states take tens of microseconds or more to leave: the first packet after a pause waits for the CPU to wake",
		"echo 1 > /sys/devices/system/cpu/cpu*/cpuidle/stateN/disable for the deep states, or boot with cpuidle.off=1 (latency-critical boards)")
}

// gts parses "5.0 GT/s PCIe" (or "8 GT/s").
func gts(s string) float64 {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func pcieDowngraded(c *check) {
	p := c.a.Platform.PCIe
	if p == nil {
		return
	}
	cur, max := gts(p.CurrentSpeed), gts(p.MaxSpeed)
	if (max == 0 || cur >= max) && (p.MaxWidth == 0 || p.CurrentWidth >= p.MaxWidth) {
		return
	}
	c.add("PCIE_LINK_DOWNGRADED", Fail, "pcie",
		map[string]any{"address": p.Address, "current_speed": p.CurrentSpeed, "max_speed": p.MaxSpeed, "current_width": p.CurrentWidth, "max_width": p.MaxWidth},
		"the NIC's PCIe link trained below its capability: the bus, not the wire, may limit throughput",
		fmt.Sprintf("move the card to a slot wired for x%d at %s, reseat it, check BIOS PCIe settings; 'lspci -vv -s %s' shows LnkCap and LnkSta", p.MaxWidth, p.MaxSpeed, p.Address))
}

func pcieASPM(c *check) {
	p := c.a.Platform.PCIe
	if p == nil {
		return
	}
	ev := map[string]any{}
	if pol := c.a.Platform.ASPMPolicy; pol != nil && (*pol == "powersave" || *pol == "powersupersave") {
		ev["policy"] = *pol
	}
	for k, v := range p.ASPM {
		if v == "1" {
			ev[k] = v
		}
	}
	if len(ev) == 0 {
		return
	}
	c.add("PCIE_ASPM_ON", Warn, "pcie", ev,
		"PCIe link power management puts the link to sleep between transfers; waking it adds microseconds to each burst",
		fmt.Sprintf("echo performance > /sys/module/pcie_aspm/parameters/policy (or boot with pcie_aspm=off); echo 0 > /sys/bus/pci/devices/%s/link/l1_aspm", p.Address))
}

func promiscOn(c *check) {
	if !c.a.Flags.Promisc {
		return
	}
	c.add("PROMISC_ON", Warn, "capture", map[string]any{"promisc": true, "promiscuity": c.a.Flags.Promiscuity},
		"promiscuous mode makes the stack take every frame on the wire, wanted or not; a capture or a bridge left behind usually set it",
		fmt.Sprintf("ip link set dev %s promisc off (promiscuity counts the other users: captures and bridges must stop too)", c.a.Name))
}

func captureSocketOpen(c *check) {
	var who []string
	var pids []string
	for _, s := range c.in.After.PacketSockets {
		if s.Ifindex != 0 && s.Ifindex != c.a.Index {
			continue
		}
		desc := fmt.Sprintf("inode %d", s.Inode)
		if s.Ifindex == 0 {
			desc += " (all interfaces)"
		}
		for _, o := range s.Owners {
			desc += fmt.Sprintf(" pid %d (%s)", o.PID, o.Comm)
			pids = append(pids, strconv.Itoa(o.PID))
		}
		who = append(who, desc)
	}
	if len(who) == 0 {
		return
	}
	fix := "stop the capture (tcpdump, wireshark, a packet socket left open)"
	if len(pids) > 0 {
		fix = "stop the capture: kill " + strings.Join(pids, " ")
	}
	c.add("CAPTURE_SOCKET_OPEN", Warn, "capture", map[string]any{"sockets": who},
		"every AF_PACKET socket on the interface gets a copy of each frame: a forgotten capture costs CPU on every packet", fix)
}
