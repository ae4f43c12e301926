package tune

import (
	"path/filepath"
	"strings"
)

// The sysctl family: the machine's networking sysctls under /proc/sys, the ones a
// profile may set (sysctls). Floor ones are sizes and limits a profile raises to its
// value but never lowers where the machine has more (a tcp_rmem triple field by field),
// unless the profile is Exact. The net.core ones are global: read-only inside a network
// namespace other than the first.
type sysctlFamily struct{ files }

const sysctlPrefix = "sysctl."

func init() {
	register(row{key: sysctlPrefix, family: sysctlFamily{}, values: kUint, concrete: sysctlPrefix + "**",
		path: func(_ string, p []string) string { return filepath.Join(append([]string{"proc/sys"}, p[1:]...)...) }, order: orderSysctl})
}

// sysctls are the sysctls a profile may set.
var sysctls = []struct {
	name   string
	values kind
	floor  bool
}{
	{"net.core.rmem_max", kUint, true}, {"net.core.wmem_max", kUint, true}, {"net.core.rmem_default", kUint, true},
	{"net.core.wmem_default", kUint, true}, {"net.core.netdev_max_backlog", kUint, true}, {"net.core.dev_weight", kUint, false},
	{"net.core.netdev_budget", kUint, true}, {"net.core.netdev_budget_usecs", kUint, false}, {"net.core.busy_read", kUint, false},
	{"net.core.busy_poll", kUint, false}, {"net.core.rps_sock_flow_entries", kUint, true},
	{"net.ipv4.tcp_rmem", kTriple, true}, {"net.ipv4.tcp_wmem", kTriple, true}, {"net.ipv4.tcp_congestion_control", kWord, false},
	{"net.ipv4.tcp_slow_start_after_idle", kUint, false}, {"net.ipv4.tcp_notsent_lowat", kUint, false},
}

// named says a sysctl is one a profile may set (namedFamily).
func (sysctlFamily) named(name string) bool {
	for _, s := range sysctls {
		if s.name == name {
			return true
		}
	}
	return false
}

// valueKind is the values a sysctl takes.
func (sysctlFamily) valueKind(key string) kind {
	name := strings.TrimPrefix(key, sysctlPrefix)
	for _, s := range sysctls {
		if s.name == name {
			return s.values
		}
	}
	return kUint
}

// floor says a sysctl is raised only (concrete name parts: "sysctl", then the name's).
func (sysctlFamily) floor(parts []string) bool {
	name := strings.Join(parts[1:], ".")
	for _, s := range sysctls {
		if s.name == name {
			return s.floor
		}
	}
	return false
}

func (sysctlFamily) describe() string {
	var names []string
	for _, s := range sysctls {
		names = append(names, s.name)
	}
	return sysctlPrefix + "NAME (" + strings.Join(names, ", ") + ")"
}

// expand: the setting is the one knob of its name.
func (sysctlFamily) expand(x *expander, _ *row, s Setting) error { return x.target(s, s.Knob, s.Value) }
