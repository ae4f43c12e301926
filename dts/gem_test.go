package dts

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zynqnet/linerate/internal/dttest"
)

func TestGEMs(t *testing.T) {
	base := mustDecode(t, compileFile(t, "zynqmp-base.dts"))
	o := &Overlay{Board: mustBoard(t, "zcu102"), RxRing: 4096, TxRing: 2048, Profile: "zcu102", RxWatermark: 512}
	tr, err := o.Tree()
	if err != nil {
		t.Fatal(err)
	}
	merged, err := Merge(base, tr)
	if err != nil {
		t.Fatal(err)
	}
	gems := GEMs(merged)
	if len(gems) != 4 {
		t.Fatalf("%d GEMs, want 4: %+v", len(gems), gems)
	}
	g := gems[3]
	b, _ := json.Marshal(g)
	for _, want := range []string{`"path":"/axi/ethernet@ff0e0000"`, `"label":"gem3"`, `"alias":"ethernet0"`, `"status":"okay"`, `"phy_mode":"rgmii-id"`,
		`"mac":"00:0a:35:00:22:01"`, `"mac_from":"local-mac-address"`, `"phy":"/axi/ethernet@ff0e0000/ethernet-phy@c"`, `"phy_address":12`,
		`{"name":"cdns,rx-watermark","value":"\u003c512\u003e"}`, `{"name":"linerate,rx-ring-size","value":"\u003c4096\u003e"}`,
		`{"name":"linerate,tune-profile","value":"\"zcu102\""}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("gem3 lacks %s:\n%s", want, b)
		}
	}
	if gems[0].Status != "disabled" || gems[0].Label != "gem0" {
		t.Errorf("gem0: %+v", gems[0])
	}
	// The kernel-built ZC702 tree has no labels: they come from the SoC's address map.
	k := GEMs(mustDecode(t, kernelDTB(t, "zc702")))
	if len(k) != 2 || k[0].Label != "gem0" || k[1].Label != "gem1" || k[0].PHYAddress == nil || *k[0].PHYAddress != 7 {
		t.Errorf("zc702 kernel DTB GEMs: %+v", k)
	}
}

func TestReadLive(t *testing.T) {
	blob := kernelDTB(t, "zc702")
	want := canonical(t, blob)

	root := t.TempDir()
	dttest.WriteLive(t, filepath.Join(root, LiveDir), mustDecode(t, blob).RootNode)
	f, src, err := ReadLive(root)
	if err != nil || src != "/proc/device-tree" {
		t.Fatalf("ReadLive: %v %s", err, src)
	}
	// The directory form loses the blob's property order; dtc -s sorts both.
	if got := canonical(t, mustEncode(t, f)); got != want {
		t.Errorf("tree from /proc/device-tree differs:\n%s", firstDiff(got, want))
	}

	root2 := t.TempDir()
	os.MkdirAll(filepath.Join(root2, "sys/firmware"), 0o755)
	os.WriteFile(filepath.Join(root2, LiveBlob), blob, 0o444)
	f, src, err = ReadLive(root2)
	if err != nil || src != "/sys/firmware/fdt" || canonical(t, mustEncode(t, f)) != want {
		t.Errorf("ReadLive from the blob: %v %s", err, src)
	}

	os.WriteFile(filepath.Join(root2, LiveBlob), blob[:100], 0o444)
	if _, _, err := ReadLive(root2); err == nil || !strings.Contains(err.Error(), "/sys/firmware/fdt: device tree blob is truncated") {
		t.Errorf("truncated /sys/firmware/fdt: %v", err)
	}
	var de *Error
	if _, _, err := ReadLive(t.TempDir()); !errors.As(err, &de) || !strings.Contains(err.Error(), "no live device tree") {
		t.Errorf("no tree: %v", err)
	}
}
