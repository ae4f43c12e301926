package nic

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// show's text: what 'linerate show' prints for a person, from an Interface.

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
func na(ifc *Interface, part string) string {
	if why, ok := ifc.Unsupported[part]; ok {
		return "n/a (" + why + ")"
	}
	return "n/a (not supported by " + driverName(ifc) + ")"
}

func driverName(ifc *Interface) string {
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

// WriteText writes show's text for one interface: a header line, then the sections in
// the order the field guides read them, each an aligned two-column block.
func WriteText(w io.Writer, ifc *Interface) {
	kind := ""
	if ifc.Kind != "" {
		kind = ", " + ifc.Kind
	}
	fmt.Fprintf(w, "%s (index %d%s, ethtool via %s)\n", ifc.Name, ifc.Index, kind, ifc.EthtoolAPI)
	r := report{w}
	for _, s := range textSections {
		r.section(s.name)
		s.write(r, ifc)
	}
}

// textSections are show's sections in order.
var textSections = []struct {
	name  string
	write func(report, *Interface)
}{
	{"identity", textIdentity},
	{"link", textLink},
	{"queues, rings and coalescing", textRings},
	{"offloads (ethtool -k)", textOffloads},
	{"counters", textCounters},
	{"queues and interrupts", textIRQs},
	{"napi", textNAPI},
	{"sysctl", textSysctl},
	{"platform", textPlatform},
}

func textIdentity(r report, ifc *Interface) {
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
	if p := ifc.PHY; p != nil {
		addr := "-"
		if p.Address != nil {
			addr = strconv.Itoa(*p.Address)
		}
		r.row("phy", "%s  id %s  driver %s  address %s  %s", p.Device, orDash(p.ID), orDash(p.Driver), addr, orDash(p.Interface))
	} else {
		r.row("phy", "none (no PHY bound: a virtual port or a fixed link)")
	}
}

func textLink(r report, ifc *Interface) {
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
}

func textRings(r report, ifc *Interface) {
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
		for _, n := range CoalesceNames {
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
}

func textOffloads(r report, ifc *Interface) {
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
}

func textCounters(r report, ifc *Interface) {
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
}

func textIRQs(r report, ifc *Interface) {
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
}

func textNAPI(r report, ifc *Interface) {
	r.row("napi_defer_hard_irqs", "%s", optInt(ifc.NAPI.DeferHardIRQs, ""))
	r.row("gro_flush_timeout", "%s", optInt(ifc.NAPI.GROFlushTimeout, " ns"))
	r.row("threaded", "%s", optInt(ifc.NAPI.Threaded, ""))
}

// globalSysctls are net.core sysctls the kernel keeps for the whole machine: inside a
// network namespace their files are absent (net/core/sysctl_net_core.c registers them
// for init_net only; rmem_max and the like are per namespace since Linux 6.x).
var globalSysctls = map[string]bool{
	"net.core.netdev_max_backlog": true, "net.core.dev_weight": true, "net.core.netdev_budget": true,
	"net.core.netdev_budget_usecs": true, "net.core.rps_sock_flow_entries": true,
	"net.core.busy_read": true, "net.core.busy_poll": true,
}

func textSysctl(r report, ifc *Interface) {
	inNamespace := false
	for n := range globalSysctls {
		// A kernel has all of these or, inside a network namespace, none.
		inNamespace = inNamespace || ifc.Sysctl[n] != nil
	}
	inNamespace = !inNamespace && ifc.Sysctl["net.ipv4.tcp_rmem"] != nil
	for _, n := range SysctlNames {
		v := "n/a (not in this kernel)"
		if inNamespace && globalSysctls[n] {
			v = "n/a (global: not visible inside a network namespace; read it in the host's)"
		}
		if p := ifc.Sysctl[n]; p != nil {
			v = *p
		}
		r.row(n, "%s", v)
	}
}

func textPlatform(r report, ifc *Interface) {
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
	cpus := MaskCPUs(*m)
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

func groupGovernors(fs []CPUFreq) []string {
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

func groupIdle(cs []CPUIdle) []string {
	key := func(c CPUIdle) string {
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

// WriteAll writes interfaces as show prints them: text, a blank line between, or with
// asJSON an indented JSON array.
func WriteAll(w io.Writer, ifcs []*Interface, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(ifcs)
	}
	for i, ifc := range ifcs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		WriteText(w, ifc)
	}
	return nil
}
