// Package badinput is linerate's one way to say "the input was wrong": an error whose
// chain holds a Marker that answers true is the user's to fix (a flag, a file, an
// interface name, a plan), and the CLI exits 2 on it instead of 1.
//
// Each package keeps its own error type, with its own fields and cause, and gives it a
// BadInput method; nothing here needs to know those types.
package badinput

import (
	"errors"
	"fmt"
)

// Marker is implemented by errors that are bad input.
type Marker interface {
	BadInput() bool
}

// Is reports whether err, or any error in its tree (Unwrap, errors.Join), is bad input.
func Is(err error) bool {
	if err == nil {
		return false
	}
	if m, ok := err.(Marker); ok && m.BadInput() {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return Is(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if Is(e) {
				return true
			}
		}
	}
	return false
}

// Error is bad input with a message and an optional cause.
type Error struct {
	Msg string
	Err error
}

func (e *Error) Error() string {
	if e.Msg == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// BadInput marks it.
func (e *Error) BadInput() bool { return true }

// Errorf formats a bad-input error; %w keeps the cause.
func Errorf(format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	return &Error{Msg: err.Error(), Err: errors.Unwrap(err)}
}

// Wrap marks err as bad input, keeping its message and cause; nil stays nil.
func Wrap(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err}
}
