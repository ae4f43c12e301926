// Package fdtblob decodes flattened device trees (the Devicetree Specification v0.4,
// chapter 5) into u-root's pkg/dt model, checking every offset and length against the
// blob first: pkg/dt's own decoder trusts the header's sizes (a 4 GiB allocation from a
// 40-byte file). The dts package reads DTBs with it, the station the FIT images it
// netboots.
package fdtblob

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/u-root/u-root/pkg/dt"
)

func errorf(format string, a ...any) error { return errors.New(fmt.Sprintf(format, a...)) }

// Magic is an FDT's first word.
const Magic = 0xd00dfeed

// MaxDepth bounds how deep nodes nest.
const MaxDepth = 64

const (
	headerV16 = 36 // bytes of a version 16 header (no size_dt_struct)
	headerV17 = 40

	tokBeginNode = 1
	tokEndNode   = 2
	tokProp      = 3
	tokNop       = 4
	tokEnd       = 9
)

// Decode parses a flattened device tree of at most max bytes. Every offset and length
// is checked against the blob before it is used, so a truncated or corrupt file is an
// error, never a panic or a large allocation.
func Decode(b []byte, max uint32) (*dt.FDT, error) {
	if len(b) < headerV16 {
		return nil, errorf("not a device tree blob: %d bytes, shorter than an FDT header", len(b))
	}
	be := binary.BigEndian
	h := dt.Header{
		Magic: be.Uint32(b[0:]), TotalSize: be.Uint32(b[4:]), OffDtStruct: be.Uint32(b[8:]),
		OffDtStrings: be.Uint32(b[12:]), OffMemRsvmap: be.Uint32(b[16:]), Version: be.Uint32(b[20:]),
		LastCompVersion: be.Uint32(b[24:]), BootCpuidPhys: be.Uint32(b[28:]), SizeDtStrings: be.Uint32(b[32:]),
	}
	if h.Magic != Magic {
		return nil, errorf("not a device tree blob: magic %#08x, want %#08x", h.Magic, uint32(Magic))
	}
	if h.Version < 16 || h.LastCompVersion > 17 {
		return nil, errorf("device tree blob version %d (compatible with %d): linerate reads versions 16 and 17", h.Version, h.LastCompVersion)
	}
	if h.TotalSize > max {
		return nil, errorf("device tree blob says it is %d bytes; refusing more than %d", h.TotalSize, max)
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
			if len(stack) >= MaxDepth {
				return nil, bad("nodes nested deeper than %d", MaxDepth)
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
