package tune

import (
	"fmt"
	"path/filepath"
	"strings"
)

// The CPU frequency family: each CPU's cpufreq governor (performance keeps a board's
// cores at full clock while it is measured).
type cpufreq struct{ files }

func init() {
	register(row{key: "cpufreq.governor", family: cpufreq{}, values: kWord, concrete: "cpufreq.cpu#.governor",
		path: func(_ string, p []string) string {
			return filepath.Join("sys/devices/system/cpu", p[1], "cpufreq/scaling_governor")
		}, order: orderCPU})
}

func (cpufreq) expand(x *expander, _ *row, s Setting) error {
	if len(x.ifc.Platform.CPUFreq) == 0 {
		return x.skip(s, "no cpufreq driver on this machine")
	}
	if len(x.st.Governors) > 0 && !contains(x.st.Governors, s.Value) {
		return x.p.perr(s, "governor %q is not available (have: %s)", s.Value, strings.Join(x.st.Governors, ", "))
	}
	for _, f := range x.ifc.Platform.CPUFreq {
		if err := x.target(s, fmt.Sprintf("cpufreq.cpu%d.governor", f.CPU), s.Value); err != nil {
			return err
		}
	}
	return nil
}
