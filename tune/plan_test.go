package tune

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zynqnet/linerate/nic"
)

// fixtureState reads a show fixture tree (testdata/show) as planning sees it, with every
// target's current value taken from the tree's files or kernel answers.
func fixtureState(t *testing.T, fx string) (*State, *System) {
	t.Helper()
	root := filepath.Join("../testdata/show", fx)
	k, err := nic.OpenCaptured(root)
	if err != nil {
		t.Fatal(err)
	}
	r := &nic.Reader{Root: root, Kernel: k}
	name := map[string]string{"zynq7000-gem": "eth0", "pcie-igb": "enp3s0f0"}[fx]
	ifcs, err := r.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	et, _ := k.Ethtool(name)
	return &State{Iface: ifcs[0], Raw: et.Features, Current: map[string]string{}, Absent: map[string]string{}}, &System{Root: root, Kernel: k}
}

func plan(t *testing.T, fx, yaml string) (*Plan, error) {
	t.Helper()
	p, err := ParseProfile([]byte(yaml), "test.yaml")
	if err != nil {
		return nil, err
	}
	st, sys := fixtureState(t, fx)
	e, err := Expand(p, st)
	if err != nil {
		return nil, err
	}
	for _, tg := range e.targets {
		if v, err := sys.Read(tg.Knob); err == nil {
			st.Current[tg.Knob.Name] = v
		} else {
			st.Absent[tg.Knob.Name] = err.Error()
		}
	}
	return Diff(p, st, e)
}

func changes(p *Plan) map[string]string {
	m := map[string]string{}
	for _, c := range p.Changes {
		m[c.Knob] = c.Old + " -> " + c.New
	}
	return m
}

func TestPlanZynqGEM(t *testing.T) {
	p, err := plan(t, "zynq7000-gem", `name: t
knobs:
  rings.rx: max
  rings.tx: 1024
  coalesce.usecs: 50
  rps.cpus: all
  rps.flow_cnt: 4096
  irq.affinity: spread
  sysctl.net.core.netdev_max_backlog: 2000
  sysctl.net.core.rmem_max: 100000
  sysctl.net.ipv4.tcp_rmem: 4096 87380 4194304
  cpufreq.governor: performance
  channels.combined: cpus
  features.gro: on
`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"rings.rx":                           "512 -> 8192",
		"rings.tx":                           "512 -> 1024",
		"napi.defer_hard_irqs":               "0 -> 2",
		"napi.gro_flush_timeout":             "0 -> 50000",
		"queue.rx-0.rps_cpus":                "0 -> 3",
		"queue.rx-0.rps_flow_cnt":            "0 -> 4096",
		"irq.27.smp_affinity":                "3 -> 1",
		"sysctl.net.core.netdev_max_backlog": "1000 -> 2000",
		// floors: rmem_max 163840 stays above 100000; tcp_rmem keeps its larger default.
		"sysctl.net.ipv4.tcp_rmem": "4096 131072 3375104 -> 4096 131072 4194304",
		"cpufreq.cpu0.governor":    "ondemand -> performance",
		"cpufreq.cpu1.governor":    "ondemand -> performance",
	}
	got := changes(p)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("plan has %d changes, want %d: %v", len(got), len(want), got)
	}
	// rings first (they bounce the link), governor last.
	if p.Changes[0].Knob != "rings.rx" || p.Changes[len(p.Changes)-1].Knob != "cpufreq.cpu1.governor" {
		t.Errorf("order: %v", p.Changes)
	}
	skipped := map[string]string{}
	for _, s := range p.Skipped {
		skipped[s.Knob] = s.Reason
	}
	if !strings.Contains(skipped["channels.combined"], "not supported by macb") {
		t.Errorf("channels on macb: skipped %v", skipped)
	}
	if len(p.Notes) == 0 || !strings.Contains(p.Notes[0], "software") {
		t.Errorf("software coalescing not explained: %v", p.Notes)
	}
}

func TestPlanHardwareCoalescingAndChannels(t *testing.T) {
	p, err := plan(t, "pcie-igb", "name: t\nknobs:\n  coalesce.usecs: 50\n  channels.combined: max\n  xps.cpus: spread\n")
	if err != nil {
		t.Fatal(err)
	}
	got := changes(p)
	for k, v := range map[string]string{"coalesce.rx-usecs": "3 -> 50", "coalesce.tx-usecs": "3 -> 50", "channels.combined": "4 -> 8"} {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if _, ok := got["napi.defer_hard_irqs"]; ok {
		t.Error("software coalescing planned on a driver with ethtool -C")
	}
	// igb's 8 tx queues on 4 CPUs: spread is 1,2,4,8,1,2,4,8, which the fixture has.
	for k := range got {
		if strings.Contains(k, "xps_cpus") {
			t.Errorf("xps spread already in place, but planned %s", k)
		}
	}
}

// TestPlanTwiceIsEmpty: with every knob at the profile's value, nothing is planned.
func TestPlanTwiceIsEmpty(t *testing.T) {
	prof := "name: t\nknobs:\n  rings.rx: 512\n  rps.cpus: none\n  sysctl.net.core.dev_weight: 64\n  promisc: off\n  irq.affinity: 0-1\n"
	p, err := plan(t, "zynq7000-gem", prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 0 {
		t.Errorf("planned %v on a tree that already matches", p.Changes)
	}
}

func TestPlanRejects(t *testing.T) {
	for _, tc := range []struct {
		fx, yaml, want string
	}{
		{"zynq7000-gem", "name: t\nknobs:\n  rings.rx: 9000\n", "test.yaml:3: rings.rx: 9000 is above the driver's maximum 8192"},
		{"zynq7000-gem", "name: t\nknobs:\n  rings.rx: 1000\n", "test.yaml:3: rings.rx: macb takes ring sizes that are powers of two from 64 (it rounds others): use 1024"},
		{"zynq7000-gem", "name: t\nknobs:\n  rps.cpus: 0-3\n", "test.yaml:3: rps.cpus: CPU 2 does not exist (this machine has 2 online: 0-1)"},
		{"zynq7000-gem", "name: t\nknobs:\n  irq.affinity: 5\n", "test.yaml:3: irq.affinity: CPU 5 does not exist"},
		{"zynq7000-gem", "name: t\nknobs:\n  mtu: 9000\n", "test.yaml:3: mtu: 9000 is above macb's maximum MTU 1500"},
		{"zynq7000-gem", "name: t\nknobs:\n  rps.flow_cnt: 3000\n", "use 4096"},
		{"zynq7000-gem", "name: t\nknobs:\n  channels.combined: 4\nrequired: [channels.combined]\n", "test.yaml:3: channels.combined: required, but channels not supported by macb"},
		{"pcie-igb", "name: t\nknobs:\n  channels.combined: 9\n", "test.yaml:3: channels.combined: 9 is outside 1..8"},
	} {
		_, err := plan(t, tc.fx, tc.yaml)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

func TestParseProfileRejects(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"name: t\nknobs:\n  ringz.rx: 1\n", `test.yaml:3: unknown knob "ringz.rx"`},
		{"name: t\nknobs:\n  rings.rx: lots\n", "test.yaml:3: rings.rx: want a positive number or max"},
		{"name: t\nknobs:\n  promisc: maybe\n", "test.yaml:3: promisc: want on or off"},
		{"name: t\nknobs:\n  mtu: 20\n", "test.yaml:3: mtu: want 68..65535 or keep"},
		{"name: t\nknobs:\n  sysctl.net.ipv4.tcp_rmem: 1 2\n", "want three numbers"},
		{"name: t\nknobs:\n  sysctl.net.ipv4.tcp_rmem: 9 2 3\n", "min <= default <= max"},
		{"name: t\nknobs:\n  sysctl.kernel.panic: 1\n", `unknown knob "sysctl.kernel.panic"`},
		{"name: t\nknobs:\n  rps.cpus: [0, 1]\n", "test.yaml:3: rps.cpus: want a single value"},
		{"name: t\nknobs:\n  rps.cpus: spread\n", "want all, none or a CPU list"},
		{"name: t\nknobs:\n  rings.rx: 1\n  rings.rx: 2\n", `test.yaml:4: knob "rings.rx" given twice`},
		{"name: t\ncolour: blue\n", `test.yaml:2: unknown key "colour"`},
		{"knobs:\n  rings.rx: 1\n", "no name"},
		{"name: t\nknobs:\n  rings.rx: 1\nrequired: [mtu]\n", `required knob "mtu" is not set`},
		{"- a\n- b\n", "a profile is a mapping"},
		{"name: [", "not valid YAML"},
	} {
		_, err := ParseProfile([]byte(tc.yaml), "test.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

func TestBuiltinProfilesParse(t *testing.T) {
	for _, n := range BuiltinNames() {
		p, err := Builtin(n)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if p.Name != n || p.Description == "" || len(p.Settings) == 0 {
			t.Errorf("%s: %+v", n, p)
		}
	}
	if _, err := Builtin("turbo"); err == nil {
		t.Error("unknown built-in accepted")
	}
}

func TestMasks(t *testing.T) {
	for _, tc := range []struct {
		cpus []int
		want string
	}{{[]int{0, 1}, "3"}, {[]int{0}, "1"}, {[]int{33}, "2,00000000"}, {[]int{0, 32}, "1,00000001"}} {
		if got := cpuMask(tc.cpus); got != tc.want {
			t.Errorf("cpuMask(%v) = %q, want %q", tc.cpus, got, tc.want)
		}
	}
	k := Knob{Name: "queue.rx-0.rps_cpus"}
	if !equal(k, "00000003", "3") || equal(k, "1", "3") || !equal(k, "0", "00000000,00000000") {
		t.Error("mask comparison")
	}
}

func FuzzParseProfile(f *testing.F) {
	for _, n := range BuiltinNames()[:4] {
		y, _ := BuiltinYAML(n)
		f.Add(y)
	}
	f.Add([]byte("name: t\nknobs:\n  rps.cpus: 0-1,3\n  sysctl.net.ipv4.tcp_rmem: 1 2 3\nrequired: [rps.cpus]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseProfile(b, "fuzz.yaml")
		if err != nil {
			return
		}
		// Whatever parses must plan against a real tree without panicking.
		st, _ := fixtureState(t, "zynq7000-gem")
		if e, err := Expand(p, st); err == nil {
			Diff(p, st, e)
		}
	})
}

// TestPlanKeepsFeaturesTogether: features are planned as one run even when the profile
// interleaves them with other knobs of their class, so they go out in one request.
func TestPlanKeepsFeaturesTogether(t *testing.T) {
	p, err := plan(t, "pcie-igb", "name: t\nknobs:\n  features.gro: off\n  promisc: on\n  features.tso: off\n  coalesce.usecs: 10\n  features.rxhash: off\n")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []bool
	for _, c := range p.Changes {
		kinds = append(kinds, strings.HasPrefix(c.Knob, "feature."))
	}
	runs := 0
	for i, f := range kinds {
		if f && (i == 0 || !kinds[i-1]) {
			runs++
		}
	}
	if runs != 1 || len(p.Changes) < 6 {
		t.Errorf("features not in one run: %v", p.Changes)
	}
}

// TestPlanExact: a profile raises a size the machine has larger only to what it has; an
// exact one (a sweep's point) writes the value as given, lower too.
func TestPlanExact(t *testing.T) {
	const y = "name: t\nknobs:\n  sysctl.net.ipv4.tcp_rmem: 4096 4096 4096\n"
	for _, exact := range []bool{false, true} {
		p, err := ParseProfile([]byte(y), "test.yaml")
		if err != nil {
			t.Fatal(err)
		}
		p.Exact = exact
		st, sys := fixtureState(t, "zynq7000-gem")
		e, err := Expand(p, st)
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range e.targets {
			v, _ := sys.Read(tg.Knob)
			st.Current[tg.Knob.Name] = v
		}
		pl, err := Diff(p, st, e)
		if err != nil {
			t.Fatal(err)
		}
		got := changes(pl)["sysctl.net.ipv4.tcp_rmem"]
		want := map[bool]string{false: "", true: "4096 131072 3375104 -> 4096 4096 4096"}[exact]
		if got != want {
			t.Errorf("exact %v: %q, want %q", exact, got, want)
		}
	}
}

// countingKernel counts the ethtool and link questions asked of a kernel.
type countingKernel struct {
	nic.Kernel
	ethtool, links int
}

func (k *countingKernel) Ethtool(name string) (*nic.EthtoolAnswer, error) {
	k.ethtool++
	return k.Kernel.Ethtool(name)
}

func (k *countingKernel) Links() ([]nic.LinkAnswer, error) {
	k.links++
	return k.Kernel.Links()
}

// unusedSetter makes kernel-held knobs settable for planning; a write is a test bug
// (nil panics).
type unusedSetter struct{ nic.Setter }

// TestReadStateAsksOnce: a state's kernel-held knobs (the zc702 profile's rings,
// coalescing, features) are read from one ethtool answer and one link dump, not one
// each, and plan as they do read one by one; a read after the state asks the kernel again.
func TestReadStateAsksOnce(t *testing.T) {
	prof, err := LoadProfile("zc702")
	if err != nil {
		t.Fatal(err)
	}
	root := "../testdata/show/zynq7000-gem"
	captured, err := nic.OpenCaptured(root)
	if err != nil {
		t.Fatal(err)
	}
	k := &countingKernel{Kernel: captured}
	sys := &System{Root: root, Kernel: k, Setter: unusedSetter{}}
	reader := &nic.Reader{Root: root, Kernel: captured} // the reader's own questions are not counted
	gotState, gotExp, err := readState(sys, reader, "eth0", prof)
	if err != nil {
		t.Fatal(err)
	}
	if k.ethtool != 1 || k.links != 1 {
		t.Errorf("the state asked ethtool %d and the links %d times, want once each", k.ethtool, k.links)
	}
	var kernelHeld []string
	for name := range gotState.Current {
		if kk, _ := KnobFromName("eth0", name); kk.Path == "" {
			kernelHeld = append(kernelHeld, name)
		}
	}
	if len(kernelHeld) < 3 {
		t.Fatalf("the zc702 profile reads %d kernel-held knobs on the fixture (%v): the test proves nothing", len(kernelHeld), kernelHeld)
	}
	got, err := Diff(prof, gotState, gotExp)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := fixtureState(t, "zynq7000-gem")
	e, err := Expand(prof, st)
	if err != nil {
		t.Fatal(err)
	}
	one := &System{Root: root, Kernel: captured, Setter: unusedSetter{}}
	for _, tg := range e.targets {
		if v, err := one.Read(tg.Knob); err == nil {
			st.Current[tg.Knob.Name] = v
		} else {
			st.Absent[tg.Knob.Name] = err.Error()
		}
	}
	want, err := Diff(prof, st, e)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Changes, want.Changes) || !reflect.DeepEqual(got.Skipped, want.Skipped) {
		t.Errorf("plan from one answer: %v skipped %v\nread knob by knob: %v skipped %v", got.Changes, got.Skipped, want.Changes, want.Skipped)
	}
	before := k.ethtool
	if _, err := sys.Read(Knob{Name: knobRingsRX, Iface: "eth0"}); err != nil {
		t.Fatal(err)
	}
	if k.ethtool != before+1 {
		t.Errorf("a read after the state did not ask the kernel (%d questions, was %d)", k.ethtool, before)
	}
}

// noLinksKernel refuses the link dump a read of the port starts with.
type noLinksKernel struct{ nic.Kernel }

func (noLinksKernel) Links() ([]nic.LinkAnswer, error) {
	return nil, errors.New("the port was read again")
}

// TestReadStateFromRead: a state planned from the port as read a moment ago (a
// validation's doctor step) is the state planned from a read of its own, and does not
// read the port again; a read of another port is not taken for it.
func TestReadStateFromRead(t *testing.T) {
	prof, err := LoadProfile("zc702")
	if err != nil {
		t.Fatal(err)
	}
	root := "../testdata/show/zynq7000-gem"
	k, err := nic.OpenCaptured(root)
	if err != nil {
		t.Fatal(err)
	}
	sys := &System{Root: root, Kernel: k, Setter: unusedSetter{}}
	r := &nic.Reader{Root: root, Kernel: k}
	ifcs, err := r.Read("eth0")
	if err != nil {
		t.Fatal(err)
	}
	wantSt, wantExp, err := readState(sys, r, "eth0", prof)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Diff(prof, wantSt, wantExp)
	blind := &nic.Reader{Root: root, Kernel: noLinksKernel{k}}
	st, e, err := readStateFrom(sys, blind, ifcs[0], "eth0", prof)
	if err != nil {
		t.Fatalf("planned from the read: %v", err)
	}
	got, _ := Diff(prof, st, e)
	if !reflect.DeepEqual(got, want) || len(got.Changes) == 0 {
		t.Errorf("from the read %+v\nfrom a read of its own %+v", got, want)
	}
	other := *ifcs[0]
	other.Name = "eth1"
	if _, _, err := readStateFrom(sys, blind, &other, "eth0", prof); err == nil || !strings.Contains(err.Error(), "read again") {
		t.Errorf("another port's read was taken for eth0's: %v", err)
	}
}
