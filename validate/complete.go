package validate

import (
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/tune"
)

// CompletionValues are the words the shell completion offers for a kind of value, read
// live when the user presses tab: the interfaces the kernel has now, the built-in plans
// and profiles, the knob names of tune's registry, the step kinds, the boards. Nil for
// a kind it does not know.
func CompletionValues(kind string) []string {
	switch kind {
	case "interfaces":
		ents, _ := os.ReadDir("/sys/class/net")
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		sort.Strings(out)
		return out
	case "plans":
		return BuiltinNames()
	case "profiles":
		return tune.BuiltinNames()
	case "knobs":
		// The registry's keys, a prefixed family's as its prefix and the names it
		// lists (features.gro, sysctl.).
		var out []string
		for _, k := range tune.KnownKnobs() {
			if w, _, spaced := strings.Cut(k, " "); !spaced {
				out = append(out, k)
			} else {
				out = append(out, w[:strings.LastIndex(w, ".")+1]) // features.NAME: features.
			}
		}
		for _, f := range tune.FeatureShortNames {
			out = append(out, "features."+f)
		}
		sort.Strings(out)
		return slices.Compact(out)
	case "steps":
		return StepTypes()
	case "boards":
		return board.Names()
	}
	return nil
}
