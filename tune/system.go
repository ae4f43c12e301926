package tune

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/nic"
)

// Knob is one concrete setting of one interface or of the machine, named as the journal
// names it: rings.rx, channels.combined, coalesce.rx-usecs, feature.rx-gro, mtu, promisc,
// napi.defer_hard_irqs, napi.gro_flush_timeout, napi.threaded, queue.rx-0.rps_cpus,
// queue.rx-0.rps_flow_cnt, queue.tx-0.xps_cpus, irq.27.smp_affinity,
// sysctl.net.core.rmem_max, cpufreq.cpu0.governor. Its row (its family's file, family_*.go) says the rest.
type Knob struct {
	Name  string
	Iface string
	// Path is the sysfs/procfs file of a file knob, relative to the root; empty for knobs
	// the kernel holds (ethtool, rtnetlink).
	Path string
	row  *row
}

// def is the knob's row (a Knob made by hand finds it by its name).
func (k Knob) def() *row {
	if k.row != nil {
		return k.row
	}
	if r, _, ok := concreteRow(k.Name); ok {
		return r
	}
	return &row{order: orderCPU + 1, family: unknownKnob{}}
}

func (k Knob) class() int    { return k.def().order }
func (k Knob) bounces() bool { return k.def().bounces }
func (k Knob) isMask() bool  { return k.def().mask }

// unknownKnob is the family of a knob no row names (a journal of another version).
type unknownKnob struct{}

func (unknownKnob) expand(x *expander, _ *row, s Setting) error { return x.p.perr(s, "unknown knob") }

func (unknownKnob) read(_ *System, k Knob) (string, error) {
	return "", fmt.Errorf("knob %q cannot be read", k.Name)
}

func (unknownKnob) write(_ *System, k Knob, _ string) error {
	return fmt.Errorf("knob %q cannot be written", k.Name)
}

// KnobFromName rebuilds a knob from its journal name.
func KnobFromName(iface, name string) (Knob, error) {
	r, parts, ok := concreteRow(name)
	if !ok {
		return Knob{}, fmt.Errorf("bad knob %q", name)
	}
	k := Knob{Name: name, Iface: iface, row: r}
	if r.path != nil {
		k.Path = r.path(iface, parts)
	}
	return k, nil
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
	// held answers the kernel-held knobs' reads while a state is read (hold): one
	// question to the kernel for all of them, not one per knob.
	held *heldAnswer
	// Settled is how long the writes so far waited for the link to come back after a
	// knob that bounces it: measured, each wait ends when the carrier is back.
	Settled time.Duration
}

// ErrCannotSet is returned for a kernel-held knob on a system that cannot change it.
var ErrCannotSet = errors.New("cannot be changed in a captured tree")

func (s *System) ethtool(iface string) (*nic.EthtoolAnswer, *nic.LinkAnswer, error) {
	if h := s.held; h != nil && h.iface == iface {
		return h.et, h.link, nil
	}
	et, err := s.Kernel.Ethtool(iface)
	if err != nil {
		return nil, nil, err
	}
	l, err := nic.LinkOf(s.Kernel, iface)
	if errors.Is(err, nic.ErrNotFound) {
		return nil, nil, fmt.Errorf("interface %q is gone", iface)
	}
	if err != nil {
		return nil, nil, err
	}
	return et, &l, nil
}

// heldAnswer is what the kernel said of an interface, asked once for a state's reads.
type heldAnswer struct {
	iface string
	et    *nic.EthtoolAnswer
	link  *nic.LinkAnswer
}

// hold asks the kernel once what it holds of iface (ethtool's answer, its link) and
// answers every kernel-held knob's read of iface from that until release: a state's
// reads come one after the other with nothing written between them, and each asked
// the kernel everything anew (on the emulated ZC702 the zc702 profile's six took 0.19 s).
// Writes and what follows them always ask the kernel.
func (s *System) hold(iface string) (et *nic.EthtoolAnswer, release func(), err error) {
	et, l, err := s.ethtool(iface)
	if err != nil {
		return nil, nil, err
	}
	s.held = &heldAnswer{iface: iface, et: et, link: l}
	return et, func() { s.held = nil }, nil
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
	return k.def().family.read(s, k)
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
	return s.settle(ctx, k.Iface, k.bounces(), func() error { return k.def().family.write(s, k, v) })
}

// WriteBatch writes knobs of one batch family (b) in one request: kernel features as
// ethtool -K does (the kernel resolves dependencies between features, such as
// tx-tcp-mangleid-segmentation on tx-tcp-segmentation, over the whole set, so one at a
// time can be refused), ring depths as ethtool -G does (one restart of the port). When
// one of them bounces the link, the carrier is awaited once, after the request.
func (s *System) WriteBatch(ctx context.Context, b batchFamily, iface string, ks []Knob, vals []string) error {
	bounces := false
	for _, k := range ks {
		if s.BeforeWrite != nil {
			if err := s.BeforeWrite(k, s.writes); err != nil {
				return &batchErr{knob: k.Name, err: err}
			}
		}
		s.writes++
		bounces = bounces || k.bounces()
	}
	if s.Setter == nil {
		return ErrCannotSet
	}
	return s.settle(ctx, iface, bounces, func() error { return b.writeAll(s, iface, ks, vals) })
}

// settle runs a write; where it bounces the link (bounces) and the carrier was there
// before, it waits for the carrier to come back and adds the wait to Settled.
func (s *System) settle(ctx context.Context, iface string, bounces bool, write func() error) error {
	hadCarrier := false
	if bounces {
		// The link alone: ethtool's questions would add nothing here.
		if l, err := nic.LinkOf(s.Kernel, iface); err == nil {
			hadCarrier = l.RawFlags&0x10000 != 0
		}
	}
	if err := write(); err != nil {
		return err
	}
	if !hadCarrier {
		return nil
	}
	t0 := time.Now()
	defer func() { s.Settled += time.Since(t0) }()
	return s.waitCarrier(ctx, iface)
}

// batchErr names the knob of a batch (a feature, a ring depth) whose write was stopped.
type batchErr struct {
	knob string
	err  error
}

func (e *batchErr) Error() string { return e.err.Error() }
func (e *batchErr) Unwrap() error { return e.err }

func (s *System) waitCarrier(ctx context.Context, iface string) error {
	timeout := s.CarrierTimeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	if w, ok := s.Kernel.(nic.CarrierWaiter); ok {
		err := w.WaitCarrier(ctx, iface, timeout)
		if errors.Is(err, nic.ErrNoCarrier) {
			return fmt.Errorf("the link did not come back within %v", timeout)
		}
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		if l, err := nic.LinkOf(s.Kernel, iface); err == nil && l.RawFlags&0x10000 != 0 {
			return nil
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
