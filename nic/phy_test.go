package nic

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestReaderPHY: the PHY read alone is the PHY of the full read, on the hand-built
// ZC702 tree given a phylib device (the emulated board's Marvell at address 7, its
// driver bound); a port without one has none, and a port that does not exist is a
// NotFoundError naming the ports there are.
func TestReaderPHY(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("../testdata/show/zynq7000-gem")); err != nil {
		t.Fatal(err)
	}
	rd, _, err := Open(root, APIAuto)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := rd.PHY("eth0"); err != nil || p != nil {
		t.Fatalf("no phydev: PHY() = %+v, %v; want nil, nil", p, err)
	}
	dev := "sys/devices/soc0/axi/e000b000.ethernet/mdio_bus/e000b000.ethernet-ffffffff/e000b000.ethernet-ffffffff:07"
	drv := "sys/bus/mdio_bus/drivers/Marvell 88E1111"
	for _, d := range []string{dev, drv} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, v := range map[string]string{"phy_id": "0x01410cc2\n", "phy_interface": "rgmii-id\n"} {
		if err := os.WriteFile(filepath.Join(root, dev, name), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Links relative, as sysfs makes them and a snapshot keeps them.
	for link, target := range map[string]string{filepath.Join(dev, "driver"): drv, "sys/class/net/eth0/phydev": dev} {
		rel, _ := filepath.Rel(filepath.Dir(link), target)
		if err := os.Symlink(rel, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	p, err := rd.PHY("eth0")
	if err != nil || p == nil {
		t.Fatalf("PHY() = %v, %v", p, err)
	}
	if p.ID != "0x01410cc2" || p.Driver != "Marvell 88E1111" || p.Interface != "rgmii-id" || p.Address == nil || *p.Address != 7 {
		t.Errorf("PHY() = %+v", p)
	}
	ifcs, err := rd.Read("eth0")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, ifcs[0].PHY) {
		t.Errorf("PHY() = %+v, Read's = %+v", p, ifcs[0].PHY)
	}
	_, err = rd.PHY("eth9")
	var nf *NotFoundError
	if !errors.As(err, &nf) || nf.Name != "eth9" || len(nf.Have) == 0 {
		t.Errorf("PHY(eth9): %v, want a NotFoundError listing the ports", err)
	}
}
