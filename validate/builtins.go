package validate

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/zynqnet/linerate/internal/badinput"
)

// ShowBuiltins is 'validate --list' (list) and '--print NAME' (name): whether it was
// either, and its error.
func ShowBuiltins(w io.Writer, list bool, name string) (bool, error) {
	switch {
	case list:
		return true, ListBuiltins(w)
	case name != "":
		return true, PrintBuiltin(w, name)
	}
	return false, nil
}

// ListBuiltins writes the plans shipped in the binary, a line each: its name, board,
// ports and steps ('validate --list').
func ListBuiltins(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PLAN\tBOARD\tPORTS\tSTEPS")
	for _, name := range BuiltinNames() {
		p, err := Load(name)
		if err != nil {
			return fmt.Errorf("built-in plan %s: %w", name, err) // a build that ships a bad plan
		}
		var ports, steps []string
		for _, pt := range p.Ports {
			ports = append(ports, pt.Interface)
		}
		if len(ports) == 0 {
			ports = []string{p.Interface}
		}
		for _, s := range p.Steps {
			steps = append(steps, s.ID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, p.Board, strings.Join(ports, ","), strings.Join(steps, " "))
	}
	return tw.Flush()
}

// PrintBuiltin writes a built-in plan's YAML as shipped ('validate --print NAME'): the
// start of a plan of one's own.
func PrintBuiltin(w io.Writer, name string) error {
	b, err := BuiltinText(name)
	if err != nil {
		return badinput.Errorf("--print: %v", err)
	}
	_, err = w.Write(b)
	return err
}
