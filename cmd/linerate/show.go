package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/zynqnet/linerate/nic"
)

const showUsage = `Usage: linerate show [IFACE...] [--json] [--root DIR] [--ethtool-api auto|netlink|ioctl]

Reads everything that decides an interface's throughput: driver, link, MTU and flags,
channels, rings, coalescing, pause, offloads, counters, queues with RPS/XPS, IRQs with
their per-CPU counts and affinity, NAPI knobs, network sysctls, CPU power states, PCIe
link and the device tree. Without IFACE: every interface but loopback.

Flags:
  --json               print a JSON array, one object per interface
  --root DIR           read a captured tree (DIR/sys, DIR/proc and DIR/linerate/kernel.json)
                       instead of this machine
  --ethtool-api API    auto (netlink, ioctl where netlink lacks a message), netlink, or
                       ioctl (the path kernels before 5.6 take)
`

// showConfig is what one show call asks for.
type showConfig struct {
	json   bool
	root   string
	api    string
	ifaces []string
}

func showCommand() command {
	return command{
		name:    "show",
		summary: "read everything that decides an interface's throughput",
		usage:   showUsage,
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
			var c showConfig
			fs := flag.NewFlagSet("show", flag.ContinueOnError)
			fs.BoolVar(&c.json, "json", false, "")
			fs.StringVar(&c.root, "root", "", "")
			fs.StringVar(&c.api, "ethtool-api", nic.APIAuto, "")
			pos, err := parseFlags(fs, args)
			if err != nil {
				return err
			}
			c.ifaces = pos
			switch c.api {
			case nic.APIAuto, nic.APINetlink, nic.APIIoctl:
			default:
				return usageError("--ethtool-api %q: want auto, netlink or ioctl", c.api)
			}
			return c.run(stdout)
		},
	}
}

// openReader opens the system to read: the live kernel under "/", or a captured tree.
func openReader(root, api string) (*nic.Reader, func(), error) {
	if root != "" {
		k, err := nic.OpenCaptured(root)
		if err != nil {
			return nil, nil, err
		}
		return &nic.Reader{Root: root, Kernel: k}, func() {}, nil
	}
	k, err := nic.OpenKernel(api)
	if err != nil {
		return nil, nil, err
	}
	return &nic.Reader{Root: "/", Kernel: k}, func() { k.Close() }, nil
}

func (c *showConfig) run(stdout io.Writer) error {
	r, closeFn, err := openReader(c.root, c.api)
	if err != nil {
		return err
	}
	defer closeFn()
	ifcs, err := r.Read(c.ifaces...)
	if err != nil {
		return err
	}
	if c.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ifcs)
	}
	for i, ifc := range ifcs {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		writeShowText(stdout, ifc)
	}
	return nil
}

// report writes an aligned two-column report.
type report struct {
	w io.Writer
}

func (r report) section(name string) { fmt.Fprintf(r.w, "  %s\n", name) }

func (r report) row(key, format string, a ...any) {
	fmt.Fprintf(r.w, "    %-30s %s\n", key, fmt.Sprintf(format, a...))
}

func (r report) more(format string, a ...any) {
	fmt.Fprintf(r.w, "    %-30s %s\n", "", fmt.Sprintf(format, a...))
}

// na is what show prints for a part the driver or kernel does not have.
func na(ifc *nic.Interface, part string) string {
	if why, ok := ifc.Unsupported[part]; ok {
		return "n/a (" + why + ")"
	}
	return "n/a (not supported by " + driverName(ifc) + ")"
}

func driverName(ifc *nic.Interface) string {
	if ifc.Driver != nil && ifc.Driver.Name != "" {
		return ifc.Driver.Name
	}
	return "this interface"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func optInt(v *int64, unit string) string {
	if v == nil {
		return "n/a (not in this kernel)"
	}
	return strconv.FormatInt(*v, 10) + unit
}

func writeShowText(w io.Writer, ifc *nic.Interface) {
	r := report{w}
	kind := ""
	if ifc.Kind != "" {
		kind = ", " + ifc.Kind
	}
	fmt.Fprintf(w, "%s (index %d%s, ethtool via %s)\n", ifc.Name, ifc.Index, kind, ifc.EthtoolAPI)

	r.section("identity")
	if d := ifc.Driver; d != nil {
		r.row("driver", "%s  version %s  firmware %s  bus %s", d.Name, orDash(d.Version), orDash(d.Firmware), orDash(d.Bus))
	} else {
		r.row("driver", "%s", na(ifc, "driver"))
	}
	perm := "n/a"
	if ifc.PermMAC != nil {
		perm = *ifc.PermMAC
	}
	r.row("mac", "%s  (permanent %s)", orDash(ifc.MAC), perm)

	r.section("link")
	l := ifc.Link
	carrier := "down"
	if l.Carrier {
		carrier = "up"
	}
	r.row("carrier", "%s (operstate %s)", carrier, l.Operstate)
	if l.Autoneg == nil {
		r.row("speed", "%s", na(ifc, "link_modes"))
	} else {
		speed, duplex := "unknown", "unknown"
		if l.SpeedMbps != nil {
			speed = strconv.Itoa(*l.SpeedMbps) + " Mb/s"
		}
		if l.Duplex != nil {
			duplex = *l.Duplex
		}
		port := ""
		if l.Port != nil {
			port = "  port " + *l.Port
		}
		r.row("speed", "%s  duplex %s  autoneg %s%s", speed, duplex, onOff(*l.Autoneg), port)
		r.row("supported modes", "%s", modes(l.Supported))
		r.row("advertised modes", "%s", modes(l.Advertised))
		r.row("partner modes", "%s", modes(l.Partner))
	}
	mtu := strconv.Itoa(ifc.MTU)
	if ifc.MinMTU != nil && ifc.MaxMTU != nil && *ifc.MaxMTU > 0 {
		mtu += fmt.Sprintf("  (min %d, max %d)", *ifc.MinMTU, *ifc.MaxMTU)
	}
	r.row("mtu", "%s", mtu)
	f := ifc.Flags
	var fl []string
	for _, x := range []struct {
		on   bool
		name string
	}{{f.Up, "UP"}, {f.LowerUp, "LOWER_UP"}, {f.Promisc, "PROMISC"}, {f.Allmulti, "ALLMULTI"}} {
		if x.on {
			fl = append(fl, x.name)
		}
	}
	if len(fl) == 0 {
		fl = []string{"DOWN"}
	}
	r.row("flags", "%s  (promisc %s, allmulti %s, promiscuity %d)", strings.Join(fl, ","), onOff(f.Promisc), onOff(f.Allmulti), f.Promiscuity)

	r.section("queues, rings and coalescing")
	if c := ifc.Channels; c != nil {
		r.row("channels", "rx %s  tx %s  other %s  combined %s  (cur/max)", chan2(c.RX, c.RXMax), chan2(c.TX, c.TXMax), chan2(c.Other, c.OtherMax), chan2(c.Combined, c.CombinedMax))
	} else {
		r.row("channels", "%s", na(ifc, "channels"))
	}
	r.row("device queues", "rx %d  tx %d", ifc.NumRxQueues, ifc.NumTxQueues)
	if g := ifc.Rings; g != nil {
		r.row("rings", "rx %d/%d  tx %d/%d  (cur/max)", g.RX, g.RXMax, g.TX, g.TXMax)
		if g.RXMiniMax > 0 || g.RXJumboMax > 0 {
			r.more("rx-mini %d/%d  rx-jumbo %d/%d", g.RXMini, g.RXMiniMax, g.RXJumbo, g.RXJumboMax)
		}
	} else {
		r.row("rings", "%s", na(ifc, "rings"))
	}
	if c := ifc.Coalesce; c != nil {
		var parts []string
		for _, n := range nic.CoalesceNames {
			if v, ok := c[n]; ok {
				parts = append(parts, fmt.Sprintf("%s %d", n, v))
			}
		}
		writeWrapped(r, "coalesce", parts)
	} else {
		r.row("coalesce", "%s", na(ifc, "coalesce"))
	}
	if p := ifc.Pause; p != nil {
		r.row("pause", "autoneg %s  rx %s  tx %s", onOff(p.Autoneg), onOff(p.RX), onOff(p.TX))
	} else {
		r.row("pause", "%s", na(ifc, "pause"))
	}

	r.section("offloads (ethtool -k)")
	if ifc.Features == nil {
		r.row("features", "%s", na(ifc, "features"))
	} else {
		hidden := 0
		for _, ft := range ifc.Features {
			if !ft.On && ft.Fixed {
				hidden++
				continue
			}
			name := ft.Name
			if ft.Group != "" {
				name = "  " + name
			}
			suffix := ""
			switch {
			case ft.Fixed:
				suffix = " [fixed]"
			case ft.Requested != nil:
				suffix = " [requested " + onOff(*ft.Requested) + "]"
			}
			r.row(name, "%s%s", onOff(ft.On), suffix)
		}
		if hidden > 0 {
			r.more("(%d more: off [fixed]; --json lists all)", hidden)
		}
	}

	r.section("counters")
	s := ifc.Stats.Link
	r.row("rx", "packets %d  bytes %d  errors %d  dropped %d  missed %d  nohandler %d", s.RXPackets, s.RXBytes, s.RXErrors, s.RXDropped, s.RXMissedErrors, s.RXNoHandler)
	r.row("rx errors", "crc %d  frame %d  fifo %d  over %d  length %d", s.RXCRCErrors, s.RXFrameErrors, s.RXFIFOErrors, s.RXOverErrors, s.RXLengthErrors)
	r.row("tx", "packets %d  bytes %d  errors %d  dropped %d  collisions %d", s.TXPackets, s.TXBytes, s.TXErrors, s.TXDropped, s.Collisions)
	r.row("tx errors", "aborted %d  carrier %d  fifo %d  heartbeat %d  window %d", s.TXAbortedErrors, s.TXCarrierErrors, s.TXFIFOErrors, s.TXHeartbeatErrors, s.TXWindowErrors)
	if ifc.Stats.Driver == nil {
		r.row("driver (ethtool -S)", "%s", na(ifc, "driver_stats"))
	} else {
		zero := 0
		var parts []string
		for _, c := range ifc.Stats.Driver {
			if c.Value == 0 {
				zero++
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %d", c.Name, c.Value))
		}
		if zero > 0 {
			parts = append(parts, fmt.Sprintf("(%d more at 0)", zero))
		}
		writeWrapped(r, "driver (ethtool -S)", parts)
	}

	r.section("queues and interrupts")
	for _, q := range ifc.Queues {
		if strings.HasPrefix(q.Name, "rx-") {
			flow := "n/a"
			if q.RPSFlowCnt != nil {
				flow = strconv.Itoa(*q.RPSFlowCnt)
			}
			r.row(q.Name, "rps_cpus %s  rps_flow_cnt %s", mask(q.RPSCPUs), flow)
		} else {
			r.row(q.Name, "xps_cpus %s", mask(q.XPSCPUs))
		}
	}
	if len(ifc.IRQs) == 0 {
		r.row("irqs", "none found in /proc/interrupts (virtual device, or named otherwise)")
	}
	for _, q := range ifc.IRQs {
		counts := make([]string, len(q.PerCPU))
		for i, c := range q.PerCPU {
			counts[i] = fmt.Sprintf("cpu%d %d", i, c)
		}
		eff := ""
		if q.Effective != nil {
			eff = "  effective " + *q.Effective
		}
		r.row("irq "+strconv.Itoa(q.Number), "%s (%s)  affinity %s (mask %s)%s", q.Name, q.Chip, orDash(q.Affinity), orDash(q.Mask), eff)
		r.more("%s", strings.Join(counts, "  "))
	}
	r.row("irqbalance", "%s", map[bool]string{true: "running", false: "not running"}[ifc.Platform.IRQBalance])

	r.section("napi")
	r.row("napi_defer_hard_irqs", "%s", optInt(ifc.NAPI.DeferHardIRQs, ""))
	r.row("gro_flush_timeout", "%s", optInt(ifc.NAPI.GROFlushTimeout, " ns"))
	r.row("threaded", "%s", optInt(ifc.NAPI.Threaded, ""))

	r.section("sysctl")
	for _, n := range nic.SysctlNames {
		v := "n/a (not in this kernel)"
		if p := ifc.Sysctl[n]; p != nil {
			v = *p
		}
		r.row(n, "%s", v)
	}

	r.section("platform")
	p := ifc.Platform
	r.row("cpus", "%d online (%s)", p.CPUs, p.CPUsOnline)
	if len(p.CPUFreq) == 0 {
		r.row("cpufreq", "n/a (no cpufreq driver)")
	}
	for _, g := range groupGovernors(p.CPUFreq) {
		r.row("cpufreq", "%s", g)
	}
	if len(p.CPUIdle) == 0 {
		r.row("cpuidle", "n/a (no cpuidle driver)")
	}
	for _, g := range groupIdle(p.CPUIdle) {
		r.row("cpuidle", "%s", g)
	}
	if p.PCIe != nil {
		r.row("pcie", "%s  speed %s (max %s)  width x%d (max x%d)", p.PCIe.Address, p.PCIe.CurrentSpeed, p.PCIe.MaxSpeed, p.PCIe.CurrentWidth, p.PCIe.MaxWidth)
	} else {
		r.row("pcie", "n/a (not a PCIe device)")
	}
	if p.ASPMPolicy != nil {
		r.row("aspm policy", "%s", *p.ASPMPolicy)
	}
	if dt := p.DeviceTree; dt != nil {
		r.row("device tree", "%s  [%s]", orDash(dt.Model), strings.Join(dt.Compatible, ", "))
	} else {
		r.row("device tree", "n/a (no device tree)")
	}
	r.row("kernel", "%s", orDash(p.Kernel))
}

func modes(m []string) string {
	if len(m) == 0 {
		return "not reported"
	}
	return strings.Join(m, " ")
}

func chan2(cur, max uint32) string {
	if max == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%d/%d", cur, max)
}

// mask prints a sysfs CPU mask with the CPUs it names.
func mask(m *string) string {
	if m == nil {
		return "n/a"
	}
	cpus := nic.MaskCPUs(*m)
	if len(cpus) == 0 {
		return *m + " (none)"
	}
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return *m + " (cpu " + strings.Join(s, ",") + ")"
}

// writeWrapped prints parts on as few lines as fit 100 columns.
func writeWrapped(r report, key string, parts []string) {
	if len(parts) == 0 {
		r.row(key, "(none)")
		return
	}
	line := ""
	first := true
	flush := func() {
		if first {
			r.row(key, "%s", line)
			first = false
		} else {
			r.more("%s", line)
		}
		line = ""
	}
	for _, p := range parts {
		if line != "" && len(line)+2+len(p) > 72 {
			flush()
		}
		if line != "" {
			line += "  "
		}
		line += p
	}
	flush()
}

func groupGovernors(fs []nic.CPUFreq) []string {
	var out []string
	for i := 0; i < len(fs); {
		j := i
		for j+1 < len(fs) && fs[j+1].Governor == fs[i].Governor {
			j++
		}
		cpus := fmt.Sprintf("cpu%d", fs[i].CPU)
		if j > i {
			cpus = fmt.Sprintf("cpu%d-%d", fs[i].CPU, fs[j].CPU)
		}
		line := cpus + " " + fs[i].Governor
		if fs[i].CurKHz != nil {
			line += fmt.Sprintf("  %d MHz", *fs[i].CurKHz/1000)
		}
		if fs[i].MinKHz != nil && fs[i].MaxKHz != nil {
			line += fmt.Sprintf(" (%d-%d)", *fs[i].MinKHz/1000, *fs[i].MaxKHz/1000)
		}
		out = append(out, line)
		i = j + 1
	}
	return out
}

func groupIdle(cs []nic.CPUIdle) []string {
	key := func(c nic.CPUIdle) string {
		var s []string
		for _, st := range c.States {
			d := ""
			if st.Disabled {
				d = " disabled"
			}
			s = append(s, fmt.Sprintf("%s(%dus%s)", st.Name, st.LatencyUS, d))
		}
		return strings.Join(s, " ")
	}
	groups := map[string][]int{}
	var order []string
	for _, c := range cs {
		k := key(c)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], c.CPU)
	}
	sort.SliceStable(order, func(i, j int) bool { return groups[order[i]][0] < groups[order[j]][0] })
	var out []string
	for _, k := range order {
		cpus := groups[k]
		s := make([]string, len(cpus))
		for i, c := range cpus {
			s[i] = strconv.Itoa(c)
		}
		out = append(out, "cpu "+strings.Join(s, ",")+": "+k)
	}
	return out
}
