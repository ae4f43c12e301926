package dts

import (
	"errors"
	"strings"
	"testing"

	"github.com/u-root/u-root/pkg/dt"
)

// TestMergeMatchesFdtoverlay applies the same overlays with Merge and with fdtoverlay and
// compares dtc's sorted decompilations.
func TestMergeMatchesFdtoverlay(t *testing.T) {
	zc702 := kernelDTB(t, "zc702")
	zcu102 := kernelDTB(t, "zcu102")
	z7base := compileFile(t, "zynq7000-base.dts")
	mpbase := compileFile(t, "zynqmp-base.dts")
	complexOv := compileFile(t, "complex-overlay.dts")
	second := compileFile(t, "second-overlay.dts")
	ours := func(board string, fit []byte, edit func(*Overlay)) []byte {
		o := &Overlay{Board: mustBoard(t, board)}
		edit(o)
		if fit != nil {
			if err := o.Fit(mustDecode(t, fit)); err != nil {
				t.Fatal(err)
			}
		}
		tree, err := o.Tree()
		if err != nil {
			t.Fatal(err)
		}
		return mustEncode(t, tree)
	}
	rings := func(o *Overlay) { o.RxRing, o.TxRing, o.Profile = 2048, 1024, "throughput" }
	for _, tc := range []struct {
		name     string
		base     []byte
		overlays [][]byte
	}{
		{"zc702 kernel dtb, target-path", zc702, [][]byte{ours("zc702", zc702, rings)}},
		{"zcu102 kernel dtb, target-path", zcu102, [][]byte{ours("zcu102", zcu102, rings)}},
		{"zc702 kernel dtb, gem1 enabled", zc702, [][]byte{ours("zc702", zc702, func(o *Overlay) { o.GEM, o.Status, o.PhyMode = "gem1", "okay", "rgmii-id" })}},
		{"labelled zynq-7000 base, label", z7base, [][]byte{ours("zc702", nil, rings)}},
		{"labelled zynqmp base, label, mac", mpbase, [][]byte{ours("zcu102", nil, func(o *Overlay) { o.MAC = []byte{0, 0x0a, 0x35, 9, 8, 7}; o.RxWatermark = 100 })}},
		{"complex overlay", z7base, [][]byte{complexOv}},
		{"two overlays in sequence", z7base, [][]byte{complexOv, second}},
		{"three overlays", z7base, [][]byte{complexOv, second, ours("zc702", nil, rings)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ovs []*dt.FDT
			for _, o := range tc.overlays {
				ovs = append(ovs, mustDecode(t, o))
			}
			got, err := Merge(mustDecode(t, tc.base), ovs...)
			if err != nil {
				t.Fatal(err)
			}
			want := canonical(t, fdtoverlay(t, tc.base, tc.overlays...))
			if g := canonical(t, mustEncode(t, got)); g != want {
				t.Errorf("Merge differs from fdtoverlay:\n%s", firstDiff(g, want))
			}
		})
	}
}

// TestMergeBad: overlays that do not fit their base give an *Error naming the cause, and
// leave base and overlay exactly as they were.
func TestMergeBad(t *testing.T) {
	zc702 := kernelDTB(t, "zc702")
	z7base := compileFile(t, "zynq7000-base.dts")
	labelOv := mustEncode(t, func() *dt.FDT {
		o := &Overlay{Board: mustBoard(t, "zc702"), RxRing: 512}
		tr, err := o.Tree()
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}())
	zcuOv := mustEncode(t, func() *dt.FDT {
		o := &Overlay{Board: mustBoard(t, "zcu102"), RxRing: 512}
		tr, _ := o.Tree()
		return tr
	}())
	pathOv := compile(t, []byte("/dts-v1/;\n/plugin/;\n&{/amba/ethernet@e000b000} { status = \"okay\"; };\n"))
	unresolved := mustEncode(t, func() *dt.FDT {
		f := mustDecode(t, labelOv)
		Child(f.RootNode, "__fixups__").Properties = nil
		return f
	}())
	badFixup := mustEncode(t, func() *dt.FDT {
		f := mustDecode(t, labelOv)
		Child(f.RootNode, "__fixups__").Properties[0].Value = str("/fragment@0:target")
		return f
	}())
	for _, tc := range []struct {
		name    string
		base    []byte
		overlay []byte
		want    string
	}{
		{"label on base without symbols", zc702, labelOv, "no __symbols__"},
		{"label the base lacks", z7base, zcuOv, `label "gem3", which the base does not define`},
		{"target path missing", z7base, pathOv, `target-path "/amba/ethernet@e000b000" is not in the base`},
		{"unresolved target", z7base, unresolved, "not a resolved phandle"},
		{"malformed fixup", z7base, badFixup, "malformed reference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, ov := mustDecode(t, tc.base), mustDecode(t, tc.overlay)
			_, err := Merge(base, ov)
			var de *Error
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an *Error containing %q", err, tc.want)
			}
			if string(mustEncode(t, base)) != string(mustEncode(t, mustDecode(t, tc.base))) || string(mustEncode(t, ov)) != string(mustEncode(t, mustDecode(t, tc.overlay))) {
				t.Error("a failed merge changed its inputs")
			}
		})
	}
}

// FuzzMerge: any blob as an overlay on a labelled base merges or gives an *Error; the
// base is never changed, and never a panic.
func FuzzMerge(f *testing.F) {
	base := mustDecode(f, compileFile(f, "zynq7000-base.dts"))
	before := string(mustEncode(f, base))
	f.Add(compileFile(f, "complex-overlay.dts"))
	f.Add(compileFile(f, "second-overlay.dts"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ov, err := Decode(b)
		if err != nil {
			return
		}
		out, err := Merge(base, ov)
		if err != nil {
			var de *Error
			if !errors.As(err, &de) {
				t.Fatalf("error of type %T: %v", err, err)
			}
		} else if _, err := Encode(out); err != nil {
			t.Fatal(err)
		}
		if string(mustEncode(t, base)) != before {
			t.Fatal("Merge changed its base")
		}
	})
}
