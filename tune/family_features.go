package tune

import (
	"fmt"
	"strings"

	"github.com/zynqnet/linerate/nic"
)

// The features family: ethtool -K's offloads. A profile names a feature by ethtool's
// short name (features.gro) or the kernel's (features.rx-gro); the concrete knobs are the
// kernel's feature bits (feature.rx-gro), written in one request as ethtool -K writes
// them, since the kernel resolves dependencies between features over the whole set.
type features struct{}

const (
	featuresPrefix = "features."
	featurePrefix  = "feature."
)

func init() {
	register(row{key: featuresPrefix, family: features{}, values: kOnOff, concrete: featurePrefix + "*", order: orderEthtool, batch: true})
}

// FeatureShortNames are ethtool -K's short names, which a profile may use besides kernel
// feature names.
var FeatureShortNames = []string{"rx", "tx", "sg", "tso", "gso", "gro", "lro", "rxvlan", "txvlan", "ntuple", "rxhash"}

func (features) describe() string {
	return featuresPrefix + "NAME (ethtool -K short names: " + strings.Join(FeatureShortNames, ", ") + "; or kernel feature names)"
}

// expand: every kernel feature the short name stands for that the driver lets change.
func (features) expand(x *expander, _ *row, s Setting) error {
	name := strings.TrimPrefix(s.Knob, featuresPrefix)
	matches := nic.FeatureKernelNames(name, x.st.Raw)
	if len(matches) == 0 {
		return x.skip(s, fmt.Sprintf("%s has no feature %q", x.drv, name))
	}
	n := 0
	for _, f := range x.st.Raw {
		if !contains(matches, f.Name) {
			continue
		}
		if !f.HW || f.NoChange {
			continue // fixed: ethtool -K leaves these alone too
		}
		n++
		if err := x.target(s, featurePrefix+f.Name, s.Value); err != nil {
			return err
		}
	}
	if n == 0 {
		return x.skip(s, fmt.Sprintf("%q is fixed by %s", name, x.drv))
	}
	return nil
}

func (features) read(s *System, k Knob) (string, error) {
	et, _, err := s.ethtool(k.Iface)
	if err != nil {
		return "", err
	}
	name := featureName(k)
	for _, f := range et.Features {
		if f.Name == name {
			return onOff(f.Active), nil
		}
	}
	return "", fmt.Errorf("no feature %q", name)
}

func (features) write(s *System, k Knob, v string) error {
	return s.Setter.SetFeatures(k.Iface, map[string]bool{featureName(k): v == "on"})
}

// writeAll sets the features in one request, as ethtool -K does.
func (features) writeAll(s *System, iface string, ks []Knob, vals []string) error {
	want := map[string]bool{}
	for i, k := range ks {
		want[featureName(k)] = vals[i] == "on"
	}
	return s.Setter.SetFeatures(iface, want)
}

// featureName is a feature knob's kernel feature name (feature.rx-gro: rx-gro).
func featureName(k Knob) string { return strings.TrimPrefix(k.Name, featurePrefix) }
