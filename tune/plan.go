package tune

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/zynqnet/linerate/nic"
)

// State is what planning needs to know about one interface and its machine.
type State struct {
	Iface *nic.Interface
	// Raw are the kernel's feature bits (names as the kernel has them).
	Raw []nic.RawFeature
	// Governors lists scaling_available_governors (empty when there is no cpufreq).
	Governors []string
	// Current holds the present value of every knob the targets name (filled by Read).
	Current map[string]string
	// Absent holds knobs that cannot be read here, with the reason.
	Absent map[string]string
}

// Target is a knob with the value a profile wants for it.
type Target struct {
	Knob    Knob
	Want    string
	Setting Setting
}

// Change is one planned write.
type Change struct {
	Knob string `json:"knob"`
	Old  string `json:"old"`
	New  string `json:"new"`
	Line int    `json:"line,omitempty"`
	// Temporary marks a change its command gives back when it ends (a sweep's point, a
	// PHY in loopback): left in a journal, it blocks other changes until reverted.
	Temporary bool `json:"temporary,omitempty"`
}

// Skip is a setting that does not apply here, with why.
type Skip struct {
	Knob   string `json:"knob"`
	Reason string `json:"reason"`
	Line   int    `json:"line,omitempty"`
}

// Plan is what a tune would do.
type Plan struct {
	Iface   string   `json:"interface"`
	Profile string   `json:"profile"`
	Changes []Change `json:"changes"`
	Skipped []Skip   `json:"skipped"`
	Notes   []string `json:"notes,omitempty"`
	// Temporary: the plan's changes are given back when its command ends (Change).
	Temporary bool `json:"-"`
}

// expansion is Expand's result.
type expansion struct {
	targets []Target
	skips   []Skip
	notes   []string
}

func (p *Profile) perr(s Setting, format string, a ...any) error {
	return &ProfileError{Source: p.Source, Line: s.Line, Msg: s.Knob + ": " + fmt.Sprintf(format, a...)}
}

// Expand turns a profile's settings into concrete knob targets for one interface,
// checking every value against the interface's limits. A value out of range is an error
// naming the profile line; a knob the interface lacks is skipped (an error when required).
func Expand(p *Profile, st *State) (*expansion, error) {
	x := &expander{p: p, st: st, ifc: st.Iface, e: &expansion{}, drv: "this interface", cpus: max(st.Iface.Platform.CPUs, 1)}
	if x.ifc.Driver != nil {
		x.drv = x.ifc.Driver.Name
	}
	for _, s := range p.Settings {
		if err := x.expand(s); err != nil {
			return nil, err
		}
	}
	return x.e, nil
}

// expander is one Expand: the profile, the interface's state, and what it has found.
type expander struct {
	p    *Profile
	st   *State
	ifc  *nic.Interface
	e    *expansion
	drv  string
	cpus int
}

// expand hands a setting to its row's expander.
func (x *expander) expand(s Setting) error {
	r, ok := rowOf(s.Knob)
	if !ok {
		return x.p.perr(s, "unknown knob")
	}
	return r.expand(x, s)
}

// same: the setting is the one knob of its name (promisc, a sysctl).
func (x *expander) same(s Setting) error { return x.target(s, s.Knob, s.Value) }

func (x *expander) skip(s Setting, why string) error {
	if x.p.Required[s.Knob] {
		return x.p.perr(s, "required, but %s", why)
	}
	x.e.skips = append(x.e.skips, Skip{Knob: s.Knob, Reason: why, Line: s.Line})
	return nil
}

func (x *expander) target(s Setting, name, want string) error {
	k, err := KnobFromName(x.ifc.Name, name)
	if err != nil {
		return x.p.perr(s, "%v", err)
	}
	x.e.targets = append(x.e.targets, Target{Knob: k, Want: want, Setting: s})
	return nil
}

// cpuSet reads a CPU list setting: all, none, or a list of CPUs this machine has.
func (x *expander) cpuSet(s Setting, v string) ([]int, error) {
	switch v {
	case "all":
		all := make([]int, x.cpus)
		for i := range all {
			all[i] = i
		}
		return all, nil
	case "none":
		return nil, nil
	}
	l, err := cpuList(v)
	if err != nil {
		return nil, x.p.perr(s, "%v", err)
	}
	for _, c := range l {
		if c >= x.cpus {
			return nil, x.p.perr(s, "CPU %d does not exist (this machine has %d online: 0-%d)", c, x.cpus, x.cpus-1)
		}
	}
	return l, nil
}

// cpusFor is the CPU list of the i-th queue or IRQ: one CPU each with spread.
func (x *expander) cpusFor(s Setting, i int) ([]int, error) {
	if s.Value == "spread" {
		return []int{i % x.cpus}, nil
	}
	return x.cpuSet(s, s.Value)
}

func maskOf(l []int) string {
	if len(l) == 0 {
		return "0"
	}
	return cpuMask(l)
}

func (x *expander) rings(s Setting) error {
	r := x.ifc.Rings
	if r == nil {
		return x.skip(s, "rings not supported by "+x.drv)
	}
	max := r.RXMax
	if s.Knob == "rings.tx" {
		max = r.TXMax
	}
	want := uint64(max)
	if s.Value != "max" {
		want, _ = strconv.ParseUint(s.Value, 10, 32)
		if want > uint64(max) {
			return x.p.perr(s, "%d is above the driver's maximum %d", want, max)
		}
		if x.drv == "macb" && (want < 64 || want&(want-1) != 0) {
			return x.p.perr(s, "macb takes ring sizes that are powers of two from 64 (it rounds others): use %d", nextPow2(want))
		}
	}
	return x.target(s, s.Knob, strconv.FormatUint(want, 10))
}

func (x *expander) channels(s Setting) error {
	c := x.ifc.Channels
	if c == nil {
		return x.skip(s, "channels not supported by "+x.drv)
	}
	max := map[string]uint32{"channels.rx": c.RXMax, "channels.tx": c.TXMax, "channels.combined": c.CombinedMax}[s.Knob]
	if max == 0 {
		return x.skip(s, x.drv+" has no "+strings.TrimPrefix(s.Knob, "channels.")+" channels")
	}
	want := uint64(max)
	switch s.Value {
	case "max":
	case "cpus":
		want = min(want, uint64(x.cpus))
	default:
		want, _ = strconv.ParseUint(s.Value, 10, 32)
		if want > uint64(max) || want == 0 {
			return x.p.perr(s, "%d is outside 1..%d", want, max)
		}
	}
	return x.target(s, s.Knob, strconv.FormatUint(want, 10))
}

// coalesce: ethtool -C's usecs where the driver has hardware coalescing, else software
// coalescing through NAPI (kernel 5.7+), as on the GEM.
func (x *expander) coalesce(s Setting) error {
	us, _ := strconv.ParseUint(s.Value, 10, 32)
	if x.ifc.Coalesce != nil {
		n := 0
		for _, param := range []string{"rx-usecs", "tx-usecs"} {
			if _, ok := x.ifc.Coalesce[param]; ok {
				n++
				if err := x.target(s, "coalesce."+param, strconv.FormatUint(us, 10)); err != nil {
					return err
				}
			}
		}
		if n == 0 {
			return x.skip(s, x.drv+" reports no rx-usecs/tx-usecs")
		}
		return nil
	}
	if x.ifc.NAPI.DeferHardIRQs == nil || x.ifc.NAPI.GROFlushTimeout == nil {
		return x.skip(s, x.drv+" has no ethtool -C and this kernel has no napi_defer_hard_irqs (5.7+)")
	}
	defer_ := "0"
	if us > 0 {
		defer_ = "2"
	}
	x.e.notes = append(x.e.notes, fmt.Sprintf("coalesce.usecs %d: %s has no ethtool -C, so interrupts are coalesced in software (napi_defer_hard_irqs %s, gro_flush_timeout %d ns)", us, x.drv, defer_, us*1000))
	if err := x.target(s, "napi.defer_hard_irqs", defer_); err != nil {
		return err
	}
	return x.target(s, "napi.gro_flush_timeout", strconv.FormatUint(us*1000, 10))
}

func (x *expander) napi(s Setting) error {
	n := x.ifc.NAPI
	present := map[string]bool{"napi.defer_hard_irqs": n.DeferHardIRQs != nil, "napi.gro_flush_timeout": n.GROFlushTimeout != nil, "napi.threaded": n.Threaded != nil}[s.Knob]
	if !present {
		return x.skip(s, "this kernel has no "+strings.TrimPrefix(s.Knob, "napi.")+" for "+x.ifc.Name)
	}
	v := s.Value
	if s.Knob == "napi.threaded" {
		v = map[string]string{"on": "1", "off": "0"}[v]
	}
	return x.target(s, s.Knob, v)
}

func (x *expander) mtu(s Setting) error {
	if s.Value == "keep" {
		return nil
	}
	m, _ := strconv.Atoi(s.Value)
	if x.ifc.MaxMTU != nil && *x.ifc.MaxMTU > 0 && m > *x.ifc.MaxMTU {
		return x.p.perr(s, "%d is above %s's maximum MTU %d", m, x.drv, *x.ifc.MaxMTU)
	}
	if x.ifc.MinMTU != nil && m < *x.ifc.MinMTU {
		return x.p.perr(s, "%d is below %s's minimum MTU %d", m, x.drv, *x.ifc.MinMTU)
	}
	return x.target(s, "mtu", s.Value)
}

func (x *expander) rps(s Setting) error {
	var l []int
	if s.Knob == "rps.cpus" {
		var err error
		if l, err = x.cpuSet(s, s.Value); err != nil {
			return err
		}
	} else if n, _ := strconv.ParseUint(s.Value, 10, 32); n&(n-1) != 0 {
		return x.p.perr(s, "the kernel rounds rps_flow_cnt up to a power of two: use %d", nextPow2(n))
	}
	n := 0
	for _, q := range x.ifc.Queues {
		if !strings.HasPrefix(q.Name, "rx-") {
			continue
		}
		var err error
		if s.Knob == "rps.cpus" && q.RPSCPUs != nil {
			n++
			err = x.target(s, "queue."+q.Name+".rps_cpus", maskOf(l))
		} else if s.Knob == "rps.flow_cnt" && q.RPSFlowCnt != nil {
			n++
			err = x.target(s, "queue."+q.Name+".rps_flow_cnt", s.Value)
		}
		if err != nil {
			return err
		}
	}
	if n == 0 {
		return x.skip(s, "this kernel has no RPS (CONFIG_RPS) for "+x.ifc.Name)
	}
	return nil
}

func (x *expander) xps(s Setting) error {
	var tx []nic.Queue
	for _, q := range x.ifc.Queues {
		if strings.HasPrefix(q.Name, "tx-") && q.XPSCPUs != nil {
			tx = append(tx, q)
		}
	}
	if len(tx) == 0 {
		return x.skip(s, x.ifc.Name+" has no xps_cpus (one tx queue, or no CONFIG_XPS)")
	}
	for i, q := range tx {
		l, err := x.cpusFor(s, i)
		if err != nil {
			return err
		}
		if err := x.target(s, "queue."+q.Name+".xps_cpus", maskOf(l)); err != nil {
			return err
		}
	}
	return nil
}

func (x *expander) irqAffinity(s Setting) error {
	if len(x.ifc.IRQs) == 0 {
		return x.skip(s, "no interrupts of "+x.ifc.Name+" found in /proc/interrupts")
	}
	for i, q := range x.ifc.IRQs {
		l, err := x.cpusFor(s, i)
		if err != nil {
			return err
		}
		if len(l) == 0 {
			return x.p.perr(s, "an IRQ needs at least one CPU")
		}
		if err := x.target(s, "irq."+strconv.Itoa(q.Number)+".smp_affinity", maskOf(l)); err != nil {
			return err
		}
	}
	if x.ifc.Platform.IRQBalance {
		x.e.notes = append(x.e.notes, "irqbalance is running and will move these IRQs again: stop it, or ban them (IRQBALANCE_BANNED_CPULIST / --banirq)")
	}
	return nil
}

func (x *expander) governor(s Setting) error {
	if len(x.ifc.Platform.CPUFreq) == 0 {
		return x.skip(s, "no cpufreq driver on this machine")
	}
	if len(x.st.Governors) > 0 && !contains(x.st.Governors, s.Value) {
		return x.p.perr(s, "governor %q is not available (have: %s)", s.Value, strings.Join(x.st.Governors, ", "))
	}
	for _, f := range x.ifc.Platform.CPUFreq {
		if err := x.target(s, fmt.Sprintf("cpufreq.cpu%d.governor", f.CPU), s.Value); err != nil {
			return err
		}
	}
	return nil
}

// feature: every kernel feature the short name stands for that the driver lets change.
func (x *expander) feature(s Setting) error {
	name := strings.TrimPrefix(s.Knob, "features.")
	matches := nic.FeatureKernelNames(name, x.st.Raw)
	if len(matches) == 0 {
		return x.skip(s, fmt.Sprintf("%s has no feature %q", x.drv, name))
	}
	n := 0
	for _, f := range x.st.Raw {
		if !contains(matches, f.Name) {
			continue
		}
		if !f.HW || f.NoChange {
			continue // fixed: ethtool -K leaves these alone too
		}
		n++
		if err := x.target(s, "feature."+f.Name, s.Value); err != nil {
			return err
		}
	}
	if n == 0 {
		return x.skip(s, fmt.Sprintf("%q is fixed by %s", name, x.drv))
	}
	return nil
}

func nextPow2(n uint64) uint64 {
	p := uint64(1)
	for p < n {
		p <<= 1
	}
	if p < 64 {
		return 64
	}
	return p
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Diff compares targets with current values; targets that cannot be read here become
// skips (errors when required). Applying a profile twice plans nothing the second time.
func Diff(p *Profile, st *State, e *expansion) (*Plan, error) {
	plan := &Plan{Iface: st.Iface.Name, Profile: p.Name, Changes: []Change{}, Skipped: e.skips, Notes: e.notes}
	// A later setting for the same knob wins (coalesce.usecs then napi.* explicitly).
	var order []string
	last := map[string]Target{}
	for _, t := range e.targets {
		if _, ok := last[t.Knob.Name]; !ok {
			order = append(order, t.Knob.Name)
		}
		last[t.Knob.Name] = t
	}
	for _, name := range order {
		t := last[name]
		if why, ok := st.Absent[name]; ok {
			if p.Required[t.Setting.Knob] {
				return nil, p.perr(t.Setting, "required, but %s", why)
			}
			plan.Skipped = append(plan.Skipped, Skip{Knob: name, Reason: why, Line: t.Setting.Line})
			continue
		}
		cur := st.Current[name]
		want := t.Want
		if floor(name) && !p.Exact {
			want = atLeast(cur, want)
		}
		if equal(t.Knob, cur, want) {
			continue
		}
		plan.Changes = append(plan.Changes, Change{Knob: name, Old: cur, New: want, Line: t.Setting.Line})
	}
	if plan.Skipped == nil {
		plan.Skipped = []Skip{}
	}
	// Apply order: what bounces the link first, then ethtool, sysfs, IRQs, sysctls, CPU.
	sort.SliceStable(plan.Changes, func(i, j int) bool {
		ki, _ := KnobFromName(plan.Iface, plan.Changes[i].Knob)
		kj, _ := KnobFromName(plan.Iface, plan.Changes[j].Knob)
		if ki.class() != kj.class() {
			return ki.class() < kj.class()
		}
		// Features together, so they are written in one request.
		fi, fj := ki.def().batch, kj.def().batch
		return fi && !fj
	})
	return plan, nil
}

// atLeast is want raised, field by field, to what cur already has.
func atLeast(cur, want string) string {
	cf, wf := strings.Fields(cur), strings.Fields(want)
	if len(cf) != len(wf) {
		return want
	}
	out := make([]string, len(wf))
	for i := range wf {
		c, err1 := strconv.ParseUint(cf[i], 10, 64)
		w, err2 := strconv.ParseUint(wf[i], 10, 64)
		if err1 != nil || err2 != nil {
			return want
		}
		if c > w {
			w = c
		}
		out[i] = strconv.FormatUint(w, 10)
	}
	return strings.Join(out, " ")
}
