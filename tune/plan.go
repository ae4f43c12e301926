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
	return r.family.expand(x, r, s)
}

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
