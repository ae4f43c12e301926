package tune

import (
	"fmt"
	"io"
)

// WriteText writes a plan for a person: the changes (knob, old, new), what was skipped
// and why, and the notes.
func (plan *Plan) WriteText(w io.Writer) {
	fmt.Fprintf(w, "tune %s with profile %s: %d changes, %d skipped\n", plan.Iface, plan.Profile, len(plan.Changes), len(plan.Skipped))
	if len(plan.Changes) > 0 {
		fmt.Fprintf(w, "  %-40s %-24s %s\n", "knob", "old", "new")
		for _, c := range plan.Changes {
			fmt.Fprintf(w, "  %-40s %-24s %s\n", c.Knob, c.Old, c.New)
		}
	}
	for _, s := range plan.Skipped {
		fmt.Fprintf(w, "  skipped %s: %s\n", s.Knob, s.Reason)
	}
	for _, n := range plan.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}
