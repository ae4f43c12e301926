package dts

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func dtTree(t *testing.T, props map[string][]byte) string {
	t.Helper()
	root := t.TempDir()
	node := filepath.Join(root, "sys/firmware/devicetree/base/axi/ethernet@e000b000")
	os.MkdirAll(node, 0o755)
	for k, v := range props {
		os.WriteFile(filepath.Join(node, k), v, 0o644)
	}
	// As macb has it: the link is on the platform device, not on the net device.
	os.MkdirAll(filepath.Join(root, "sys/devices/platform/axi/e000b000.ethernet/net/eth0"), 0o755)
	os.Symlink("../../../../firmware/devicetree/base/axi/ethernet@e000b000", filepath.Join(root, "sys/devices/platform/axi/e000b000.ethernet/of_node"))
	os.MkdirAll(filepath.Join(root, "sys/class/net"), 0o755)
	os.Symlink("../../devices/platform/axi/e000b000.ethernet/net/eth0", filepath.Join(root, "sys/class/net/eth0"))
	os.Symlink("../../../e000b000.ethernet", filepath.Join(root, "sys/devices/platform/axi/e000b000.ethernet/net/eth0/device"))
	return root
}

func TestFromDT(t *testing.T) {
	p, err := FromDT(dtTree(t, map[string][]byte{PropRxRing: {0, 0, 8, 0}, PropTxRing: {0, 0, 4, 0}, "compatible": []byte("cdns,zynq-gem\x00")}), "eth0")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range p.Settings {
		got[s.Knob] = s.Value
	}
	if got["rings.rx"] != "2048" || got["rings.tx"] != "1024" || !p.Required["rings.rx"] {
		t.Errorf("profile %+v", p)
	}
	p, err = FromDT(dtTree(t, map[string][]byte{PropProfile: []byte("zc702\x00"), PropRxRing: {0, 0, 2, 0}}), "eth0")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Settings {
		if s.Knob == "rings.rx" && s.Value != "512" {
			t.Errorf("the node's ring size must override the profile's: %s", s.Value)
		}
	}
	if len(p.Settings) < 5 {
		t.Errorf("zc702 profile not taken: %+v", p.Settings)
	}
	if _, err := FromDT(dtTree(t, nil), "eth0"); !errors.Is(err, ErrNoDTTuning) {
		t.Errorf("no properties: %v", err)
	}
	if _, err := FromDT(t.TempDir(), "eth0"); !errors.Is(err, ErrNoDTTuning) {
		t.Errorf("no node: %v", err)
	}
	for _, bad := range []map[string][]byte{{PropRxRing: {1, 2}}, {PropRxRing: {0, 0, 0, 0}}, {PropProfile: []byte("warp\x00")}} {
		if _, err := FromDT(dtTree(t, bad), "eth0"); err == nil || errors.Is(err, ErrNoDTTuning) {
			t.Errorf("%v accepted: %v", bad, err)
		}
	}
}
