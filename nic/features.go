package nic

import "strings"

// legacyFlag is one of ethtool's legacy offload names and the kernel feature names it
// stands for (ethtool.c off_flag_def; a pattern holds at most one '*').
type legacyFlag struct {
	short, long, pattern string
}

// legacyFlags in ethtool's order. UFO is left out as ethtool's netlink code does: no kernel
// with ethtool netlink supports it.
var legacyFlags = []legacyFlag{
	{"rx", "rx-checksumming", "rx-checksum"},
	{"tx", "tx-checksumming", "tx-checksum-*"},
	{"sg", "scatter-gather", "tx-scatter-gather*"},
	{"tso", "tcp-segmentation-offload", "tx-tcp*-segmentation"},
	{"ufo", "udp-fragmentation-offload", "tx-udp-fragmentation"},
	{"gso", "generic-segmentation-offload", "tx-generic-segmentation"},
	{"gro", "generic-receive-offload", "rx-gro"},
	{"lro", "large-receive-offload", "rx-lro"},
	{"rxvlan", "rx-vlan-offload", "rx-vlan-hw-parse"},
	{"txvlan", "tx-vlan-offload", "tx-vlan-hw-insert"},
	{"ntuple", "ntuple-filters", "rx-ntuple-filter"},
	{"rxhash", "receive-hashing", "rx-hashing"},
}

func patternMatch(name, pattern string) bool {
	star := strings.IndexByte(pattern, '*')
	if star < 0 {
		return name == pattern
	}
	pre, suf := pattern[:star], pattern[star+1:]
	return len(name) >= len(pre)+len(suf) && strings.HasPrefix(name, pre) && strings.HasSuffix(name, suf)
}

// EthtoolFeatures turns the kernel's feature bits into the list ethtool -k prints, in its
// order: each legacy name first (as the single kernel feature it maps to, or as an
// aggregate "on if any is on" followed by its members), then the remaining features.
// This follows ethtool's netlink/features.c (dump_features), so the names and values
// compare line for line with ethtool -k.
func EthtoolFeatures(raw []RawFeature) Features {
	if raw == nil {
		return nil
	}
	group := make([]int, len(raw))
	for i, f := range raw {
		group[i] = -1
		if f.Name == "" {
			continue
		}
		for j, lf := range legacyFlags {
			if patternMatch(f.Name, lf.pattern) {
				group[i] = j
				break
			}
		}
	}
	out := Features{}
	for j, lf := range legacyFlags {
		if lf.long == "udp-fragmentation-offload" {
			continue
		}
		var n int
		var any bool
		for i := range raw {
			if group[i] == j {
				n++
				any = any || raw[i].Active
			}
		}
		if n != 1 {
			out = append(out, Feature{Name: lf.long, On: any})
		}
		for i, f := range raw {
			if group[i] != j {
				continue
			}
			ft := feature(f)
			if n == 1 {
				ft.Name = lf.long
			} else {
				ft.Group = lf.long
			}
			out = append(out, ft)
		}
	}
	for i, f := range raw {
		if f.Name == "" || group[i] >= 0 {
			continue
		}
		out = append(out, feature(f))
	}
	return out
}

func feature(f RawFeature) Feature {
	ft := Feature{Name: f.Name, On: f.Active}
	switch {
	case !f.HW || f.NoChange:
		ft.Fixed = true
	case f.Active != f.Wanted:
		w := f.Wanted
		ft.Requested = &w
	}
	return ft
}

// FeatureKernelNames lists the kernel features a name stands for, as ethtool -K takes it:
// a short name (gro, tso, rx, ...) or a long one (generic-receive-offload) stands for the
// kernel features of its group; any other name is a kernel feature name itself.
func FeatureKernelNames(name string, raw []RawFeature) []string {
	pattern := ""
	for _, lf := range legacyFlags {
		if name == lf.short || name == lf.long {
			pattern = lf.pattern
		}
	}
	var out []string
	for _, f := range raw {
		if f.Name != "" && (pattern != "" && patternMatch(f.Name, pattern) || pattern == "" && f.Name == name) {
			out = append(out, f.Name)
		}
	}
	return out
}
