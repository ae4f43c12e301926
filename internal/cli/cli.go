// Package cli holds what linerate's command lines share: the usage-error sentinel that
// makes the dispatcher print a command's usage, and flag parsing that takes flags before,
// between and after positional arguments, as users type them.
package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/zynqnet/linerate/internal/badinput"
)

// ErrUsage marks a usage error: the command's usage is printed and linerate exits 2 (it
// is bad input, as every error internal/badinput marks).
var ErrUsage error = &badinput.Error{Msg: "usage"}

// Usagef is a usage error saying what was wrong.
func Usagef(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// Parse parses flags that may stand before, between or after positional arguments
// (linerate show eth0 --json); "--" ends flags. It returns the positional arguments.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, Usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// Given reports whether the flag was set on the command line.
func Given(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			given = true
		}
	})
	return given
}

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Reported is an error the command has already told the user about in its own words
// (iperf3 prints "iperf3: error - ..." itself, or puts the error in its -J output): the
// CLI prints nothing more and exits with Code.
type Reported struct {
	Code int
	Err  error
}

func (e *Reported) Error() string { return e.Err.Error() }
func (e *Reported) Unwrap() error { return e.Err }
