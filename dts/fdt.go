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
	"encoding/binary"
	"fmt"

	"github.com/u-root/u-root/pkg/dt"
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

const (
	magic     = 0xd00dfeed
	headerV16 = 36 // bytes of a version 16 header (no size_dt_struct)
	headerV17 = 40
	maxDepth  = 64

	tokBeginNode = 1
	tokEndNode   = 2
	tokProp      = 3
	tokNop       = 4
	tokEnd       = 9
)

// Decode parses a flattened device tree. Every offset and length is checked against the
// blob before it is used, so a truncated or corrupt file is an *Error, never a panic or a
// large allocation.
func Decode(b []byte) (*dt.FDT, error) {
	if len(b) < headerV16 {
		return nil, errorf("not a device tree blob: %d bytes, shorter than an FDT header", len(b))
	}
	be := binary.BigEndian
	h := dt.Header{
		Magic: be.Uint32(b[0:]), TotalSize: be.Uint32(b[4:]), OffDtStruct: be.Uint32(b[8:]),
		OffDtStrings: be.Uint32(b[12:]), OffMemRsvmap: be.Uint32(b[16:]), Version: be.Uint32(b[20:]),
		LastCompVersion: be.Uint32(b[24:]), BootCpuidPhys: be.Uint32(b[28:]), SizeDtStrings: be.Uint32(b[32:]),
	}
	if h.Magic != magic {
		return nil, errorf("not a device tree blob: magic %#08x, want %#08x", h.Magic, uint32(magic))
	}
	if h.Version < 16 || h.LastCompVersion > 17 {
		return nil, errorf("device tree blob version %d (compatible with %d): linerate reads versions 16 and 17", h.Version, h.LastCompVersion)
	}
	if h.TotalSize > MaxBlob {
		return nil, errorf("device tree blob says it is %d bytes; refusing more than %d", h.TotalSize, MaxBlob)
	}
	if int64(h.TotalSize) > int64(len(b)) {
		return nil, errorf("device tree blob is truncated: its header says %d bytes, the file has %d", h.TotalSize, len(b))
	}
	b = b[:h.TotalSize]
	hdr := uint32(headerV16)
	if h.Version >= 17 {
		hdr = headerV17
		if len(b) < headerV17 {
			return nil, errorf("device tree blob is truncated: %d bytes, shorter than a version 17 header", len(b))
		}
		h.SizeDtStruct = be.Uint32(b[36:])
	} else {
		if h.OffDtStruct > h.TotalSize {
			return nil, errorf("device tree blob: structure block at %d is past the end (%d bytes)", h.OffDtStruct, h.TotalSize)
		}
		h.SizeDtStruct = h.TotalSize - h.OffDtStruct
	}
	if !within(h.OffMemRsvmap, 0, h.TotalSize) || h.OffMemRsvmap < hdr || h.OffMemRsvmap%8 != 0 {
		return nil, errorf("device tree blob: memory reservation map at %d is outside the blob or misaligned", h.OffMemRsvmap)
	}
	if !within(h.OffDtStruct, h.SizeDtStruct, h.TotalSize) || h.OffDtStruct%4 != 0 {
		return nil, errorf("device tree blob: structure block (%d bytes at %d) is outside the blob (%d bytes) or misaligned", h.SizeDtStruct, h.OffDtStruct, h.TotalSize)
	}
	if !within(h.OffDtStrings, h.SizeDtStrings, h.TotalSize) {
		return nil, errorf("device tree blob: strings block (%d bytes at %d) is outside the blob (%d bytes)", h.SizeDtStrings, h.OffDtStrings, h.TotalSize)
	}
	f := &dt.FDT{Header: h, ReserveEntries: []dt.ReserveEntry{}}
	for off := h.OffMemRsvmap; ; off += 16 {
		if off+16 > h.TotalSize {
			return nil, errorf("device tree blob: memory reservation map runs past the end")
		}
		e := dt.ReserveEntry{Address: be.Uint64(b[off:]), Size: be.Uint64(b[off+8:])}
		if e.Address == 0 && e.Size == 0 {
			break
		}
		f.ReserveEntries = append(f.ReserveEntries, e)
	}
	root, err := decodeStruct(b[h.OffDtStruct:h.OffDtStruct+h.SizeDtStruct], b[h.OffDtStrings:h.OffDtStrings+h.SizeDtStrings], h.OffDtStruct)
	if err != nil {
		return nil, err
	}
	f.RootNode = root
	return f, nil
}

// within reports whether [off, off+size) lies inside [0, total).
func within(off, size, total uint32) bool {
	return uint64(off)+uint64(size) <= uint64(total)
}

func decodeStruct(s, strs []byte, base uint32) (*dt.Node, error) {
	be := binary.BigEndian
	var root *dt.Node
	var stack []*dt.Node
	off := 0
	bad := func(format string, a ...any) error {
		return errorf("device tree blob: structure block at byte %d: %s", int(base)+off, fmt.Sprintf(format, a...))
	}
	for {
		if off+4 > len(s) {
			return nil, bad("ends without FDT_END")
		}
		tok := be.Uint32(s[off:])
		off += 4
		switch tok {
		case tokBeginNode:
			end := bytes.IndexByte(s[off:], 0)
			if end < 0 {
				return nil, bad("node name runs past the end")
			}
			n := &dt.Node{Name: string(s[off : off+end])}
			switch {
			case len(stack) == 0 && root != nil:
				return nil, bad("a second root node")
			case len(stack) == 0:
				root = n
			case n.Name == "" || bytes.IndexByte(s[off:off+end], '/') >= 0:
				return nil, bad("invalid node name %q", n.Name)
			default:
				p := stack[len(stack)-1]
				p.Children = append(p.Children, n)
			}
			if len(stack) >= maxDepth {
				return nil, bad("nodes nested deeper than %d", maxDepth)
			}
			stack = append(stack, n)
			off = align4(off + end + 1)
		case tokEndNode:
			if len(stack) == 0 {
				return nil, bad("FDT_END_NODE without a node")
			}
			stack = stack[:len(stack)-1]
		case tokProp:
			if off+8 > len(s) {
				return nil, bad("property header runs past the end")
			}
			size, nameoff := be.Uint32(s[off:]), be.Uint32(s[off+4:])
			off += 8
			if uint64(size) > uint64(len(s)-off) {
				return nil, bad("property of %d bytes runs past the end", size)
			}
			if nameoff >= uint32(len(strs)) {
				return nil, bad("property name offset %d is outside the strings block (%d bytes)", nameoff, len(strs))
			}
			end := bytes.IndexByte(strs[nameoff:], 0)
			if end <= 0 {
				return nil, bad("property name at strings offset %d is empty or unterminated", nameoff)
			}
			if len(stack) == 0 {
				return nil, bad("property outside any node")
			}
			val := make([]byte, size)
			copy(val, s[off:])
			n := stack[len(stack)-1]
			n.Properties = append(n.Properties, dt.Property{Name: string(strs[nameoff : nameoff+uint32(end)]), Value: val})
			off = align4(off + int(size))
		case tokNop:
		case tokEnd:
			if len(stack) != 0 {
				return nil, bad("FDT_END inside node %q", stack[len(stack)-1].Name)
			}
			if root == nil {
				return nil, bad("no root node")
			}
			return root, nil
		default:
			return nil, bad("unknown token %#x", tok)
		}
		if off > len(s) {
			off = len(s)
		}
	}
}

func align4(n int) int { return (n + 3) &^ 3 }

// Encode writes f as a version 17 blob (u-root's encoder; the header fields it does not
// compute are set here).
func Encode(f *dt.FDT) ([]byte, error) {
	f.Header.Magic = magic
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
