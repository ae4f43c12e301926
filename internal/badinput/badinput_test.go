package badinput

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

type notBad struct{ err error }

func (e *notBad) Error() string  { return "not bad" }
func (e *notBad) Unwrap() error  { return e.err }
func (e *notBad) BadInput() bool { return false }

func TestIs(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", io.EOF, false},
		{"marked", Errorf("--rate %q: want 100%%", "x"), true},
		{"wrapped twice", fmt.Errorf("gen: %w", fmt.Errorf("eth0: %w", Wrap(io.EOF))), true},
		{"joined", errors.Join(io.EOF, Wrap(io.EOF)), true},
		{"false marker wrapping a true one", &notBad{Wrap(io.EOF)}, true},
		{"false marker alone", &notBad{io.EOF}, false},
	}
	for _, c := range cases {
		if got := Is(c.err); got != c.want {
			t.Errorf("%s: Is = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestErrorfKeepsCause(t *testing.T) {
	err := Errorf("plan %s: %w", "x.yaml", io.ErrUnexpectedEOF)
	if !errors.Is(err, io.ErrUnexpectedEOF) || err.Error() != "plan x.yaml: unexpected EOF" {
		t.Fatalf("Errorf = %q, cause kept: %v", err, errors.Is(err, io.ErrUnexpectedEOF))
	}
	if Wrap(nil) != nil {
		t.Fatal("Wrap(nil) is not nil")
	}
	if got := Wrap(io.EOF).Error(); got != "EOF" {
		t.Fatalf("Wrap keeps the message: %q", got)
	}
}

func TestIsJoinWithFalseMarkerFirst(t *testing.T) {
	if !Is(errors.Join(&notBad{io.EOF}, Wrap(io.EOF))) {
		t.Fatal("a join holding a bad-input error is bad input, whatever stands first")
	}
}
