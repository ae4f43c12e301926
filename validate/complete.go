package validate

import (
	"os"
	"sort"

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
		return tune.KnobWords()
	case "steps":
		return StepTypes()
	case "boards":
		return board.Names()
	}
	return nil
}
