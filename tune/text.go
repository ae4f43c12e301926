package tune

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
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

// Result is one tune run: its plan and what became of it.
type Result struct {
	Plan   *Plan
	DryRun bool
	// Err is why the transaction did not go through (every knob was then restored).
	Err error
	// Journal is the journal that revert reads, when changes were applied.
	Journal string
}

// MarshalJSON writes the plan's fields with dry_run, applied, error and journal beside.
func (r *Result) MarshalJSON() ([]byte, error) {
	out := struct {
		*Plan
		DryRun  bool   `json:"dry_run"`
		Applied bool   `json:"applied"`
		Error   string `json:"error,omitempty"`
		Journal string `json:"journal,omitempty"`
	}{Plan: r.Plan, DryRun: r.DryRun, Applied: r.Journal != "", Journal: r.Journal}
	if r.Err != nil {
		out.Error = r.Err.Error()
	}
	return json.Marshal(out)
}

// WriteText writes the plan and its outcome for a person.
func (r *Result) WriteText(w io.Writer) {
	r.Plan.WriteText(w)
	switch {
	case r.DryRun:
		fmt.Fprintln(w, "dry run: nothing changed")
	case r.Err == nil && len(r.Plan.Changes) == 0:
		fmt.Fprintln(w, "nothing to change: the interface already matches the profile")
	case r.Err == nil:
		fmt.Fprintf(w, "applied %d changes; journal %s ('linerate revert %s' undoes them)\n", len(r.Plan.Changes), r.Journal, r.Plan.Iface)
	}
}

// WriteProfileList lists the built-in profiles, a line each: name and the first clause
// of the description.
func WriteProfileList(w io.Writer) error {
	for _, n := range BuiltinNames() {
		p, err := Builtin(n)
		if err != nil {
			return err
		}
		d := p.Description
		for _, sep := range []string{": ", ". ", " ("} {
			if i := strings.Index(d, sep); i > 0 {
				d = d[:i]
			}
		}
		fmt.Fprintf(w, "%-18s %s\n", n, d)
	}
	return nil
}
