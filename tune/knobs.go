package tune

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/zynqnet/linerate/nic"
)

// The knob registry. A knob is one row; a row names its family. A family is one kind of
// kernel setting (rings, channels, coalescing, kernel features, link settings, NAPI, the
// queues' RPS and XPS, IRQ affinity, sysctls, CPU frequency) and is one file,
// family_*.go, holding its rows and implementing family: how a profile's setting of one
// of its knobs expands into the concrete knobs of one interface (a queue each, a CPU
// each, the kernel features behind a short name), and how the concrete knobs the kernel
// holds are read and written (those in a file under the root are read and written as
// files). Adding a knob of an existing family is one row; a new family is one file with
// its rows. Knob names are written in the family files only: planning, applying,
// reverting, sweeps, autotune and the device-tree import ask the registry
// (KnobInfo, RingKnob, ...), and TestKnobNamesStayInFamilies holds the rest of the
// tree to it.

// family is a kind of kernel setting.
type family interface {
	// expand turns setting s of row r into targets (concrete knobs) for the interface.
	expand(x *expander, r *row, s Setting) error
	// read and write a concrete knob the kernel holds (a row without path).
	read(s *System, k Knob) (string, error)
	write(s *System, k Knob, v string) error
}

// row is one knob.
type row struct {
	// key is the profile's name for the knob; a key ending in '.' takes a suffix
	// (sysctl.NAME, features.NAME).
	key    string
	family family
	// arg is what the family tells its rows apart by (a ring's or channel's side, a
	// NAPI file's name).
	arg    string
	values kind
	// concrete is the journal name of the knobs the row writes, '.'-separated: '#' in a
	// part stands for a number (queue.rx-#.rps_cpus), '*' for one name (coalesce.*),
	// "**" for the rest (sysctl.**), which the family's names say (named).
	concrete string
	// path is the file of a concrete knob under the root (parts: the name's parts);
	// nil for a knob the kernel holds, read and written by the family.
	path func(iface string, parts []string) string
	// order: knobs that bounce the link first (the carrier is awaited after each), then
	// ethtool settings, per-interface sysfs, IRQs, sysctls, CPU power.
	order   int
	bounces bool
	// mask: the value is a CPU mask, compared as a set of CPUs.
	mask bool
	// batch: the plan's knobs of this row's family are written in one request (its
	// family is a batchFamily): kernel features, whose dependencies the kernel resolves
	// over the whole set, as ethtool -K does; the two ring depths, as ethtool -G rx N
	// tx M does, so the driver restarts the port once.
	batch bool
	// dropsQueues: changing it removes queues above the new count with their RPS and
	// XPS settings, so those are journalled first (channels).
	dropsQueues bool
	// internal: linerate's own commands set it (a PHY loopback test); no profile may.
	internal bool
}

// Apply order classes.
const (
	orderLink = iota
	orderEthtool
	orderSysfs
	orderIRQ
	orderSysctl
	orderCPU
)

// rows are the knobs, each family's in the order of its file (registered by each
// family file's init).
var rows []row

// register adds a family's rows to the registry.
func register(rs ...row) { rows = append(rows, rs...) }

// namedFamily is a family whose prefix row ('.'-ended key) takes only the suffixes it
// knows (sysctl.NAME of the sysctls a profile may set).
type namedFamily interface {
	named(suffix string) bool
}

// rowOf is the row of a profile key.
func rowOf(key string) (*row, bool) {
	for i := range rows {
		r := &rows[i]
		suffix, ok := strings.CutPrefix(key, r.key)
		switch {
		case key == r.key && !strings.HasSuffix(r.key, "."):
			return r, true
		case !ok || !strings.HasSuffix(r.key, ".") || suffix == "" || strings.ContainsAny(suffix, " \t"):
			continue
		}
		if nf, ok := r.family.(namedFamily); ok && !nf.named(suffix) {
			return nil, false
		}
		return r, true
	}
	return nil, false
}

func knobKind(key string) (kind, bool) {
	r, ok := rowOf(key)
	if !ok || r.internal {
		return 0, false
	}
	if vk, ok := r.family.(interface{ valueKind(key string) kind }); ok {
		return vk.valueKind(key), true
	}
	return r.values, true
}

// KnobWords are the knob names a shell completes: every key, each prefixed family's
// prefix (sysctl.) and the feature names (features.gro, ...).
func KnobWords() []string {
	var out []string
	for _, r := range rows {
		if !r.internal {
			out = append(out, r.key) // a prefixed family's key is its prefix
		}
	}
	for _, f := range FeatureShortNames {
		out = append(out, featuresPrefix+f)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// KnownKnobs lists the profile keys, for error messages and docs.
func KnownKnobs() []string {
	var out, prefixed []string
	for _, r := range rows {
		switch {
		case r.internal:
		case strings.HasSuffix(r.key, "."):
			if d, ok := r.family.(interface{ describe() string }); ok {
				prefixed = append(prefixed, d.describe())
			}
		default:
			out = append(out, r.key)
		}
	}
	sort.Strings(out)
	return append(out, prefixed...)
}

// KnobInfo is what the registry says of a knob a profile (or a sweep) may set.
type KnobInfo struct {
	Key string
	// Bounces says writing it closes and reopens the interface: the link drops, and a
	// measurement after it waits for the carrier.
	Bounces bool
	// Order is its apply class: lower ones are applied first.
	Order int
}

// Info is the registry's row of a profile key: an unknown or internal one is an error
// naming the known keys.
func Info(key string) (KnobInfo, error) {
	r, ok := rowOf(key)
	if !ok || r.internal {
		return KnobInfo{}, fmt.Errorf("unknown knob %q (known: %s)", key, strings.Join(KnownKnobs(), "; "))
	}
	return KnobInfo{Key: key, Bounces: r.bounces, Order: r.order}, nil
}

// concreteRow is the row whose concrete knobs are named name, with the name's parts.
func concreteRow(name string) (*row, []string, bool) {
	parts := strings.Split(name, ".")
	for i := range rows {
		if matchConcrete(&rows[i], parts) {
			return &rows[i], parts, true
		}
	}
	return nil, nil, false
}

func matchConcrete(r *row, parts []string) bool {
	pp := strings.Split(r.concrete, ".")
	for i, p := range pp {
		if p == "**" {
			nf, ok := r.family.(namedFamily)
			return len(parts) > i && (!ok || nf.named(strings.Join(parts[i:], ".")))
		}
		if i >= len(parts) || parts[i] == "" {
			return false
		}
		switch pre, _, hasNum := strings.Cut(p, "#"); {
		case p == "*":
		case hasNum:
			n, ok := strings.CutPrefix(parts[i], pre)
			if !ok || !isUint(n) {
				return false
			}
		case p != parts[i]:
			return false
		}
	}
	return len(parts) == len(pp)
}

// batchFamily is a family whose knobs of a plan are written in one request.
type batchFamily interface {
	family
	// writeAll writes ks (all of the family, one interface) to vals at once.
	writeAll(s *System, iface string, ks []Knob, vals []string) error
}

// batchOf is the family the concrete knob is written with in one request, together
// with the plan's other knobs of that family; nil: written alone.
func batchOf(name string) batchFamily {
	r, _, ok := concreteRow(name)
	if !ok || !r.batch {
		return nil
	}
	b, _ := r.family.(batchFamily)
	return b
}

// floor says a concrete knob is raised only, never lowered where the machine has more
// (a family's sizes and limits: see family_sysctl.go).
func floor(name string) bool {
	r, parts, ok := concreteRow(name)
	if !ok {
		return false
	}
	f, ok := r.family.(interface{ floor(parts []string) bool })
	return ok && f.floor(parts)
}

// queueKnobs are the journal names of every per-queue knob of one queue (rx-0, tx-1):
// the rows whose concrete name is queue.DIR-#.FILE.
func queueKnobs(queue string) []string {
	var out []string
	for _, r := range rows {
		p := strings.Split(r.concrete, ".")
		if len(p) == 3 && r.family == (queues{}) {
			if pre, _, _ := strings.Cut(p[1], "#"); strings.HasPrefix(queue, pre) {
				out = append(out, p[0]+"."+queue+"."+p[2])
			}
		}
	}
	return out
}

// Helpers the families share.

// files is the read and write of a family whose knobs are files under the root (every
// row has a path, and System reads and writes them as files).
type files struct{}

func (files) read(_ *System, k Knob) (string, error) {
	return "", fmt.Errorf("knob %q has no file here", k.Name)
}

func (files) write(_ *System, k Knob, _ string) error {
	return fmt.Errorf("knob %q has no file here", k.Name)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func u32(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

func unsupported(et *nic.EthtoolAnswer, part string) error {
	if why, ok := et.Unsupported[part]; ok {
		return errors.New(why)
	}
	return fmt.Errorf("%s not supported", part)
}
