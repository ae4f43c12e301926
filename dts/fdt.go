// Package dts reads, writes and merges flattened device trees (DTB) and device-tree
// overlays (DTBO) for the Cadence GEM nodes of Zynq boards.
//
// The blob format is the Devicetree Specification v0.4, chapter 5; the overlay format
// (fragments, __fixups__, __local_fixups__, __symbols__) is the one dtc -@ writes and
// libfdt's fdt_overlay_apply consumes (Documentation/devicetree/overlay-notes.rst). The
// node model and the encoder are u-root's pkg/dt; the decoder is written here because
// pkg/dt's trusts the header's sizes (a 4 GiB allocation from a 40-byte file), and this
// one reads files and /sys/firmware/fdt that a user hands it.
package dts

import (
	"bytes"
	"fmt"

	"github.com/u-root/u-root/pkg/dt"
	"github.com/zynqnet/linerate/internal/fdtblob"
)

// Error is bad input: a blob that is not a valid FDT, an overlay that does not fit its
// base, a value out of range, a file that cannot be read. The message names what was
// wrong; Err, when set, is the cause (a missing file's *fs.PathError, say).
type Error struct {
	Msg string
	Err error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// BadInput marks it as the user's input to fix (internal/badinput).
func (e *Error) BadInput() bool { return true }

// MaxBlob bounds a DTB: no board DTB comes near it; it bounds what a corrupt header (or
// a file given for one) can ask for.
const MaxBlob = 64 << 20

func errorf(format string, a ...any) error { return &Error{Msg: fmt.Sprintf(format, a...)} }

// Decode parses a flattened device tree of at most MaxBlob bytes (internal/fdtblob:
// every offset and length checked before use), a corrupt one an *Error.
func Decode(b []byte) (*dt.FDT, error) {
	f, err := fdtblob.Decode(b, MaxBlob)
	if err != nil {
		return nil, &Error{Msg: err.Error(), Err: err}
	}
	return f, nil
}

// Encode writes f as a version 17 blob (u-root's encoder; the header fields it does not
// compute are set here).
func Encode(f *dt.FDT) ([]byte, error) {
	f.Header.Magic = fdtblob.Magic
	f.Header.Version = 17
	f.Header.LastCompVersion = 16
	if f.ReserveEntries == nil {
		f.ReserveEntries = []dt.ReserveEntry{}
	}
	var buf bytes.Buffer
	if _, err := f.Write(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// New returns an empty tree (a root node only).
func New() *dt.FDT {
	return &dt.FDT{RootNode: &dt.Node{}, ReserveEntries: []dt.ReserveEntry{}}
}
