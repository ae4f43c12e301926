package doctor

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// WriteText writes doctor's text: per interface a count line, then each finding under
// its group with why, evidence and fix.
func WriteText(w io.Writer, rep *Report) {
	for i, ifc := range rep.Interfaces {
		if i > 0 {
			fmt.Fprintln(w)
		}
		count := map[Severity]int{}
		for _, f := range ifc.Findings {
			count[f.Severity]++
		}
		who := ifc.Driver
		if ifc.Board != "" {
			who += ", board " + ifc.Board
		}
		fmt.Fprintf(w, "%s (%s): %d fail, %d warn, %d info  [profile %s, %.1fs between samples]\n",
			ifc.Name, who, count[Fail], count[Warn], count[Info], rep.Profile, rep.IntervalS)
		group := ""
		for _, f := range ifc.Findings {
			if f.Group != group {
				group = f.Group
				fmt.Fprintf(w, "  %s\n", group)
			}
			fmt.Fprintf(w, "    %-4s %s\n", strings.ToUpper(string(f.Severity)), f.ID)
			fmt.Fprintf(w, "         why:      %s\n", f.Why)
			fmt.Fprintf(w, "         evidence: %s\n", evidenceText(f.Evidence))
			fmt.Fprintf(w, "         fix:      %s\n", f.Fix)
		}
		if len(ifc.Findings) == 0 {
			fmt.Fprintln(w, "  nothing holds it back")
		}
	}
}

func evidenceText(ev map[string]any) string {
	keys := make([]string, 0, len(ev))
	for k := range ev {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, ev[k])
	}
	return strings.Join(parts, " ")
}
