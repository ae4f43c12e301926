package tune

import (
	"path/filepath"
	"strings"
)

// The NAPI family: the per-interface sysfs files of NAPI's software coalescing and
// threading (napi_defer_hard_irqs and gro_flush_timeout, 5.7+; threaded, 5.12+). macb's
// NAPI weight is fixed at 64: napi_rx_weight does not exist.
type napi struct{ files }

// The NAPI knobs' names (software coalescing, family_coalesce.go, writes the first two).
const (
	knobNAPIDefer    = "napi.defer_hard_irqs"
	knobNAPIGROFlush = "napi.gro_flush_timeout"
	knobNAPIThreaded = "napi.threaded"
)

func init() {
	for _, r := range []struct {
		key, file string
		values    kind
	}{{knobNAPIDefer, "napi_defer_hard_irqs", kUint}, {knobNAPIGROFlush, "gro_flush_timeout", kUint}, {knobNAPIThreaded, "threaded", kOnOff}} {
		register(row{key: r.key, family: napi{}, arg: r.file, values: r.values, concrete: r.key, path: netFile(r.file), order: orderSysfs})
	}
}

func (napi) expand(x *expander, r *row, s Setting) error {
	n := x.ifc.NAPI
	present := map[string]bool{knobNAPIDefer: n.DeferHardIRQs != nil, knobNAPIGROFlush: n.GROFlushTimeout != nil, knobNAPIThreaded: n.Threaded != nil}[s.Knob]
	if !present {
		return x.skip(s, "this kernel has no "+strings.TrimPrefix(s.Knob, "napi.")+" for "+x.ifc.Name)
	}
	v := s.Value
	if r.values == kOnOff {
		v = map[string]string{"on": "1", "off": "0"}[v]
	}
	return x.target(s, s.Knob, v)
}

// netFile is a per-interface sysfs file knob.
func netFile(file string) func(string, []string) string {
	return func(iface string, _ []string) string { return filepath.Join("sys/class/net", iface, file) }
}
