package tune

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/nic"
)

// Knob is one concrete setting of one interface or of the machine, named as the journal
// names it: rings.rx, channels.combined, coalesce.rx-usecs, feature.rx-gro, mtu, promisc,
// napi.defer_hard_irqs, napi.gro_flush_timeout, napi.threaded, queue.rx-0.rps_cpus,
// queue.rx-0.rps_flow_cnt, queue.tx-0.xps_cpus, irq.27.smp_affinity,
// sysctl.net.core.rmem_max, cpufreq.cpu0.governor.
type Knob struct {
	Name  string
	Iface string
	// Path is the sysfs/procfs file of a file knob, relative to the root; empty for knobs
	// the kernel holds (ethtool, rtnetlink).
	Path string
}

// Order classes: knobs that bounce the link first (and carrier is awaited after each),
// then ethtool settings, per-interface sysfs, IRQs, sysctls, CPU power.
func (k Knob) class() int {
	switch {
	case k.Name == "mtu" || strings.HasPrefix(k.Name, "rings.") || strings.HasPrefix(k.Name, "channels."):
		return 0
	case strings.HasPrefix(k.Name, "feature.") || strings.HasPrefix(k.Name, "coalesce.") || k.Name == "promisc":
		return 1
	case strings.HasPrefix(k.Name, "napi.") || strings.HasPrefix(k.Name, "queue."):
		return 2
	case strings.HasPrefix(k.Name, "irq."):
		return 3
	case strings.HasPrefix(k.Name, "sysctl."):
		return 4
	}
	return 5
}

// bounces reports whether changing the knob closes and reopens the interface (macb does
// so for rings; most drivers for MTU and channels).
func (k Knob) bounces() bool { return k.class() == 0 }

// isMask says the value is a CPU mask, compared as a set of CPUs.
func (k Knob) isMask() bool {
	return strings.HasSuffix(k.Name, ".rps_cpus") || strings.HasSuffix(k.Name, ".xps_cpus") || strings.HasSuffix(k.Name, ".smp_affinity")
}

// KnobFromName rebuilds a knob from its journal name.
func KnobFromName(iface, name string) (Knob, error) {
	k := Knob{Name: name, Iface: iface}
	net := filepath.Join("sys/class/net", iface)
	switch {
	case name == "mtu", name == "promisc", name == "rings.rx", name == "rings.tx",
		name == "channels.rx", name == "channels.tx", name == "channels.combined", name == "channels.other":
	case strings.HasPrefix(name, "coalesce.") && len(name) > 9, strings.HasPrefix(name, "feature.") && len(name) > 8:
	case name == "napi.defer_hard_irqs":
		k.Path = filepath.Join(net, "napi_defer_hard_irqs")
	case name == "napi.gro_flush_timeout":
		k.Path = filepath.Join(net, "gro_flush_timeout")
	case name == "napi.threaded":
		k.Path = filepath.Join(net, "threaded")
	case strings.HasPrefix(name, "queue."):
		f := strings.Split(name, ".")
		if len(f) != 3 || !validQueue(f[1]) || (f[2] != "rps_cpus" && f[2] != "rps_flow_cnt" && f[2] != "xps_cpus") {
			return k, fmt.Errorf("bad knob %q", name)
		}
		k.Path = filepath.Join(net, "queues", f[1], f[2])
	case strings.HasPrefix(name, "irq."):
		f := strings.Split(name, ".")
		if len(f) != 3 || f[2] != "smp_affinity" || !isUint(f[1]) {
			return k, fmt.Errorf("bad knob %q", name)
		}
		k.Path = filepath.Join("proc/irq", f[1], "smp_affinity")
	case strings.HasPrefix(name, "sysctl."):
		s := strings.TrimPrefix(name, "sysctl.")
		if _, ok := knobKind(name); !ok {
			return k, fmt.Errorf("bad knob %q", name)
		}
		k.Path = filepath.Join("proc/sys", strings.ReplaceAll(s, ".", "/"))
	case strings.HasPrefix(name, "cpufreq."):
		f := strings.Split(name, ".")
		if len(f) != 3 || f[2] != "governor" || !strings.HasPrefix(f[1], "cpu") || !isUint(f[1][3:]) {
			return k, fmt.Errorf("bad knob %q", name)
		}
		k.Path = filepath.Join("sys/devices/system/cpu", f[1], "cpufreq/scaling_governor")
	default:
		return k, fmt.Errorf("bad knob %q", name)
	}
	return k, nil
}

func validQueue(q string) bool {
	kind, n, ok := strings.Cut(q, "-")
	return ok && (kind == "rx" || kind == "tx") && isUint(n)
}

// System is where knobs are read and written: files under Root, and the kernel.
type System struct {
	Root   string
	Kernel nic.Kernel
	// Setter changes kernel-held knobs; nil for a captured tree, where they are skipped.
	Setter nic.Setter
	// CarrierTimeout bounds the wait for the link after a knob that bounces it.
	CarrierTimeout time.Duration
	// BeforeWrite, when set, is called before each write with the count of writes so far;
	// an error stops the write as if it had failed (fault-injection tests).
	BeforeWrite func(k Knob, n int) error
	writes      int
}

// ErrCannotSet is returned for a kernel-held knob on a system that cannot change it.
var ErrCannotSet = errors.New("cannot be changed in a captured tree")

func (s *System) ethtool(iface string) (*nic.EthtoolAnswer, *nic.LinkAnswer, error) {
	et, err := s.Kernel.Ethtool(iface)
	if err != nil {
		return nil, nil, err
	}
	links, err := s.Kernel.Links()
	if err != nil {
		return nil, nil, err
	}
	for i := range links {
		if links[i].Name == iface {
			return et, &links[i], nil
		}
	}
	return nil, nil, fmt.Errorf("interface %q is gone", iface)
}

// Read returns the knob's current value.
func (s *System) Read(k Knob) (string, error) {
	if k.Path != "" {
		v, err := nic.ReadFile(s.Root, k.Path)
		if err != nil {
			return "", err
		}
		return strings.Join(strings.Fields(v), " "), nil
	}
	et, l, err := s.ethtool(k.Iface)
	if err != nil {
		return "", err
	}
	u := func(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
	unsupported := func(part string) error {
		if why, ok := et.Unsupported[part]; ok {
			return errors.New(why)
		}
		return fmt.Errorf("%s not supported", part)
	}
	switch {
	case k.Name == "mtu":
		return strconv.Itoa(l.MTU), nil
	case k.Name == "promisc":
		return onOff(l.RawFlags&0x100 != 0), nil
	case strings.HasPrefix(k.Name, "rings."):
		if et.Rings == nil {
			return "", unsupported("rings")
		}
		if k.Name == "rings.rx" {
			return u(et.Rings.RX), nil
		}
		return u(et.Rings.TX), nil
	case strings.HasPrefix(k.Name, "channels."):
		c := et.Channels
		if c == nil {
			return "", unsupported("channels")
		}
		return u(map[string]uint32{"channels.rx": c.RX, "channels.tx": c.TX, "channels.other": c.Other, "channels.combined": c.Combined}[k.Name]), nil
	case strings.HasPrefix(k.Name, "coalesce."):
		if et.Coalesce == nil {
			return "", unsupported("coalesce")
		}
		v, ok := et.Coalesce[strings.TrimPrefix(k.Name, "coalesce.")]
		if !ok {
			return "", fmt.Errorf("the driver does not report %s", k.Name)
		}
		return u(v), nil
	case strings.HasPrefix(k.Name, "feature."):
		name := strings.TrimPrefix(k.Name, "feature.")
		for _, f := range et.Features {
			if f.Name == name {
				return onOff(f.Active), nil
			}
		}
		return "", fmt.Errorf("no feature %q", name)
	}
	return "", fmt.Errorf("knob %q cannot be read", k.Name)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Write sets the knob, and after a knob that bounces the link waits for carrier to come
// back if it was there before.
func (s *System) Write(ctx context.Context, k Knob, v string) error {
	if s.BeforeWrite != nil {
		if err := s.BeforeWrite(k, s.writes); err != nil {
			return err
		}
	}
	s.writes++
	if k.Path != "" {
		return nic.WriteFile(s.Root, k.Path, v)
	}
	if s.Setter == nil {
		return ErrCannotSet
	}
	hadCarrier := false
	if k.bounces() {
		if _, l, err := s.ethtool(k.Iface); err == nil {
			hadCarrier = l.RawFlags&0x10000 != 0
		}
	}
	n, _ := strconv.ParseUint(v, 10, 32)
	var err error
	switch {
	case k.Name == "mtu":
		err = s.Setter.SetMTU(k.Iface, int(n))
	case k.Name == "promisc":
		err = s.Setter.SetPromisc(k.Iface, v == "on")
	case strings.HasPrefix(k.Name, "rings."):
		et, _, rerr := s.ethtool(k.Iface)
		if rerr != nil {
			return rerr
		}
		if et.Rings == nil {
			return errors.New("rings not supported")
		}
		rx, tx := et.Rings.RX, et.Rings.TX
		if k.Name == "rings.rx" {
			rx = uint32(n)
		} else {
			tx = uint32(n)
		}
		err = s.Setter.SetRings(k.Iface, rx, tx)
	case strings.HasPrefix(k.Name, "channels."):
		et, _, rerr := s.ethtool(k.Iface)
		if rerr != nil {
			return rerr
		}
		if et.Channels == nil {
			return errors.New("channels not supported")
		}
		c := *et.Channels
		switch k.Name {
		case "channels.rx":
			c.RX = uint32(n)
		case "channels.tx":
			c.TX = uint32(n)
		case "channels.other":
			c.Other = uint32(n)
		default:
			c.Combined = uint32(n)
		}
		err = s.Setter.SetChannels(k.Iface, c)
	case strings.HasPrefix(k.Name, "coalesce."):
		err = s.Setter.SetCoalesce(k.Iface, nic.Coalesce{strings.TrimPrefix(k.Name, "coalesce."): uint32(n)})
	case strings.HasPrefix(k.Name, "feature."):
		err = s.Setter.SetFeatures(k.Iface, map[string]bool{strings.TrimPrefix(k.Name, "feature."): v == "on"})
	default:
		err = fmt.Errorf("knob %q cannot be written", k.Name)
	}
	if err != nil {
		return err
	}
	if hadCarrier {
		return s.waitCarrier(ctx, k.Iface)
	}
	return nil
}

// WriteFeatures sets several kernel features in one request, as ethtool -K does: the
// kernel resolves dependencies between features (tx-tcp-mangleid-segmentation needs
// tx-tcp-segmentation) over the whole set, so one at a time can be refused.
func (s *System) WriteFeatures(iface string, ks []Knob, vals []string) error {
	want := map[string]bool{}
	for i, k := range ks {
		if s.BeforeWrite != nil {
			if err := s.BeforeWrite(k, s.writes); err != nil {
				return &featureErr{knob: k.Name, err: err}
			}
		}
		s.writes++
		want[strings.TrimPrefix(k.Name, "feature.")] = vals[i] == "on"
	}
	if s.Setter == nil {
		return ErrCannotSet
	}
	return s.Setter.SetFeatures(iface, want)
}

// featureErr names the feature knob whose write was stopped.
type featureErr struct {
	knob string
	err  error
}

func (e *featureErr) Error() string { return e.err.Error() }
func (e *featureErr) Unwrap() error { return e.err }

func (s *System) waitCarrier(ctx context.Context, iface string) error {
	timeout := s.CarrierTimeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	deadline := time.Now().Add(timeout)
	for {
		links, err := s.Kernel.Links()
		if err == nil {
			for _, l := range links {
				if l.Name == iface && l.RawFlags&0x10000 != 0 {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the link did not come back within %v", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// equal compares two values of a knob: CPU masks as sets of CPUs, the rest word by word.
func equal(k Knob, a, b string) bool {
	if k.isMask() {
		ca, cb := nic.MaskCPUs(a), nic.MaskCPUs(b)
		if ca == nil && strings.Trim(a, "0,") != "" || cb == nil && strings.Trim(b, "0,") != "" {
			return a == b
		}
		if len(ca) != len(cb) {
			return false
		}
		for i := range ca {
			if ca[i] != cb[i] {
				return false
			}
		}
		return true
	}
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}

// cpuMask formats CPUs as the kernel's hex mask: 32-bit words, most significant first.
func cpuMask(cpus []int) string {
	max := 0
	for _, c := range cpus {
		if c > max {
			max = c
		}
	}
	words := make([]uint32, max/32+1)
	for _, c := range cpus {
		words[c/32] |= 1 << (uint(c) % 32)
	}
	var parts []string
	for i := len(words) - 1; i >= 0; i-- {
		if len(parts) == 0 {
			parts = append(parts, strconv.FormatUint(uint64(words[i]), 16))
		} else {
			parts = append(parts, fmt.Sprintf("%08x", words[i]))
		}
	}
	return strings.Join(parts, ",")
}
