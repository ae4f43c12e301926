package dts

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestRoundTrip decodes real board DTBs and hand-written ones and encodes them again:
// dtc must see the same tree.
func TestRoundTrip(t *testing.T) {
	blobs := map[string][]byte{
		"zc702":         kernelDTB(t, "zc702"),
		"zcu102":        kernelDTB(t, "zcu102"),
		"zynq7000-base": compileFile(t, "zynq7000-base.dts"),
		"zynqmp-base":   compileFile(t, "zynqmp-base.dts"),
		"complex":       compileFile(t, "complex-overlay.dts"),
	}
	for name, b := range blobs {
		t.Run(name, func(t *testing.T) {
			f := mustDecode(t, b)
			out := mustEncode(t, f)
			if got, want := canonical(t, out), canonical(t, b); got != want {
				t.Errorf("re-encoded tree differs from the original:\n%s", firstDiff(got, want))
			}
			// And our decoder reads our encoder's output to the same tree.
			again := mustEncode(t, mustDecode(t, out))
			if string(again) != string(out) {
				t.Error("decode(encode(x)) is not stable")
			}
		})
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + itoa(i+1) + ":\n  got:  " + al[i] + "\n  want: " + bl[i]
		}
	}
	return "lengths differ: " + itoa(len(al)) + " vs " + itoa(len(bl)) + " lines"
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestDecodeBad feeds broken blobs: each must give an *Error that says what is wrong.
func TestDecodeBad(t *testing.T) {
	good := compileFile(t, "zynq7000-base.dts")
	set := func(off int, v uint32) []byte {
		b := append([]byte{}, good...)
		binary.BigEndian.PutUint32(b[off:], v)
		return b
	}
	structOff := binary.BigEndian.Uint32(good[8:])
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "shorter than an FDT header"},
		{"text", []byte("/dts-v1/;\n/ {\n\tmodel = \"Xilinx ZC702 board\";\n};\n"), "magic"},
		{"truncated", good[:len(good)/2], "truncated"},
		{"huge totalsize", set(4, 0xfffffff0), "refusing"},
		{"old version", set(20, 3), "version 3"},
		{"struct outside", set(8, uint32(len(good))), "structure block"},
		{"strings outside", set(32, 0x7fffffff), "strings block"},
		{"bad token", set(int(structOff), 0x77), "unknown token"},
		{"rsvmap misaligned", set(16, 41), "memory reservation"},
		{"property too long", func() []byte {
			// The first property of the root follows its FDT_BEGIN_NODE and empty name.
			return set(int(structOff)+8+4, 0x00ffffff)
		}(), "runs past the end"},
		{"name offset", set(int(structOff)+8+8, 0x00ffffff), "outside the strings block"},
		{"no end", set(int(structOff)+int(binary.BigEndian.Uint32(good[36:]))-4, 4 /* FDT_NOP */), "FDT_END"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.in)
			var de *Error
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode: %v, want an *Error containing %q", err, tc.want)
			}
		})
	}
}

// FuzzDecode: any input gives a tree or an *Error, never a panic; a tree re-encodes and
// decodes to the same blob.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"zynq7000-base.dts", "complex-overlay.dts"} {
		f.Add(compileFile(f, name))
	}
	f.Add([]byte{0xd0, 0x0d, 0xfe, 0xed})
	f.Fuzz(func(t *testing.T, b []byte) {
		fdt, err := Decode(b)
		if err != nil {
			var de *Error
			if !errors.As(err, &de) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		out, err := Encode(fdt)
		if err != nil {
			t.Fatal(err)
		}
		fdt2, err := Decode(out)
		if err != nil {
			t.Fatalf("our own encoding does not decode: %v", err)
		}
		out2, _ := Encode(fdt2)
		if string(out) != string(out2) {
			t.Fatal("encode/decode not stable")
		}
	})
}
