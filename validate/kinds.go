package validate

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/zynqnet/linerate/internal/readall"
	"github.com/zynqnet/linerate/plan"
)

// Kind is a step kind: its plan fields (decoded from the step's YAML, then checked and
// defaulted once by plan.Params' Check), its timeout, and how it runs and judges what it
// measured. Each kind is one file of this package and one line of kinds below.
type Kind interface {
	plan.Params
	Run(ctx context.Context, e Env) (Outcome, error)
}

// kinds are the step types in the order a plan usually takes them, each with what it
// does, for the plan reference (linerate help plan).
var kinds = []struct {
	name, about string
	new         func() Kind
}{
	{"link", "Waits for carrier and checks the link's speed and duplex; with speeds, a speed matrix.", func() Kind { return new(Link) }},
	{"identity", "Checks the board is who it says: a real, globally administered MAC of an expected OUI that is no placeholder, the same in the kernel as in the device tree and the board's EEPROM, and a serial of the line's pattern.", func() Kind { return new(Identity) }},
	{"phy", "Reads the PHY through MII: its id and the driver bound, and with loopback its self-test. SKIP on a port without MII access unless required.", func() Kind { return new(PHY) }},
	{"doctor", "Runs linerate doctor on the port: fails on a finding of severity fail, or on any of fail_on's. The findings go into the report.", func() Kind { return new(Doctor) }},
	{"tune", "Applies a tune profile as one transaction across the plan's ports before the steps that measure; reverted after the last step unless kept.", func() Kind { return new(Tune) }},
	{"iperf3", "An iperf3 test against the station's server: TCP throughput (and retransmits), or UDP at a bandwidth with its loss.", func() Kind { return new(Iperf3) }},
	{"frames", "Test frames through the station's reflector: loss and round-trip p99 at a rate, or with min_throughput_pct the RFC 2544 throughput search.", func() Kind { return new(Frames) }},
	{"loop", "Test frames from one port of the board to another cabled to it on the fixture (no station): a frames step's fields, one-way latency. A step of the whole board.", func() Kind { return new(Loop) }},
	{"stability", "Judges the link (carrier, speed, duplex, error counters): for its window while traffic runs, or with window 0s as the run's link watch saw it through the steps before it; any event fails it, with its time. The link is watched from the first step to the last: a flap during any other step fails that step as a stability fault.", func() Kind { return new(Stability) }},
	{"counters", "Fails when an error counter of the port rose during the run (since the run read them at its start).", func() Kind { return new(Counters) }},
	{"sweep", "Measures the port at each value of one tune knob through tune's transaction, and gives the knob back; the curve goes into the report.", func() Kind { return new(Sweep) }},
}

// StepTypes lists the step types a plan may use.
func StepTypes() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.name
	}
	return out
}

// Kinds is what plan.Parse needs to decode and check the steps.
func Kinds() plan.Kinds {
	return plan.Kinds{Names: StepTypes(), New: func(typ string) plan.Params {
		for _, k := range kinds {
			if k.name == typ {
				return k.new()
			}
		}
		return nil
	}}
}

//go:embed plans/*.yaml
var builtin embed.FS

// BuiltinNames lists the plans shipped in the binary.
func BuiltinNames() []string {
	ents, _ := builtin.ReadDir("plans")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return out
}

// BuiltinText is a built-in plan's YAML as shipped.
func BuiltinText(name string) ([]byte, error) {
	b, err := builtin.ReadFile("plans/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no built-in plan %q (%s)", name, strings.Join(BuiltinNames(), ", "))
	}
	return b, nil
}

// Parse reads and checks a plan with linerate's step kinds.
func Parse(data []byte, source string) (*plan.Plan, error) {
	return plan.Parse(data, source, Kinds())
}

// Load reads a plan: a built-in name (qemu-zc702, zc702, ...) or a YAML file.
func Load(arg string) (*plan.Plan, error) {
	if b, err := builtin.ReadFile("plans/" + arg + ".yaml"); err == nil {
		return Parse(b, "built-in plan "+arg)
	}
	b, err := readall.File(arg, plan.MaxBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &plan.Error{Source: arg, Msg: fmt.Sprintf("no such file, and not a built-in plan (%s)", strings.Join(BuiltinNames(), ", "))}
	}
	if err != nil {
		return nil, &plan.Error{Source: arg, Msg: err.Error()}
	}
	return Parse(b, arg)
}
