package nic

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// This file reads sysfs and procfs under an injected root: "/" on a live system, a captured
// tree in tests and offline diagnosis. Nothing here needs the kernel beyond file reads, so
// it builds and is tested on any OS. Layout references:
// Documentation/ABI/testing/sysfs-class-net, sysfs-class-net-queues, sysfs-devices-system-cpu,
// Documentation/filesystems/proc.rst.

// read returns the trimmed content of a file, or an error naming it.
func (r fsRoot) read(p string) (string, error) {
	b, err := r.readFile(p)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// optString reads a file that may be absent (a knob the kernel lacks); nil then. A file
// that exists but cannot be read (EINVAL from a down device, EACCES) is also nil.
func (r fsRoot) optString(p string) *string {
	s, err := r.read(p)
	if err != nil {
		return nil
	}
	return &s
}

func (r fsRoot) optInt(p string) *int64 {
	s := r.optString(p)
	if s == nil {
		return nil
	}
	v, err := strconv.ParseInt(*s, 0, 64)
	if err != nil {
		return nil
	}
	return &v
}

// MissingFileError says which file a captured or live tree lacks.
type MissingFileError struct {
	Root, Path string
	Why        string
}

func (e *MissingFileError) Error() string {
	return fmt.Sprintf("%s: missing %s (%s)", e.Root, filepath.Join(e.Root, e.Path), e.Why)
}

// BadInput marks it as the user's input to fix (internal/badinput).
func (e *MissingFileError) BadInput() bool { return true }

func (r fsRoot) require(p, why string) error {
	ok, err := r.exists(p)
	if err != nil {
		return err
	}
	if !ok {
		return &MissingFileError{Root: r.root, Path: p, Why: why}
	}
	return nil
}

// readQueues lists rx-N then tx-N under /sys/class/net/IFACE/queues.
func (r fsRoot) readQueues(iface string) ([]Queue, error) {
	dir := filepath.Join("sys/class/net", iface, "queues")
	if err := r.require(dir, "the interface's queue directory in sysfs"); err != nil {
		return nil, err
	}
	ents, err := r.readDir(dir)
	if err != nil {
		return nil, err
	}
	type qn struct {
		kind string
		n    int
	}
	var names []qn
	for _, e := range ents {
		kind, num, ok := strings.Cut(e.Name(), "-")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || (kind != "rx" && kind != "tx") {
			continue
		}
		names = append(names, qn{kind, n})
	}
	sort.Slice(names, func(i, j int) bool {
		if names[i].kind != names[j].kind {
			return names[i].kind < names[j].kind
		}
		return names[i].n < names[j].n
	})
	qs := make([]Queue, 0, len(names))
	for _, q := range names {
		name := q.kind + "-" + strconv.Itoa(q.n)
		p := filepath.Join(dir, name)
		qu := Queue{Name: name}
		if q.kind == "rx" {
			qu.RPSCPUs = r.optString(filepath.Join(p, "rps_cpus"))
			if v := r.optInt(filepath.Join(p, "rps_flow_cnt")); v != nil {
				n := int(*v)
				qu.RPSFlowCnt = &n
			}
		} else {
			qu.XPSCPUs = r.optString(filepath.Join(p, "xps_cpus"))
		}
		qs = append(qs, qu)
	}
	return qs, nil
}

func (r fsRoot) readNAPI(iface string) NAPI {
	d := filepath.Join("sys/class/net", iface)
	return NAPI{
		DeferHardIRQs:   r.optInt(filepath.Join(d, "napi_defer_hard_irqs")),
		GROFlushTimeout: r.optInt(filepath.Join(d, "gro_flush_timeout")),
		Threaded:        r.optInt(filepath.Join(d, "threaded")),
	}
}

// readSysctls reads SysctlNames from /proc/sys; white space inside values (tcp_rmem's tabs)
// becomes one space.
func (r fsRoot) readSysctls() map[string]*string {
	m := make(map[string]*string, len(SysctlNames))
	for _, n := range SysctlNames {
		s := r.optString(filepath.Join("proc/sys", strings.ReplaceAll(n, ".", "/")))
		if s != nil {
			v := strings.Join(strings.Fields(*s), " ")
			s = &v
		}
		m[n] = s
	}
	return m
}

// interruptLine is one parsed line of /proc/interrupts.
type interruptLine struct {
	irq    int
	perCPU []uint64
	chip   string
	names  []string
}

// parseInterrupts parses /proc/interrupts (kernel/irq/proc.c show_interrupts): a header of
// CPU columns, then "N: count... chip [hwirq] [type] action[, action...]". Lines of
// non-numeric IRQs (NMI, LOC, ...) are skipped.
func parseInterrupts(data []byte) ([]interruptLine, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	if !sc.Scan() {
		return nil, errors.New("empty /proc/interrupts")
	}
	ncpu := len(strings.Fields(sc.Text()))
	var out []interruptLine
	for sc.Scan() {
		line := sc.Text()
		head, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		irq, err := strconv.Atoi(strings.TrimSpace(head))
		if err != nil {
			continue
		}
		f := strings.Fields(rest)
		il := interruptLine{irq: irq, perCPU: make([]uint64, 0, ncpu)}
		i := 0
		for ; i < len(f) && i < ncpu; i++ {
			v, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				break
			}
			il.perCPU = append(il.perCPU, v)
		}
		f = f[i:]
		if len(f) > 0 {
			il.chip = f[0]
			f = f[1:]
		}
		// What remains is "[hwirq] [type] actions": actions are comma separated and come
		// last; keep every token so matching by name works whatever the chip prints.
		for _, t := range f {
			t = strings.TrimSuffix(t, ",")
			if t != "" {
				il.names = append(il.names, t)
			}
		}
		out = append(out, il)
	}
	return out, sc.Err()
}

// irqNameMatches reports whether an action name belongs to iface: "eth0", "eth0-rx-0",
// "eth0:txrx", "i40e-eth0-TxRx-0", "eth0-q1".
func irqNameMatches(action, iface string) bool {
	return action == iface ||
		strings.HasPrefix(action, iface+"-") || strings.HasPrefix(action, iface+":") ||
		strings.HasPrefix(action, iface+"_") || strings.HasSuffix(action, "-"+iface) ||
		strings.Contains(action, "-"+iface+"-")
}

// readIRQs finds the interface's interrupts: lines of /proc/interrupts named after it (how
// macb and most platform drivers register them) and its PCI device's MSI/MSI-X vectors.
func (r fsRoot) readIRQs(iface string) ([]IRQ, error) {
	if err := r.require("proc/interrupts", "interrupt counts"); err != nil {
		return nil, err
	}
	data, err := r.readFile("proc/interrupts")
	if err != nil {
		return nil, err
	}
	lines, err := parseInterrupts(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.path("proc/interrupts"), err)
	}
	// Vectors of the device and, for a virtio NIC, of the PCI function above it; actions
	// named after the device itself (virtio0-input.0) besides those named after iface.
	want := map[int]bool{}
	devName := ""
	if dev, err := r.resolve(filepath.Join("sys/class/net", iface, "device")); err == nil {
		devName = filepath.Base(dev)
		for _, d := range []string{dev, filepath.Dir(dev)} {
			if ents, err := r.readDir(filepath.Join(d, "msi_irqs")); err == nil {
				for _, e := range ents {
					if n, err := strconv.Atoi(e.Name()); err == nil {
						want[n] = true
					}
				}
			}
		}
	}
	var out []IRQ
	for _, l := range lines {
		match := want[l.irq]
		name := ""
		for _, a := range l.names {
			if irqNameMatches(a, iface) || devName != "" && irqNameMatches(a, devName) {
				match = true
				name = a
			}
		}
		if !match {
			continue
		}
		if name == "" && len(l.names) > 0 {
			name = l.names[len(l.names)-1]
		}
		irq := IRQ{Number: l.irq, Name: name, Chip: l.chip, PerCPU: l.perCPU}
		for _, c := range l.perCPU {
			irq.Total += c
		}
		d := filepath.Join("proc/irq", strconv.Itoa(l.irq))
		if s := r.optString(filepath.Join(d, "smp_affinity_list")); s != nil {
			irq.Affinity = *s
		}
		irq.Effective = r.optString(filepath.Join(d, "effective_affinity_list"))
		if s := r.optString(filepath.Join(d, "smp_affinity")); s != nil {
			irq.Mask = *s
		}
		out = append(out, irq)
	}
	return out, nil
}

// ParseCPUList parses a kernel CPU list such as "0-3,6,8-9".
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpu list %q: bad entry %q", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b-a > 1<<16 {
				return nil, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// readPlatform reads what is common to all interfaces of the machine.
func (r fsRoot) readPlatform() (Platform, error) {
	var p Platform
	if err := r.require("sys/devices/system/cpu/online", "the list of online CPUs"); err != nil {
		return p, err
	}
	online, _ := r.read("sys/devices/system/cpu/online")
	cpus, err := ParseCPUList(online)
	if err != nil {
		return p, fmt.Errorf("%s: %w", r.path("sys/devices/system/cpu/online"), err)
	}
	p.CPUs, p.CPUsOnline = len(cpus), online
	for _, c := range cpus {
		d := filepath.Join("sys/devices/system/cpu", "cpu"+strconv.Itoa(c))
		if gov := r.optString(filepath.Join(d, "cpufreq/scaling_governor")); gov != nil {
			p.CPUFreq = append(p.CPUFreq, CPUFreq{
				CPU: c, Governor: *gov,
				CurKHz: r.optInt(filepath.Join(d, "cpufreq/scaling_cur_freq")),
				MinKHz: r.optInt(filepath.Join(d, "cpufreq/scaling_min_freq")),
				MaxKHz: r.optInt(filepath.Join(d, "cpufreq/scaling_max_freq")),
			})
		}
		if states := r.readIdle(filepath.Join(d, "cpuidle")); len(states) > 0 {
			p.CPUIdle = append(p.CPUIdle, CPUIdle{CPU: c, States: states})
		}
	}
	p.IRQBalance = r.processRunning("irqbalance")
	if s := r.optString("sys/module/pcie_aspm/parameters/policy"); s != nil {
		if i, j := strings.IndexByte(*s, '['), strings.IndexByte(*s, ']'); i >= 0 && j > i {
			v := (*s)[i+1 : j]
			p.ASPMPolicy = &v
		} else {
			p.ASPMPolicy = s
		}
	}
	p.DeviceTree = r.readDeviceTree()
	if s := r.optString("proc/sys/kernel/osrelease"); s != nil {
		p.Kernel = *s
	}
	return p, nil
}

func (r fsRoot) readIdle(dir string) []IdleState {
	ents, err := r.readDir(dir)
	if err != nil {
		return nil
	}
	var idx []int
	for _, e := range ents {
		if n, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "state")); err == nil && strings.HasPrefix(e.Name(), "state") {
			idx = append(idx, n)
		}
	}
	sort.Ints(idx)
	var out []IdleState
	for _, n := range idx {
		d := filepath.Join(dir, "state"+strconv.Itoa(n))
		st := IdleState{}
		if s := r.optString(filepath.Join(d, "name")); s != nil {
			st.Name = *s
		}
		if v := r.optInt(filepath.Join(d, "latency")); v != nil {
			st.LatencyUS = *v
		}
		if v := r.optInt(filepath.Join(d, "disable")); v != nil {
			st.Disabled = *v != 0
		}
		out = append(out, st)
	}
	return out
}

// processRunning looks for a process by its comm in /proc. On the live system a
// process is known by its executable's name (/proc/PID/exe, one call where its comm
// takes four, and a name the process cannot change): a kernel thread has none and is
// passed over, and most of a board's processes are kernel threads (30 of 33 on the
// emulated ZC702, where the comms took a seventh of a port's read). Another user's
// process, whose executable only its owner may see, is known by its comm.
func (r fsRoot) processRunning(comm string) bool {
	ents, err := r.readDir("proc")
	if err != nil {
		return false
	}
	live := r.live()
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if live {
			exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
			if errors.Is(err, fs.ErrNotExist) {
				continue // a kernel thread, or a process gone since the list
			}
			if err == nil {
				if strings.TrimSuffix(filepath.Base(exe), " (deleted)") == comm {
					return true
				}
				continue
			}
		}
		if s, err := r.read(filepath.Join("proc", e.Name(), "comm")); err == nil && s == comm {
			return true
		}
	}
	return false
}

// readDeviceTree reads the board identity. /proc/device-tree is a link to
// /sys/firmware/devicetree/base; the latter is read first so an absolute link in a captured
// tree cannot lead outside it.
func (r fsRoot) readDeviceTree() *DeviceTree {
	for _, base := range []string{"sys/firmware/devicetree/base", "proc/device-tree"} {
		model, err := r.readFile(filepath.Join(base, "model"))
		compat, err2 := r.readFile(filepath.Join(base, "compatible"))
		if err != nil && err2 != nil {
			continue
		}
		dt := &DeviceTree{Model: strings.TrimRight(string(model), "\x00\n")}
		for _, c := range bytes.Split(compat, []byte{0}) {
			if len(c) > 0 {
				dt.Compatible = append(dt.Compatible, string(c))
			}
		}
		return dt
	}
	return nil
}

// readPCIe reads the PCIe link of the interface's device, nil when it is not a PCIe device.
func (r fsRoot) readPCIe(iface string) *PCIe {
	dev := filepath.Join("sys/class/net", iface, "device")
	cur := r.optString(filepath.Join(dev, "current_link_speed"))
	if cur == nil {
		return nil
	}
	p := &PCIe{CurrentSpeed: *cur}
	if s := r.optString(filepath.Join(dev, "max_link_speed")); s != nil {
		p.MaxSpeed = *s
	}
	if v := r.optInt(filepath.Join(dev, "current_link_width")); v != nil {
		p.CurrentWidth = int(*v)
	}
	if v := r.optInt(filepath.Join(dev, "max_link_width")); v != nil {
		p.MaxWidth = int(*v)
	}
	if t, err := r.resolve(dev); err == nil {
		p.Address = filepath.Base(t)
	}
	if ents, err := r.readDir(filepath.Join(dev, "link")); err == nil {
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), "aspm") {
				if v := r.optString(filepath.Join(dev, "link", e.Name())); v != nil {
					if p.ASPM == nil {
						p.ASPM = map[string]string{}
					}
					p.ASPM[e.Name()] = *v
				}
			}
		}
	}
	return p
}

// MaskCPUs lists the CPUs of a sysfs CPU mask ("3", "00000003", "00000000,00000101":
// 32-bit hex words, most significant first). A malformed mask yields nil.
func MaskCPUs(mask string) []int {
	words := strings.Split(strings.TrimSpace(mask), ",")
	var out []int
	for i := len(words) - 1; i >= 0; i-- {
		v, err := strconv.ParseUint(words[i], 16, 32)
		if err != nil {
			return nil
		}
		base := (len(words) - 1 - i) * 32
		for b := 0; b < 32; b++ {
			if v&(1<<uint(b)) != 0 {
				out = append(out, base+b)
			}
		}
	}
	sort.Ints(out)
	return out
}
