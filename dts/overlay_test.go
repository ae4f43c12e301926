package dts

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/zynqnet/linerate/board"
)

func mustBoard(t testing.TB, name string) *board.Board {
	t.Helper()
	b, err := board.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOverlayMatchesDtc: for every board and a spread of settings, the .dts we write
// compiles with dtc -@ to the same tree as the .dtbo we write.
func TestOverlayMatchesDtc(t *testing.T) {
	mac, _ := net.ParseMAC("00:0a:35:01:02:03")
	variants := map[string]func(o *Overlay){
		"rings": func(o *Overlay) { o.RxRing, o.TxRing = 2048, 1024 },
		"all": func(o *Overlay) {
			o.RxRing, o.TxRing, o.RxWatermark, o.MAC, o.PhyMode, o.Status, o.Profile = 8192, 4096, 256, mac, "rgmii-id", "okay", "throughput"
		},
		"disable":  func(o *Overlay) { o.Status = "disabled" },
		"path":     func(o *Overlay) { o.TargetPath, o.RxRing = "/axi/ethernet@e000b000", 512 },
		"gem1":     func(o *Overlay) { o.GEM, o.TxRing = "gem1", 64 },
		"profile":  func(o *Overlay) { o.Profile = "latency" },
		"phy-mode": func(o *Overlay) { o.PhyMode = "sgmii" },
	}
	for _, name := range board.Names() {
		for vname, v := range variants {
			t.Run(name+"/"+vname, func(t *testing.T) {
				o := &Overlay{Board: mustBoard(t, name), Comment: "test " + vname}
				v(o)
				src, err := o.Source()
				if err != nil {
					t.Fatal(err)
				}
				tree, err := o.Tree()
				if err != nil {
					t.Fatal(err)
				}
				ours := mustEncode(t, tree)
				if got, want := canonical(t, ours), canonical(t, compile(t, []byte(src))); got != want {
					t.Errorf("our .dtbo and dtc's compile of our .dts differ:\n%s\n--- source:\n%s", firstDiff(got, want), src)
				}
			})
		}
	}
}

func TestOverlayBadInput(t *testing.T) {
	zc702, zcu102 := mustBoard(t, "zc702"), mustBoard(t, "zcu102")
	for _, tc := range []struct {
		name string
		o    Overlay
		want string
	}{
		{"rx too small", Overlay{Board: zc702, RxRing: 32}, "outside 64..8192"},
		{"rx too big", Overlay{Board: zc702, RxRing: 16384}, "outside 64..8192"},
		{"tx too big", Overlay{Board: zc702, TxRing: 8192}, "outside 64..4096"},
		{"not power of two", Overlay{Board: zc702, RxRing: 1000}, "give 1024"},
		{"no gem2 on zynq-7000", Overlay{Board: zc702, GEM: "gem2", RxRing: 512}, "has no gem2: its GEMs are gem0, gem1"},
		{"no gem4", Overlay{Board: zcu102, GEM: "gem4", RxRing: 512}, "has no gem4"},
		{"multicast mac", Overlay{Board: zc702, MAC: net.HardwareAddr{1, 2, 3, 4, 5, 6}}, "multicast"},
		{"zero mac", Overlay{Board: zc702, MAC: net.HardwareAddr{0, 0, 0, 0, 0, 0}}, "not a valid"},
		{"phy-mode", Overlay{Board: zc702, PhyMode: "xaui"}, "not one a Zynq GEM takes"},
		{"watermark", Overlay{Board: zc702, RxWatermark: 5000}, "above 4095"},
		{"profile", Overlay{Board: zc702, Profile: "fastest"}, "unknown profile"},
		{"nothing", Overlay{Board: zc702}, "sets nothing"},
		{"relative path", Overlay{Board: zc702, RxRing: 512, TargetPath: "axi/ethernet@e000b000"}, "does not start with /"},
		{"no board", Overlay{RxRing: 512}, "no board"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.o.Tree()
			var de *Error
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an *Error containing %q", err, tc.want)
			}
			if _, err2 := tc.o.Source(); err2 == nil {
				t.Error("Source accepted what Tree refused")
			}
		})
	}
}

// TestFit: a base with symbols keeps the label target; a kernel-built base (no symbols)
// gets target-path; a base without the GEM is refused.
func TestFit(t *testing.T) {
	labelled := mustDecode(t, compileFile(t, "zynq7000-base.dts"))
	o := &Overlay{Board: mustBoard(t, "zc702"), RxRing: 1024}
	if err := o.Fit(labelled); err != nil || o.TargetPath != "" {
		t.Errorf("labelled base: %v, target path %q, want the label", err, o.TargetPath)
	}
	kernel := mustDecode(t, kernelDTB(t, "zc702"))
	if err := o.Fit(kernel); err != nil || o.TargetPath != "/axi/ethernet@e000b000" {
		t.Errorf("kernel base: %v, target path %q", err, o.TargetPath)
	}
	mp := &Overlay{Board: mustBoard(t, "zcu102"), RxRing: 1024}
	if err := mp.Fit(kernel); err == nil || !strings.Contains(err.Error(), "no GEM at ff0e0000") {
		t.Errorf("ZynqMP overlay on a Zynq-7000 base: %v", err)
	}
	zcu := mustDecode(t, kernelDTB(t, "zcu102"))
	if err := mp.Fit(zcu); err != nil || mp.TargetPath != "/axi/ethernet@ff0e0000" {
		t.Errorf("zcu102 kernel base: %v, %q", err, mp.TargetPath)
	}
	bad := &Overlay{Board: mustBoard(t, "zc702"), RxRing: 1024, TargetPath: "/amba/ethernet@e000b000"}
	if err := bad.Fit(kernel); err == nil || !strings.Contains(err.Error(), "no node /amba/ethernet@e000b000") {
		t.Errorf("missing target path: %v", err)
	}
}
