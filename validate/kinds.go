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

// kinds are the step types in the order a plan usually takes them.
var kinds = []struct {
	name string
	new  func() Kind
}{
	{"link", func() Kind { return new(Link) }},
	{"identity", func() Kind { return new(Identity) }},
	{"phy", func() Kind { return new(PHY) }},
	{"doctor", func() Kind { return new(Doctor) }},
	{"tune", func() Kind { return new(Tune) }},
	{"iperf3", func() Kind { return new(Iperf3) }},
	{"frames", func() Kind { return new(Frames) }},
	{"loop", func() Kind { return new(Loop) }},
	{"stability", func() Kind { return new(Stability) }},
	{"counters", func() Kind { return new(Counters) }},
	{"sweep", func() Kind { return new(Sweep) }},
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
