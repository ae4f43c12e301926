package nic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Interface is everything linerate reads about one network interface: what decides its
// throughput, gathered from rtnetlink, ethtool (netlink or ioctl), sysfs and procfs.
// JSON names are part of linerate's interface and stay stable.
type Interface struct {
	Name  string `json:"name"`
	Index int    `json:"index"`
	// Kind is the rtnetlink link kind (veth, bridge, tun, ...); empty for hardware.
	Kind    string  `json:"kind"`
	MAC     string  `json:"mac"`
	PermMAC *string `json:"perm_mac"`
	Driver  *Driver `json:"driver"`
	Link    Link    `json:"link"`
	// PHY is the PHY phylib bound (nil: none, as on a virtual port).
	PHY    *PHY  `json:"phy"`
	MTU    int   `json:"mtu"`
	MinMTU *int  `json:"min_mtu"`
	MaxMTU *int  `json:"max_mtu"`
	Flags  Flags `json:"flags"`
	// NumRxQueues and NumTxQueues are the queues the device was created with.
	NumRxQueues int       `json:"num_rx_queues"`
	NumTxQueues int       `json:"num_tx_queues"`
	Channels    *Channels `json:"channels"`
	Rings       *Rings    `json:"rings"`
	Coalesce    Coalesce  `json:"coalesce"`
	Pause       *Pause    `json:"pause"`
	Features    Features  `json:"features"`
	Stats       Stats     `json:"stats"`
	Queues      []Queue   `json:"queues"`
	IRQs        []IRQ     `json:"irqs"`
	NAPI        NAPI      `json:"napi"`
	// Sysctl holds the network sysctls by dotted name; null where the kernel lacks one.
	Sysctl   map[string]*string `json:"sysctl"`
	Platform Platform           `json:"platform"`
	// Unsupported says, per part left null above (driver, link_modes, channels, rings,
	// coalesce, pause, features, driver_stats, perm_mac), why it is missing.
	Unsupported map[string]string `json:"unsupported"`
	// EthtoolAPI is how ethtool answers were read: netlink, ioctl or captured.
	EthtoolAPI string `json:"ethtool_api"`
}

// Driver is the ethtool drvinfo of an interface (ethtool -i).
type Driver struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Firmware string `json:"firmware"`
	Bus      string `json:"bus"`
}

// Link is the state of the physical link (ethtool IFACE).
type Link struct {
	Carrier   bool   `json:"carrier"`
	Operstate string `json:"operstate"`
	// SpeedMbps, Duplex and Autoneg are null when the driver does not know them
	// (link down, or no link settings at all).
	SpeedMbps  *int     `json:"speed_mbps"`
	Duplex     *string  `json:"duplex"`
	Autoneg    *bool    `json:"autoneg"`
	Port       *string  `json:"port"`
	Supported  []string `json:"supported_modes"`
	Advertised []string `json:"advertised_modes"`
	Partner    []string `json:"partner_modes"`
}

// Flags are the interface flags that matter for throughput.
type Flags struct {
	Up       bool `json:"up"`
	LowerUp  bool `json:"lower_up"`
	Promisc  bool `json:"promisc"`
	Allmulti bool `json:"allmulti"`
	// Promiscuity counts the users that asked for promiscuous mode (packet sockets, bridges).
	Promiscuity int `json:"promiscuity"`
}

// Channels are the queue counts (ethtool -l). A zero maximum means the driver has no such
// channel type, which ethtool prints as n/a.
type Channels struct {
	RX          uint32 `json:"rx"`
	TX          uint32 `json:"tx"`
	Other       uint32 `json:"other"`
	Combined    uint32 `json:"combined"`
	RXMax       uint32 `json:"rx_max"`
	TXMax       uint32 `json:"tx_max"`
	OtherMax    uint32 `json:"other_max"`
	CombinedMax uint32 `json:"combined_max"`
}

// Rings are the DMA descriptor ring sizes (ethtool -g).
type Rings struct {
	RX         uint32 `json:"rx"`
	TX         uint32 `json:"tx"`
	RXMax      uint32 `json:"rx_max"`
	TXMax      uint32 `json:"tx_max"`
	RXMini     uint32 `json:"rx_mini"`
	RXMiniMax  uint32 `json:"rx_mini_max"`
	RXJumbo    uint32 `json:"rx_jumbo"`
	RXJumboMax uint32 `json:"rx_jumbo_max"`
}

// Coalesce holds the interrupt coalescing parameters the driver reports (ethtool -c), by
// ethtool's names: rx-usecs, rx-frames, adaptive-rx, ... Over netlink a driver reports only
// the parameters it supports; over ioctl every field is present.
type Coalesce map[string]uint32

// CoalesceNames lists ethtool -c parameter names in the order ethtool prints them.
var CoalesceNames = []string{
	"adaptive-rx", "adaptive-tx", "sample-interval", "pkt-rate-low", "pkt-rate-high",
	"rx-usecs", "rx-frames", "rx-usecs-irq", "rx-frames-irq",
	"tx-usecs", "tx-frames", "tx-usecs-irq", "tx-frames-irq",
	"rx-usecs-low", "rx-frame-low", "tx-usecs-low", "tx-frame-low",
	"rx-usecs-high", "rx-frame-high", "tx-usecs-high", "tx-frame-high",
	"stats-block-usecs", "cqe-mode-rx", "cqe-mode-tx",
}

// Pause is the flow control setting (ethtool -a).
type Pause struct {
	Autoneg bool `json:"autoneg"`
	RX      bool `json:"rx"`
	TX      bool `json:"tx"`
}

// Feature is one line of ethtool -k: a netdev feature or one of ethtool's legacy names
// (rx-checksumming, scatter-gather, ...), which stand for a group of kernel features.
type Feature struct {
	Name string `json:"-"`
	On   bool   `json:"on"`
	// Fixed: the driver does not let it change.
	Fixed bool `json:"fixed"`
	// Requested is set when what was asked for differs from what is active.
	Requested *bool `json:"requested,omitempty"`
	// Group names the legacy flag this feature is listed under, if any.
	Group string `json:"group,omitempty"`
}

// Features is ethtool -k's list in ethtool's order. It encodes as a JSON object keyed by
// name, in that order.
type Features []Feature

// MarshalJSON writes the features as one object in ethtool -k order.
func (fs Features) MarshalJSON() ([]byte, error) {
	if fs == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Name)
		v, err := json.Marshal(f)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Get returns the feature called name (an ethtool -k name).
func (fs Features) Get(name string) (Feature, bool) {
	for _, f := range fs {
		if f.Name == name {
			return f, true
		}
	}
	return Feature{}, false
}

// Counter is one named counter.
type Counter struct {
	Name  string
	Value uint64
}

// Counters is an ordered list of counters (ethtool -S keeps the driver's order). It encodes
// as one JSON object in that order and decodes from one.
type Counters []Counter

// MarshalJSON writes the counters as one object in order.
func (cs Counters) MarshalJSON() ([]byte, error) {
	if cs == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c.Name)
		b.Write(k)
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(c.Value, 10))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object of counters, keeping the order of its keys.
func (cs *Counters) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*cs = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("counters: want a JSON object, have %v", tok)
	}
	out := Counters{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := kt.(string)
		vt, err := dec.Token()
		if err != nil {
			return err
		}
		n, ok := vt.(json.Number)
		if !ok {
			return fmt.Errorf("counters: %q: want a number, have %v", k, vt)
		}
		v, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil {
			return fmt.Errorf("counters: %q: %w", k, err)
		}
		out = append(out, Counter{Name: k, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*cs = out
	return nil
}

// Get returns the counter called name.
func (cs Counters) Get(name string) (uint64, bool) {
	for _, c := range cs {
		if c.Name == name {
			return c.Value, true
		}
	}
	return 0, false
}

// Stats are the interface's counters.
type Stats struct {
	// Link is the kernel's 64-bit interface statistics (rtnetlink IFLA_STATS64).
	Link LinkStats `json:"link"`
	// Driver is the driver's own counters (ethtool -S); null when it has none.
	Driver Counters `json:"driver"`
}

// LinkStats mirrors struct rtnl_link_stats64.
type LinkStats struct {
	RXPackets         uint64 `json:"rx_packets"`
	TXPackets         uint64 `json:"tx_packets"`
	RXBytes           uint64 `json:"rx_bytes"`
	TXBytes           uint64 `json:"tx_bytes"`
	RXErrors          uint64 `json:"rx_errors"`
	TXErrors          uint64 `json:"tx_errors"`
	RXDropped         uint64 `json:"rx_dropped"`
	TXDropped         uint64 `json:"tx_dropped"`
	Multicast         uint64 `json:"multicast"`
	Collisions        uint64 `json:"collisions"`
	RXLengthErrors    uint64 `json:"rx_length_errors"`
	RXOverErrors      uint64 `json:"rx_over_errors"`
	RXCRCErrors       uint64 `json:"rx_crc_errors"`
	RXFrameErrors     uint64 `json:"rx_frame_errors"`
	RXFIFOErrors      uint64 `json:"rx_fifo_errors"`
	RXMissedErrors    uint64 `json:"rx_missed_errors"`
	TXAbortedErrors   uint64 `json:"tx_aborted_errors"`
	TXCarrierErrors   uint64 `json:"tx_carrier_errors"`
	TXFIFOErrors      uint64 `json:"tx_fifo_errors"`
	TXHeartbeatErrors uint64 `json:"tx_heartbeat_errors"`
	TXWindowErrors    uint64 `json:"tx_window_errors"`
	RXCompressed      uint64 `json:"rx_compressed"`
	TXCompressed      uint64 `json:"tx_compressed"`
	RXNoHandler       uint64 `json:"rx_nohandler"`
}

// Queue is one rx-N or tx-N queue directory under /sys/class/net/IFACE/queues.
type Queue struct {
	Name string `json:"name"`
	// RPSCPUs and XPSCPUs are the sysfs hex masks as the kernel prints them; null where the
	// file does not exist (tx queues have no rps_cpus, rx queues no xps_cpus; XPS needs
	// more than one queue or CONFIG_XPS).
	RPSCPUs    *string `json:"rps_cpus"`
	RPSFlowCnt *int    `json:"rps_flow_cnt"`
	XPSCPUs    *string `json:"xps_cpus"`
}

// IRQ is one interrupt line of the interface, from /proc/interrupts and /proc/irq/N.
type IRQ struct {
	Number int    `json:"irq"`
	Name   string `json:"name"`
	Chip   string `json:"chip"`
	// PerCPU is the count of interrupts served by each CPU, index = CPU number.
	PerCPU []uint64 `json:"per_cpu"`
	Total  uint64   `json:"total"`
	// Affinity is smp_affinity_list (which CPUs may serve it); Effective is
	// effective_affinity_list where the kernel has it.
	Affinity  string  `json:"affinity"`
	Effective *string `json:"effective_affinity"`
	// Mask is smp_affinity, the same set as a hex mask (what tune writes).
	Mask string `json:"smp_affinity"`
}

// NAPI holds the software interrupt-moderation and polling knobs of the interface.
type NAPI struct {
	DeferHardIRQs   *int64 `json:"napi_defer_hard_irqs"`
	GROFlushTimeout *int64 `json:"gro_flush_timeout"`
	Threaded        *int64 `json:"threaded"`
}

// Platform is what the machine around the interface contributes: CPUs, their power
// states, the device's PCIe link, and the device tree.
type Platform struct {
	CPUs       int       `json:"cpus"`
	CPUsOnline string    `json:"cpus_online"`
	CPUFreq    []CPUFreq `json:"cpufreq"`
	CPUIdle    []CPUIdle `json:"cpuidle"`
	IRQBalance bool      `json:"irqbalance"`
	// PCIe is null for devices that are not on PCIe (a Zynq GEM is on the AXI bus).
	PCIe       *PCIe       `json:"pcie"`
	ASPMPolicy *string     `json:"aspm_policy"`
	DeviceTree *DeviceTree `json:"device_tree"`
	Kernel     string      `json:"kernel"`
}

// CPUFreq is one CPU's frequency scaling state.
type CPUFreq struct {
	CPU      int    `json:"cpu"`
	Governor string `json:"governor"`
	CurKHz   *int64 `json:"cur_khz"`
	MinKHz   *int64 `json:"min_khz"`
	MaxKHz   *int64 `json:"max_khz"`
}

// CPUIdle lists one CPU's idle states.
type CPUIdle struct {
	CPU    int         `json:"cpu"`
	States []IdleState `json:"states"`
}

// IdleState is one cpuidle state.
type IdleState struct {
	Name      string `json:"name"`
	LatencyUS int64  `json:"latency_us"`
	Disabled  bool   `json:"disabled"`
}

// PCIe is the PCIe link of the interface's device.
type PCIe struct {
	Address      string `json:"address"`
	CurrentSpeed string `json:"current_speed"`
	MaxSpeed     string `json:"max_speed"`
	CurrentWidth int    `json:"current_width"`
	MaxWidth     int    `json:"max_width"`
	// ASPM is the device's link/*aspm files (l0s_aspm, l1_aspm, ...: 1 = enabled), where
	// the kernel offers them.
	ASPM map[string]string `json:"aspm"`
}

// DeviceTree is the board identity from /proc/device-tree.
type DeviceTree struct {
	Model      string   `json:"model"`
	Compatible []string `json:"compatible"`
}

// SysctlNames are the sysctls linerate reads, in report order.
var SysctlNames = []string{
	"net.core.rmem_max", "net.core.wmem_max", "net.core.rmem_default", "net.core.wmem_default",
	"net.core.netdev_max_backlog", "net.core.dev_weight", "net.core.netdev_budget",
	"net.core.netdev_budget_usecs", "net.core.rps_sock_flow_entries",
	"net.core.busy_read", "net.core.busy_poll",
	"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control",
}

// UnmarshalJSON reads the object MarshalJSON writes, keeping its order.
func (fs *Features) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*fs = nil
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("features: want a JSON object, have %v", tok)
	}
	out := Features{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		var f Feature
		if err := dec.Decode(&f); err != nil {
			return fmt.Errorf("features: %v: %w", kt, err)
		}
		f.Name, _ = kt.(string)
		out = append(out, f)
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*fs = out
	return nil
}
