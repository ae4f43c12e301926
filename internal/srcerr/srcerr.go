// Package srcerr is the error of a bad input file read by line: a tune profile or a
// validate plan. Both packages name it as their own (tune.ProfileError,
// validate.PlanError); it is bad input (internal/badinput), so the CLI exits 2 on it.
package srcerr

import "fmt"

// Error is a file that cannot be used: its name, the line (0: the whole file) and what
// is wrong.
type Error struct {
	Source string
	Line   int
	Msg    string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Source, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Source, e.Msg)
}

// BadInput marks it as the user's input to fix (internal/badinput).
func (e *Error) BadInput() bool { return true }
