// Package cli holds what linerate's command lines share: commands described once, from
// which their help, completion and manual pages are made; flag parsing that takes flags
// before, between and after positional arguments, as users type them, and says in one
// line what a bad flag takes; and the usage-error sentinel.
package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

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
// (linerate show eth0 --json), as --name, -name, --name=value or --name value; "--" ends
// flags. It returns the positional arguments. A bad flag is a usage error in one line
// that names it and says what it takes: --interval "1": want a duration such as 3s.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(pos, args[i+1:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if name == "h" || name == "help" {
			return nil, flag.ErrHelp
		}
		f := fs.Lookup(name)
		if f == nil {
			return nil, Usagef("%s: no such flag", dashed(name))
		}
		if !hasValue {
			if isBool(f) {
				value = "true"
			} else if i+1 < len(args) {
				i++
				value = args[i]
			} else {
				return nil, Usagef("%s needs a value: %s", dashed(name), docOf(f).Term)
			}
		}
		if err := fs.Set(name, value); err != nil {
			return nil, Usagef("%s %q: %s", dashed(name), value, want(f, err))
		}
	}
	return pos, nil
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// want says what a flag takes, in the words of its type (or its own error's).
func want(f *flag.Flag, err error) string {
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case time.Duration:
			return "want a duration such as 3s, 500ms or 2m"
		case bool:
			return "want true or false"
		case int, int64:
			return "want a whole number"
		case uint, uint64:
			return "want a whole number, 0 or more"
		case float64:
			return "want a number"
		}
	}
	return err.Error()
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

// FlagLine is the flags given on the command line, as they would be typed again.
func FlagLine(fs *flag.FlagSet) string {
	var parts []string
	fs.Visit(func(f *flag.Flag) {
		if isBool(f) {
			parts = append(parts, dashed(f.Name))
			return
		}
		parts = append(parts, dashed(f.Name)+" "+f.Value.String())
	})
	return strings.Join(parts, " ")
}

// OptFloat is a float flag that stays nil until it is given: a constraint that is there
// or not. It takes numbers of 0 or more.
type OptFloat struct{ P **float64 }

func (o OptFloat) String() string {
	if o.P == nil || *o.P == nil {
		return ""
	}
	return strconv.FormatFloat(**o.P, 'g', -1, 64)
}

func (o OptFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return errors.New("want a number, 0 or more")
	}
	*o.P = &v
	return nil
}

// MAC is an Ethernet address flag (six bytes).
type MAC struct{ P *net.HardwareAddr }

func (m MAC) String() string {
	if m.P == nil || *m.P == nil {
		return ""
	}
	return m.P.String()
}

func (m MAC) Set(s string) error {
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return errors.New("want six hex bytes, such as 02:00:00:00:00:0b")
	}
	*m.P = hw
	return nil
}

// Uint32 is a number flag within Min..Max; Want, when set, says what it takes instead.
type Uint32 struct {
	P        *uint32
	Min, Max uint32
	Want     string
}

func (u Uint32) String() string {
	if u.P == nil {
		return "0"
	}
	return strconv.FormatUint(uint64(*u.P), 10)
}

func (u Uint32) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || uint32(n) < u.Min || uint32(n) > u.Max {
		if u.Want != "" {
			return errors.New(u.Want)
		}
		return fmt.Errorf("want %d..%d", u.Min, u.Max)
	}
	*u.P = uint32(n)
	return nil
}

// Exit is an error with the exit status it asks for (doctor's 1 for a failing finding):
// the command line prints it as any error, then exits with Code.
type Exit struct {
	Code int
	Err  error
}

func (e *Exit) Error() string { return e.Err.Error() }
func (e *Exit) Unwrap() error { return e.Err }

// Fail is err with exit status 1: the command ran and found the fault it reports.
func Fail(err error) error { return &Exit{Code: 1, Err: err} }

// Code is the exit status of a command's error: 0 ok, an Exit's or Reported's own, 2 for
// bad input (internal/badinput: usage, an unknown interface, a bad file), 1 otherwise.
func Code(err error) int {
	var ex *Exit
	var rep *Reported
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ex):
		return ex.Code
	case errors.As(err, &rep):
		return rep.Code
	case badinput.Is(err):
		return 2
	}
	return 1
}
