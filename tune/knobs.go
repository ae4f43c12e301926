package tune

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/nic"
)

// The knob registry: one row per knob a profile may set. A row says what values the knob
// takes, how a profile's setting expands to the concrete knobs of one interface (a queue
// each, a CPU each, the kernel features behind a short name), what those concrete knobs
// are called in the journal, where they are read and written (a file under the root, or
// the kernel through ethtool and rtnetlink), when they are applied, and whether writing
// them bounces the link. Nothing outside this file switches on a knob's name: planning,
// applying, reverting, sweeps and plans all go through the rows.

// row is one knob.
type row struct {
	// key is the profile's name for the knob; a key ending in '.' takes a suffix
	// (sysctl.NAME, features.NAME).
	key    string
	values kind
	// expand turns one setting into targets (concrete knobs) for the interface.
	expand func(x *expander, s Setting) error
	// concrete is the journal name of the knobs the row writes, '.'-separated: '#' in a
	// part stands for a number (queue.rx-#.rps_cpus), '*' for one name (coalesce.*),
	// "**" for the rest (sysctl.**).
	concrete string
	// path is the file of a concrete knob under the root (parts: the name's parts);
	// nil for a knob the kernel holds, read and written with read and write.
	path  func(iface string, parts []string) string
	read  func(s *System, k Knob) (string, error)
	write func(s *System, k Knob, v string) error
	// order: knobs that bounce the link first (the carrier is awaited after each), then
	// ethtool settings, per-interface sysfs, IRQs, sysctls, CPU power.
	order   int
	bounces bool
	// mask: the value is a CPU mask, compared as a set of CPUs.
	mask bool
	// batch: the plan's knobs of this row are written in one request (kernel features,
	// whose dependencies the kernel resolves over the whole set, as ethtool -K does).
	batch bool
	// dropsQueues: changing it removes queues above the new count with their RPS and
	// XPS settings, so those are journalled first (channels).
	dropsQueues bool
	// internal: linerate's own commands set it (a PHY loopback test); no profile may.
	internal bool
}

// Apply order classes.
const (
	orderLink = iota
	orderEthtool
	orderSysfs
	orderIRQ
	orderSysctl
	orderCPU
)

// rows are the knobs. (Set in init: a row's expand refers back to the rows through the
// concrete knobs it makes.)
var rows []row

func init() {
	rows = []row{
		{key: "rings.rx", values: kCount, expand: (*expander).rings, concrete: "rings.rx", read: readRings, write: writeRings, order: orderLink, bounces: true},
		{key: "rings.tx", values: kCount, expand: (*expander).rings, concrete: "rings.tx", read: readRings, write: writeRings, order: orderLink, bounces: true},
		{key: "channels.rx", values: kChannels, expand: (*expander).channels, concrete: "channels.rx", read: readChannels, write: writeChannels, order: orderLink, bounces: true, dropsQueues: true},
		{key: "channels.tx", values: kChannels, expand: (*expander).channels, concrete: "channels.tx", read: readChannels, write: writeChannels, order: orderLink, bounces: true, dropsQueues: true},
		{key: "channels.combined", values: kChannels, expand: (*expander).channels, concrete: "channels.combined", read: readChannels, write: writeChannels, order: orderLink, bounces: true, dropsQueues: true},
		{key: "mtu", values: kMTU, expand: (*expander).mtu, concrete: "mtu", read: readMTU, write: writeMTU, order: orderLink, bounces: true},
		{key: "coalesce.usecs", values: kUint, expand: (*expander).coalesce, concrete: "coalesce.*", read: readCoalesce, write: writeCoalesce, order: orderEthtool},
		{key: "features.", values: kOnOff, expand: (*expander).feature, concrete: "feature.*", read: readFeature, write: writeFeature, order: orderEthtool, batch: true},
		{key: "promisc", values: kOnOff, expand: (*expander).same, concrete: "promisc", read: readPromisc, write: writePromisc, order: orderEthtool},
		{key: "napi.defer_hard_irqs", values: kUint, expand: (*expander).napi, concrete: "napi.defer_hard_irqs", path: netFile("napi_defer_hard_irqs"), order: orderSysfs},
		{key: "napi.gro_flush_timeout", values: kUint, expand: (*expander).napi, concrete: "napi.gro_flush_timeout", path: netFile("gro_flush_timeout"), order: orderSysfs},
		{key: "napi.threaded", values: kOnOff, expand: (*expander).napi, concrete: "napi.threaded", path: netFile("threaded"), order: orderSysfs},
		{key: "rps.cpus", values: kCPUs, expand: (*expander).rps, concrete: "queue.rx-#.rps_cpus", path: queueFile, order: orderSysfs, mask: true},
		{key: "rps.flow_cnt", values: kUint, expand: (*expander).rps, concrete: "queue.rx-#.rps_flow_cnt", path: queueFile, order: orderSysfs},
		{key: "xps.cpus", values: kSpread, expand: (*expander).xps, concrete: "queue.tx-#.xps_cpus", path: queueFile, order: orderSysfs, mask: true},
		{key: "irq.affinity", values: kSpread, expand: (*expander).irqAffinity, concrete: "irq.#.smp_affinity",
			path: func(_ string, p []string) string { return filepath.Join("proc/irq", p[1], "smp_affinity") }, order: orderIRQ, mask: true},
		{key: "sysctl.", values: kSysctl, expand: (*expander).same, concrete: "sysctl.**",
			path: func(_ string, p []string) string { return filepath.Join(append([]string{"proc/sys"}, p[1:]...)...) }, order: orderSysctl},
		// The link modes the PHY advertises, space-separated (a speed matrix's journal).
		{key: "link.advertise", internal: true, concrete: "link.advertise", read: readAdvertised, write: writeAdvertised, order: orderLink, bounces: true},
		// The PHY's control register, as phylib takes it (a PHY loopback test's journal).
		{key: "phy.bmcr", internal: true, concrete: "phy.bmcr", read: readBMCR, write: writeBMCR, order: orderLink, bounces: true},
		{key: "cpufreq.governor", values: kWord, expand: (*expander).governor, concrete: "cpufreq.cpu#.governor",
			path: func(_ string, p []string) string {
				return filepath.Join("sys/devices/system/cpu", p[1], "cpufreq/scaling_governor")
			}, order: orderCPU},
	}
}

// sysctls are the sysctls a profile may set; floor ones are sizes and limits a profile
// raises to its value but never lowers where the machine has more (a tcp_rmem triple
// field by field), unless the profile is Exact.
var sysctls = []struct {
	name   string
	values kind
	floor  bool
}{
	{"net.core.rmem_max", kUint, true}, {"net.core.wmem_max", kUint, true}, {"net.core.rmem_default", kUint, true},
	{"net.core.wmem_default", kUint, true}, {"net.core.netdev_max_backlog", kUint, true}, {"net.core.dev_weight", kUint, false},
	{"net.core.netdev_budget", kUint, true}, {"net.core.netdev_budget_usecs", kUint, false}, {"net.core.busy_read", kUint, false},
	{"net.core.busy_poll", kUint, false}, {"net.core.rps_sock_flow_entries", kUint, true},
	{"net.ipv4.tcp_rmem", kTriple, true}, {"net.ipv4.tcp_wmem", kTriple, true}, {"net.ipv4.tcp_congestion_control", kWord, false},
	{"net.ipv4.tcp_slow_start_after_idle", kUint, false}, {"net.ipv4.tcp_notsent_lowat", kUint, false},
}

// sysctlKind is the values a sysctl takes.
func sysctlKind(name string) kind {
	for _, s := range sysctls {
		if s.name == name {
			return s.values
		}
	}
	return kUint
}

// FeatureShortNames are ethtool -K's short names, which a profile may use besides kernel
// feature names.
var FeatureShortNames = []string{"rx", "tx", "sg", "tso", "gso", "gro", "lro", "rxvlan", "txvlan", "ntuple", "rxhash"}

// rowOf is the row of a profile key.
func rowOf(key string) (*row, bool) {
	for i := range rows {
		r := &rows[i]
		suffix, ok := strings.CutPrefix(key, r.key)
		switch {
		case key == r.key && !strings.HasSuffix(r.key, "."):
			return r, true
		case !ok || !strings.HasSuffix(r.key, ".") || suffix == "" || strings.ContainsAny(suffix, " \t"):
			continue
		case r.key == "sysctl." && !isSysctl(suffix):
			return nil, false
		}
		return r, true
	}
	return nil, false
}

func isSysctl(name string) bool {
	for _, s := range sysctls {
		if s.name == name {
			return true
		}
	}
	return false
}

// floor says a concrete knob is raised only (see sysctls).
func floor(name string) bool {
	for _, s := range sysctls {
		if "sysctl."+s.name == name {
			return s.floor
		}
	}
	return false
}

func knobKind(key string) (kind, bool) {
	r, ok := rowOf(key)
	if !ok || r.internal {
		return 0, false
	}
	return r.values, true
}

// KnownKnobs lists the profile keys, for error messages and docs.
func KnownKnobs() []string {
	var out []string
	for _, r := range rows {
		if !strings.HasSuffix(r.key, ".") && !r.internal {
			out = append(out, r.key)
		}
	}
	sort.Strings(out)
	var names []string
	for _, s := range sysctls {
		names = append(names, s.name)
	}
	out = append(out, "features.NAME (ethtool -K short names: "+strings.Join(FeatureShortNames, ", ")+"; or kernel feature names)")
	return append(out, "sysctl.NAME ("+strings.Join(names, ", ")+")")
}

// concreteRow is the row whose concrete knobs are named name, with the name's parts.
func concreteRow(name string) (*row, []string, bool) {
	parts := strings.Split(name, ".")
	for i := range rows {
		if matchConcrete(rows[i].concrete, parts) {
			return &rows[i], parts, true
		}
	}
	return nil, nil, false
}

func matchConcrete(pattern string, parts []string) bool {
	pp := strings.Split(pattern, ".")
	for i, p := range pp {
		if p == "**" {
			return len(parts) > i && isSysctl(strings.Join(parts[i:], "."))
		}
		if i >= len(parts) || parts[i] == "" {
			return false
		}
		switch pre, _, hasNum := strings.Cut(p, "#"); {
		case p == "*":
		case hasNum:
			n, ok := strings.CutPrefix(parts[i], pre)
			if !ok || !isUint(n) {
				return false
			}
		case p != parts[i]:
			return false
		}
	}
	return len(parts) == len(pp)
}

// netFile is a per-interface sysfs file knob.
func netFile(file string) func(string, []string) string {
	return func(iface string, _ []string) string { return filepath.Join("sys/class/net", iface, file) }
}

// queueFile is queue.rx-N.FILE's /sys/class/net/IF/queues/rx-N/FILE.
func queueFile(iface string, p []string) string {
	return filepath.Join("sys/class/net", iface, "queues", p[1], p[2])
}

// Reading and writing the kernel-held knobs (ethtool and rtnetlink).

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func u32(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

func unsupported(et *nic.EthtoolAnswer, part string) error {
	if why, ok := et.Unsupported[part]; ok {
		return errors.New(why)
	}
	return fmt.Errorf("%s not supported", part)
}

func readRings(s *System, k Knob) (string, error) {
	et, _, err := s.ethtool(k.Iface)
	if err != nil {
		return "", err
	}
	if et.Rings == nil {
		return "", unsupported(et, "rings")
	}
	if k.Name == "rings.rx" {
		return u32(et.Rings.RX), nil
	}
	return u32(et.Rings.TX), nil
}

func writeRings(s *System, k Knob, v string) error {
	et, _, err := s.ethtool(k.Iface)
	if err != nil {
		return err
	}
	if et.Rings == nil {
		return errors.New("rings not supported")
	}
	n, _ := strconv.ParseUint(v, 10, 32)
	rx, tx := et.Rings.RX, et.Rings.TX
	if k.Name == "rings.rx" {
		rx = uint32(n)
	} else {
		tx = uint32(n)
	}
	return s.Setter.SetRings(k.Iface, rx, tx)
}

// channelField is the count a channels knob sets.
func channelField(c *nic.Channels, name string) *uint32 {
	switch name {
	case "channels.rx":
		return &c.RX
	case "channels.tx":
		return &c.TX
	}
	return &c.Combined
}

func readChannels(s *System, k Knob) (string, error) {
	et, _, err := s.ethtool(k.Iface)
	if err != nil {
		return "", err
	}
	if et.Channels == nil {
		return "", unsupported(et, "channels")
	}
	c := *et.Channels
	return u32(*channelField(&c, k.Name)), nil
}

func writeChannels(s *System, k Knob, v string) error {
	et, _, err := s.ethtool(k.Iface)
	if err != nil {
		return err
	}
	if et.Channels == nil {
		return errors.New("channels not supported")
	}
	n, _ := strconv.ParseUint(v, 10, 32)
	c := *et.Channels
	*channelField(&c, k.Name) = uint32(n)
	return s.Setter.SetChannels(k.Iface, c)
}

func readMTU(s *System, k Knob) (string, error) {
	_, l, err := s.ethtool(k.Iface)
	if err != nil {
		return "", err
	}
	return strconv.Itoa(l.MTU), nil
}

func writeMTU(s *System, k Knob, v string) error {
	n, _ := strconv.Atoi(v)
	return s.Setter.SetMTU(k.Iface, n)
}

func readPromisc(s *System, k Knob) (string, error) {
	_, l, err := s.ethtool(k.Iface)
	if err != nil {
		return "", err
	}
	return onOff(l.RawFlags&0x100 != 0), nil
}

func writePromisc(s *System, k Knob, v string) error { return s.Setter.SetPromisc(k.Iface, v == "on") }

func readCoalesce(s *System, k Knob) (string, error) {
	et, _, err := s.ethtool(k.Iface)
	if err != nil {
		return "", err
	}
	if et.Coalesce == nil {
		return "", unsupported(et, "coalesce")
	}
	v, ok := et.Coalesce[strings.TrimPrefix(k.Name, "coalesce.")] // coalesce.rx-usecs: ethtool -C's rx-usecs
	if !ok {
		return "", fmt.Errorf("the driver does not report %s", k.Name)
	}
	return u32(v), nil
}

func writeCoalesce(s *System, k Knob, v string) error {
	n, _ := strconv.ParseUint(v, 10, 32)
	return s.Setter.SetCoalesce(k.Iface, nic.Coalesce{strings.TrimPrefix(k.Name, "coalesce."): uint32(n)})
}

func readFeature(s *System, k Knob) (string, error) {
	et, _, err := s.ethtool(k.Iface)
	if err != nil {
		return "", err
	}
	name := featureName(k)
	for _, f := range et.Features {
		if f.Name == name {
			return onOff(f.Active), nil
		}
	}
	return "", fmt.Errorf("no feature %q", name)
}

func writeFeature(s *System, k Knob, v string) error {
	return s.Setter.SetFeatures(k.Iface, map[string]bool{featureName(k): v == "on"})
}

// batched says the concrete knob is written in one request with the plan's others of
// its row (kernel features).
func batched(name string) bool {
	r, _, ok := concreteRow(name)
	return ok && r.batch
}

// featureName is a feature knob's kernel feature name (feature.rx-gro: rx-gro).
func featureName(k Knob) string { return strings.TrimPrefix(k.Name, "feature.") }

// queueKnobs are the journal names of every per-queue knob of one queue (rx-0, tx-1).
func queueKnobs(queue string) []string {
	var out []string
	for _, r := range rows {
		p := strings.Split(r.concrete, ".")
		if len(p) == 3 && p[0] == "queue" {
			if pre, _, _ := strings.Cut(p[1], "#"); strings.HasPrefix(queue, pre) {
				out = append(out, "queue."+queue+"."+p[2])
			}
		}
	}
	return out
}

// readBMCR reads the PHY's control register through MII, with the autonegotiation bit as
// phylib runs the PHY: a PHY (QEMU's) that reads its enable bit back as 0 still
// autonegotiates when phylib says so, and a write of this value gives phylib back its
// autonegotiation.
func readBMCR(s *System, k Knob) (string, error) {
	m, err := nic.OpenMII(k.Iface)
	if err != nil {
		return "", err
	}
	defer m.Close()
	addr, err := m.Address()
	if err != nil {
		return "", err
	}
	v, err := m.Read(addr, nic.MIIBMCR)
	if err != nil {
		return "", err
	}
	v &^= nic.BMCRReset | nic.BMCRANRestart // self-clearing
	if et, err := s.Kernel.Ethtool(k.Iface); err == nil && et.LinkModes != nil && et.LinkModes.Autoneg {
		v |= nic.BMCRANEnable
	}
	return fmt.Sprintf("0x%04x", v), nil
}

// writeBMCR writes the PHY's control register through MII (the kernel's phy_mii_ioctl).
// A value that turns autonegotiation off while phylib runs it on (a loopback test's) is
// written in two moves, as the kernel's own genphy_loopback does it: phylib first forces
// the link at the value's speed and duplex (its PHY driver's config_aneg runs then,
// soft reset included, with loopback still off), then the register is written as it is.
// Written at once, phylib would not know its PHY runs forced (phylink's MII write goes
// straight to the PHY), or (a MAC without phylink, through phy_mii_ioctl) would run that
// config_aneg after the write, where a vendor driver's soft reset (Marvell's) ends the
// loopback. A value with autonegotiation on gives phylib its autonegotiation back.
func writeBMCR(s *System, k Knob, v string) error {
	n, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 16)
	if err != nil {
		return fmt.Errorf("phy.bmcr %q: want a 16-bit hex value", v)
	}
	forced := false
	if bmcr := uint16(n); bmcr&(nic.BMCRANEnable|nic.BMCRReset) == 0 {
		if et, err := s.Kernel.Ethtool(k.Iface); err == nil && et.LinkModes != nil && et.LinkModes.Autoneg {
			forced = true
			speed := 10
			switch {
			case bmcr&nic.BMCRSpeed1000 != 0:
				speed = 1000
			case bmcr&nic.BMCRSpeed100 != 0:
				speed = 100
			}
			if err := s.Setter.SetForced(k.Iface, speed, bmcr&nic.BMCRFullDplx != 0); err != nil {
				return err
			}
		}
	}
	m, err := nic.OpenMII(k.Iface)
	if err != nil {
		return err
	}
	defer m.Close()
	addr, err := m.Address()
	if err != nil {
		return err
	}
	if err := m.Write(addr, nic.MIIBMCR, uint16(n)); err != nil {
		return err
	}
	if forced && uint16(n)&nic.BMCRLoopback != 0 {
		if err := keepLoopback(m, addr, uint16(n)); err != nil {
			return err
		}
	}
	// A MAC on phylink (macb) writes the register straight to the PHY and phylib does not
	// see it: autonegotiation comes back through ethtool, as it went.
	if uint16(n)&nic.BMCRANEnable != 0 {
		if et, err := s.Kernel.Ethtool(k.Iface); err == nil && et.LinkModes != nil && !et.LinkModes.Autoneg {
			return s.Setter.SetAutoneg(k.Iface)
		}
	}
	return nil
}

// keepLoopback writes the loopback value again while phylib's state machine, which the
// forcing woke and which runs on its own work queue, may still be running the driver's
// config_aneg: Marvell's ends in a soft reset, which ends the loopback. The value must
// hold for loopbackSettle.
func keepLoopback(m *nic.MII, addr int, v uint16) error {
	held := time.Now()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		got, err := m.Read(addr, nic.MIIBMCR)
		if err != nil {
			return err
		}
		if got&nic.BMCRLoopback != 0 {
			if time.Since(held) >= loopbackSettle {
				return nil
			}
			continue
		}
		if err := m.Write(addr, nic.MIIBMCR, v); err != nil {
			return err
		}
		held = time.Now()
	}
	return fmt.Errorf("phy.bmcr: the PHY left loopback again and again after 0x%04x was written (its driver resets it)", v)
}

// loopbackSettle is how long a loopback must hold after the write: phylib's state
// machine runs within milliseconds of the forcing, on an emulated Cortex-A9 within a
// few hundred.
const loopbackSettle = 500 * time.Millisecond

func readAdvertised(s *System, k Knob) (string, error) {
	et, err := s.Kernel.Ethtool(k.Iface)
	if err != nil {
		return "", err
	}
	if et.LinkModes == nil || len(et.LinkModes.Supported) == 0 {
		return "", unsupported(et, "link_modes")
	}
	return strings.Join(et.LinkModes.Advertised, " "), nil
}

func writeAdvertised(s *System, k Knob, v string) error {
	return s.Setter.SetAdvertised(k.Iface, strings.Fields(v))
}
