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
	ifc := st.Iface
	e := &expansion{}
	drv := "this interface"
	if ifc.Driver != nil {
		drv = ifc.Driver.Name
	}
	cpus := ifc.Platform.CPUs
	if cpus < 1 {
		cpus = 1
	}
	skip := func(s Setting, why string) error {
		if p.Required[s.Knob] {
			return p.perr(s, "required, but %s", why)
		}
		e.skips = append(e.skips, Skip{Knob: s.Knob, Reason: why, Line: s.Line})
		return nil
	}
	target := func(s Setting, name, want string) error {
		k, err := KnobFromName(ifc.Name, name)
		if err != nil {
			return p.perr(s, "%v", err)
		}
		e.targets = append(e.targets, Target{Knob: k, Want: want, Setting: s})
		return nil
	}
	cpuSet := func(s Setting, v string) ([]int, error) {
		switch v {
		case "all":
			all := make([]int, cpus)
			for i := range all {
				all[i] = i
			}
			return all, nil
		case "none":
			return nil, nil
		}
		l, err := cpuList(v)
		if err != nil {
			return nil, p.perr(s, "%v", err)
		}
		for _, c := range l {
			if c >= cpus {
				return nil, p.perr(s, "CPU %d does not exist (this machine has %d online: 0-%d)", c, cpus, cpus-1)
			}
		}
		return l, nil
	}
	maskOf := func(l []int) string {
		if len(l) == 0 {
			return "0"
		}
		return cpuMask(l)
	}
	for _, s := range p.Settings {
		var err error
		switch k := s.Knob; {
		case k == "rings.rx" || k == "rings.tx":
			r := ifc.Rings
			if r == nil {
				err = skip(s, "rings not supported by "+drv)
				break
			}
			max := r.RXMax
			if k == "rings.tx" {
				max = r.TXMax
			}
			want := uint64(max)
			if s.Value != "max" {
				want, _ = strconv.ParseUint(s.Value, 10, 32)
				if want > uint64(max) {
					err = p.perr(s, "%d is above the driver's maximum %d", want, max)
					break
				}
				if drv == "macb" && (want < 64 || want&(want-1) != 0) {
					err = p.perr(s, "macb takes ring sizes that are powers of two from 64 (it rounds others): use %d", nextPow2(want))
					break
				}
			}
			err = target(s, k, strconv.FormatUint(want, 10))
		case strings.HasPrefix(k, "channels."):
			c := ifc.Channels
			if c == nil {
				err = skip(s, "channels not supported by "+drv)
				break
			}
			max := map[string]uint32{"channels.rx": c.RXMax, "channels.tx": c.TXMax, "channels.combined": c.CombinedMax}[k]
			if max == 0 {
				err = skip(s, drv+" has no "+strings.TrimPrefix(k, "channels.")+" channels")
				break
			}
			want := uint64(max)
			switch s.Value {
			case "max":
			case "cpus":
				if uint64(cpus) < want {
					want = uint64(cpus)
				}
			default:
				want, _ = strconv.ParseUint(s.Value, 10, 32)
				if want > uint64(max) || want == 0 {
					err = p.perr(s, "%d is outside 1..%d", want, max)
				}
			}
			if err == nil {
				err = target(s, k, strconv.FormatUint(want, 10))
			}
		case k == "coalesce.usecs":
			us, _ := strconv.ParseUint(s.Value, 10, 32)
			if ifc.Coalesce != nil {
				// Hardware coalescing: the usecs parameters the driver reports.
				n := 0
				for _, param := range []string{"rx-usecs", "tx-usecs"} {
					if _, ok := ifc.Coalesce[param]; ok {
						n++
						if err = target(s, "coalesce."+param, strconv.FormatUint(us, 10)); err != nil {
							break
						}
					}
				}
				if n == 0 && err == nil {
					err = skip(s, drv+" reports no rx-usecs/tx-usecs")
				}
				break
			}
			// No ethtool -C: software coalescing through NAPI (kernel 5.7+).
			if ifc.NAPI.DeferHardIRQs == nil || ifc.NAPI.GROFlushTimeout == nil {
				err = skip(s, drv+" has no ethtool -C and this kernel has no napi_defer_hard_irqs (5.7+)")
				break
			}
			defer_ := "0"
			if us > 0 {
				defer_ = "2"
			}
			e.notes = append(e.notes, fmt.Sprintf("coalesce.usecs %d: %s has no ethtool -C, so interrupts are coalesced in software (napi_defer_hard_irqs %s, gro_flush_timeout %d ns)", us, drv, defer_, us*1000))
			if err = target(s, "napi.defer_hard_irqs", defer_); err == nil {
				err = target(s, "napi.gro_flush_timeout", strconv.FormatUint(us*1000, 10))
			}
		case k == "napi.defer_hard_irqs" || k == "napi.gro_flush_timeout" || k == "napi.threaded":
			present := map[string]bool{"napi.defer_hard_irqs": ifc.NAPI.DeferHardIRQs != nil, "napi.gro_flush_timeout": ifc.NAPI.GROFlushTimeout != nil, "napi.threaded": ifc.NAPI.Threaded != nil}[k]
			if !present {
				err = skip(s, "this kernel has no "+strings.TrimPrefix(k, "napi.")+" for "+ifc.Name)
				break
			}
			v := s.Value
			if k == "napi.threaded" {
				v = map[string]string{"on": "1", "off": "0"}[v]
			}
			err = target(s, k, v)
		case k == "mtu":
			if s.Value == "keep" {
				break
			}
			m, _ := strconv.Atoi(s.Value)
			if ifc.MaxMTU != nil && *ifc.MaxMTU > 0 && m > *ifc.MaxMTU {
				err = p.perr(s, "%d is above %s's maximum MTU %d", m, drv, *ifc.MaxMTU)
				break
			}
			if ifc.MinMTU != nil && m < *ifc.MinMTU {
				err = p.perr(s, "%d is below %s's minimum MTU %d", m, drv, *ifc.MinMTU)
				break
			}
			err = target(s, "mtu", s.Value)
		case k == "promisc":
			err = target(s, "promisc", s.Value)
		case strings.HasPrefix(k, "features."):
			err = expandFeature(p, s, st, drv, target, skip)
		case k == "rps.cpus" || k == "rps.flow_cnt":
			var l []int
			if k == "rps.cpus" {
				if l, err = cpuSet(s, s.Value); err != nil {
					break
				}
			} else if n, _ := strconv.ParseUint(s.Value, 10, 32); n&(n-1) != 0 {
				err = p.perr(s, "the kernel rounds rps_flow_cnt up to a power of two: use %d", nextPow2(n))
				break
			}
			n := 0
			for _, q := range ifc.Queues {
				if !strings.HasPrefix(q.Name, "rx-") {
					continue
				}
				if k == "rps.cpus" && q.RPSCPUs != nil {
					n++
					err = target(s, "queue."+q.Name+".rps_cpus", maskOf(l))
				} else if k == "rps.flow_cnt" && q.RPSFlowCnt != nil {
					n++
					err = target(s, "queue."+q.Name+".rps_flow_cnt", s.Value)
				}
				if err != nil {
					break
				}
			}
			if n == 0 && err == nil {
				err = skip(s, "this kernel has no RPS (CONFIG_RPS) for "+ifc.Name)
			}
		case k == "xps.cpus":
			var tx []nic.Queue
			for _, q := range ifc.Queues {
				if strings.HasPrefix(q.Name, "tx-") && q.XPSCPUs != nil {
					tx = append(tx, q)
				}
			}
			if len(tx) == 0 {
				err = skip(s, ifc.Name+" has no xps_cpus (one tx queue, or no CONFIG_XPS)")
				break
			}
			for i, q := range tx {
				var l []int
				if s.Value == "spread" {
					l = []int{i % cpus}
				} else if l, err = cpuSet(s, s.Value); err != nil {
					break
				}
				if err = target(s, "queue."+q.Name+".xps_cpus", maskOf(l)); err != nil {
					break
				}
			}
		case k == "irq.affinity":
			if len(ifc.IRQs) == 0 {
				err = skip(s, "no interrupts of "+ifc.Name+" found in /proc/interrupts")
				break
			}
			for i, q := range ifc.IRQs {
				var l []int
				if s.Value == "spread" {
					l = []int{i % cpus}
				} else if l, err = cpuSet(s, s.Value); err != nil {
					break
				}
				if len(l) == 0 {
					err = p.perr(s, "an IRQ needs at least one CPU")
					break
				}
				if err = target(s, "irq."+strconv.Itoa(q.Number)+".smp_affinity", maskOf(l)); err != nil {
					break
				}
			}
			if err == nil && ifc.Platform.IRQBalance {
				e.notes = append(e.notes, "irqbalance is running and will move these IRQs again: stop it, or ban them (IRQBALANCE_BANNED_CPULIST / --banirq)")
			}
		case strings.HasPrefix(k, "sysctl."):
			err = target(s, k, s.Value)
		case k == "cpufreq.governor":
			if len(ifc.Platform.CPUFreq) == 0 {
				err = skip(s, "no cpufreq driver on this machine")
				break
			}
			if len(st.Governors) > 0 && !contains(st.Governors, s.Value) {
				err = p.perr(s, "governor %q is not available (have: %s)", s.Value, strings.Join(st.Governors, ", "))
				break
			}
			for _, f := range ifc.Platform.CPUFreq {
				if err = target(s, fmt.Sprintf("cpufreq.cpu%d.governor", f.CPU), s.Value); err != nil {
					break
				}
			}
		default:
			err = p.perr(s, "unknown knob")
		}
		if err != nil {
			return nil, err
		}
	}
	return e, nil
}

func expandFeature(p *Profile, s Setting, st *State, drv string, target func(Setting, string, string) error, skip func(Setting, string) error) error {
	name := strings.TrimPrefix(s.Knob, "features.")
	matches := nic.FeatureKernelNames(name, st.Raw)
	if len(matches) == 0 {
		return skip(s, fmt.Sprintf("%s has no feature %q", drv, name))
	}
	n := 0
	for _, f := range st.Raw {
		if !contains(matches, f.Name) {
			continue
		}
		if !f.HW || f.NoChange {
			continue // fixed: ethtool -K leaves these alone too
		}
		n++
		if err := target(s, "feature."+f.Name, s.Value); err != nil {
			return err
		}
	}
	if n == 0 {
		return skip(s, fmt.Sprintf("%q is fixed by %s", name, drv))
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
		if floorSysctls[name] {
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
		fi, fj := strings.HasPrefix(ki.Name, "feature."), strings.HasPrefix(kj.Name, "feature.")
		return fi && !fj
	})
	return plan, nil
}

// floorSysctls are sizes and limits: a profile raises them to its value but never lowers
// one the machine already has larger (a tcp_rmem triple field by field).
var floorSysctls = map[string]bool{
	"sysctl.net.core.rmem_max": true, "sysctl.net.core.wmem_max": true,
	"sysctl.net.core.rmem_default": true, "sysctl.net.core.wmem_default": true,
	"sysctl.net.core.netdev_max_backlog": true, "sysctl.net.core.netdev_budget": true,
	"sysctl.net.core.rps_sock_flow_entries": true,
	"sysctl.net.ipv4.tcp_rmem":              true, "sysctl.net.ipv4.tcp_wmem": true,
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
