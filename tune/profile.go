// Package tune applies a profile to an interface as one transaction: read every knob the
// profile touches, plan (knob, old, new), journal the old values, apply in a safe order
// reading each back, and restore everything on any failure. Revert replays the journal.
//
// Background: Documentation/networking/scaling.rst (RPS, RFS, XPS, IRQ affinity),
// Documentation/networking/napi.rst (napi_defer_hard_irqs, gro_flush_timeout, threaded
// NAPI), Documentation/admin-guide/sysctl/net.rst.
package tune

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/internal/srcerr"
	"go.yaml.in/yaml/v3"
)

// Profile is a named set of knob settings.
type Profile struct {
	Name        string
	Description string
	Settings    []Setting
	// Required knobs make the tune fail where the kernel or driver lacks them; others are
	// skipped with a reason.
	Required map[string]bool
	// Source is the file it came from ("built-in" otherwise), for error messages.
	Source string
	// Exact writes every value as given, lowering sizes too (a sweep's point); a profile
	// otherwise only raises the sizes and limits a machine already has larger.
	Exact bool
}

// Setting is one "knob: value" line of a profile.
type Setting struct {
	Knob  string
	Value string
	Line  int
}

// kind says what values a knob takes.
type kind int

const (
	kCount    kind = iota // number or max (rings)
	kChannels             // number, max or cpus
	kUint                 // number
	kOnOff                // on or off
	kMTU                  // number 68..65535 or keep
	kCPUs                 // all, none or a CPU list
	kSpread               // spread, all, none or a CPU list
	kWord                 // a word (governor, congestion control)
	kTriple               // three numbers min <= default <= max (tcp_rmem)
)

// ProfileError is a profile that cannot be used, with its file and line.
type ProfileError = srcerr.Error

// ParseProfile reads a profile from YAML:
//
//	name: NAME
//	description: TEXT
//	knobs:
//	  rings.rx: max
//	  sysctl.net.core.rmem_max: 16777216
//	required: [rings.rx]
func ParseProfile(data []byte, source string) (*Profile, error) {
	perr := func(line int, format string, a ...any) error {
		return &ProfileError{Source: source, Line: line, Msg: fmt.Sprintf(format, a...)}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, perr(0, "not valid YAML: %v", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, perr(doc.Line, "a profile is a mapping with name, description, knobs and required")
	}
	p := &Profile{Required: map[string]bool{}, Source: source}
	top := doc.Content[0]
	seen := map[string]bool{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if seen[k.Value] {
			return nil, perr(k.Line, "%q given twice", k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "name", "description":
			if v.Kind != yaml.ScalarNode {
				return nil, perr(v.Line, "%s: want text", k.Value)
			}
			if k.Value == "name" {
				p.Name = v.Value
			} else {
				p.Description = v.Value
			}
		case "knobs":
			if v.Kind != yaml.MappingNode {
				return nil, perr(v.Line, "knobs: want a mapping of knob: value")
			}
			kseen := map[string]bool{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				kn, kv := v.Content[j], v.Content[j+1]
				if kseen[kn.Value] {
					return nil, perr(kn.Line, "knob %q given twice", kn.Value)
				}
				kseen[kn.Value] = true
				kd, ok := knobKind(kn.Value)
				if !ok {
					return nil, perr(kn.Line, "unknown knob %q (known: %s)", kn.Value, strings.Join(KnownKnobs(), "; "))
				}
				if kv.Kind != yaml.ScalarNode {
					return nil, perr(kv.Line, "%s: want a single value", kn.Value)
				}
				val := strings.TrimSpace(kv.Value)
				if err := checkValue(kn.Value, kd, val); err != nil {
					return nil, perr(kv.Line, "%s: %v", kn.Value, err)
				}
				p.Settings = append(p.Settings, Setting{Knob: kn.Value, Value: normalizeValue(kd, val), Line: kv.Line})
			}
		case "required":
			if v.Kind != yaml.SequenceNode {
				return nil, perr(v.Line, "required: want a list of knobs")
			}
			for _, r := range v.Content {
				if _, ok := knobKind(r.Value); !ok || r.Kind != yaml.ScalarNode {
					return nil, perr(r.Line, "required: unknown knob %q", r.Value)
				}
				p.Required[r.Value] = true
			}
		default:
			return nil, perr(k.Line, "unknown key %q (want name, description, knobs, required)", k.Value)
		}
	}
	if p.Name == "" {
		return nil, perr(top.Line, "the profile has no name")
	}
	for r := range p.Required {
		found := false
		for _, s := range p.Settings {
			found = found || s.Knob == r
		}
		if !found {
			return nil, perr(0, "required knob %q is not set under knobs", r)
		}
	}
	return p, nil
}

// CheckSetting checks one "knob: value" as a profile line would be, and gives the value
// as a profile holds it (on/off spelled one way, sysctl fields single-spaced).
func CheckSetting(knob, value string) (string, error) {
	kd, ok := knobKind(knob)
	if !ok {
		return "", fmt.Errorf("unknown knob %q (known: %s)", knob, strings.Join(KnownKnobs(), "; "))
	}
	value = strings.TrimSpace(value)
	if err := checkValue(knob, kd, value); err != nil {
		return "", fmt.Errorf("%s: %v", knob, err)
	}
	return normalizeValue(kd, value), nil
}

// CheckSettings checks every value of one knob as CheckSetting does and gives them as a
// profile holds them: the one check a sweep's values get, wherever they come from.
func CheckSettings(knob string, values []string) ([]string, error) {
	out := make([]string, len(values))
	for i, v := range values {
		n, err := CheckSetting(knob, v)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func isUint(s string) bool {
	_, err := strconv.ParseUint(s, 10, 32)
	return err == nil
}

func checkValue(name string, k kind, v string) error {
	switch k {
	case kCount:
		if v == "max" || isUint(v) && v != "0" {
			return nil
		}
		return fmt.Errorf("want a positive number or max, have %q", v)
	case kChannels:
		if v == "max" || v == "cpus" || isUint(v) {
			return nil
		}
		return fmt.Errorf("want a number, max or cpus, have %q", v)
	case kUint:
		if isUint(v) {
			return nil
		}
		return fmt.Errorf("want a number, have %q", v)
	case kOnOff:
		switch strings.ToLower(v) {
		case "on", "off", "true", "false":
			return nil
		}
		return fmt.Errorf("want on or off, have %q", v)
	case kMTU:
		if v == "keep" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 68 || n > 65535 {
			return fmt.Errorf("want 68..65535 or keep, have %q", v)
		}
		return nil
	case kCPUs, kSpread:
		switch v {
		case "all", "none":
			return nil
		case "spread":
			if k == kSpread {
				return nil
			}
		}
		if _, err := cpuList(v); err != nil {
			return fmt.Errorf("want all, none%s or a CPU list such as 0-1,3, have %q", map[bool]string{true: ", spread"}[k == kSpread], v)
		}
		return nil
	case kWord:
		if v == "" || strings.ContainsAny(v, " \t/") {
			return fmt.Errorf("want one word, have %q", v)
		}
		return nil
	case kTriple:
		f := strings.Fields(v)
		if len(f) != 3 || !isUint(f[0]) || !isUint(f[1]) || !isUint(f[2]) {
			return fmt.Errorf("want three numbers (min default max), have %q", v)
		}
		a, _ := strconv.Atoi(f[0])
		b, _ := strconv.Atoi(f[1])
		c, _ := strconv.Atoi(f[2])
		if a > b || b > c {
			return fmt.Errorf("want min <= default <= max, have %q", v)
		}
		return nil
	}
	return nil
}

func normalizeValue(k kind, v string) string {
	switch k {
	case kOnOff:
		switch strings.ToLower(v) {
		case "on", "true":
			return "on"
		}
		return "off"
	case kTriple:
		return strings.Join(strings.Fields(v), " ")
	}
	return v
}

// cpuList parses "0-1,3" (the list form) into CPUs.
func cpuList(s string) ([]int, error) {
	out := []int{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a > 4095 {
			return nil, fmt.Errorf("bad CPU %q", part)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a || b > 4095 {
				return nil, fmt.Errorf("bad CPU range %q", part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

//go:embed profiles/*.yaml
var builtin embed.FS

// generic profiles by name; board profiles come from a SoC template.
var genericProfiles = []string{"throughput", "latency", "balanced"}

// BuiltinNames lists the built-in profiles: the generic ones, then one per board.
func BuiltinNames() []string {
	out := append([]string{}, genericProfiles...)
	for _, b := range board.All() {
		out = append(out, b.Name)
	}
	return out
}

// BuiltinYAML returns a built-in profile's YAML, as `linerate profile show` prints it.
func BuiltinYAML(name string) ([]byte, error) {
	for _, g := range genericProfiles {
		if g == name {
			return builtin.ReadFile("profiles/" + name + ".yaml")
		}
	}
	b, err := board.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("unknown profile %q (built-in: %s; or give a YAML file)", name, strings.Join(BuiltinNames(), ", "))
	}
	tmpl := "profiles/zynq7000.yaml"
	if b.SoC == "zynqmp" {
		tmpl = "profiles/zynqmp.yaml"
	}
	t, err := builtin.ReadFile(tmpl)
	if err != nil {
		return nil, err
	}
	s := strings.ReplaceAll(string(t), "BOARD_NAME", b.Name)
	s = strings.ReplaceAll(s, "BOARD_MODEL", b.Model)
	return []byte(s), nil
}

// Builtin returns a built-in profile.
func Builtin(name string) (*Profile, error) {
	y, err := BuiltinYAML(name)
	if err != nil {
		return nil, err
	}
	return ParseProfile(y, "built-in profile "+name)
}

// ErrNoProfile is returned for a profile that is neither built in nor a readable file.
var ErrNoProfile = errors.New("no such profile")
