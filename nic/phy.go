package nic

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// PHY is the Ethernet PHY phylib bound to an interface, as sysfs shows it
// (/sys/class/net/IF/phydev: Documentation/ABI/testing/sysfs-class-net-phydev).
type PHY struct {
	// Device is the MDIO device's name: the bus, then the address after the last colon
	// (e000b000.ethernet-ffffffff:07).
	Device  string `json:"device"`
	Address *int   `json:"address"`
	// ID is the PHY's identifier, registers 2 and 3 (0x01410cc2: Marvell's OUI).
	ID string `json:"id"`
	// Driver is the kernel driver bound to it: the vendor's ("Marvell 88E1116R", "TI
	// DP83867") or phylib's fallback "Generic PHY", which sets up no RGMII delays or errata.
	Driver    string `json:"driver"`
	Interface string `json:"interface"` // phy-mode as phylib runs it: rgmii-id
}

// GenericDrivers are phylib's fallback drivers: bound when no vendor driver matches the
// PHY's id (or the vendor driver is not built).
var GenericDrivers = []string{"Generic PHY", "Generic Clause 45 PHY"}

// PHY reads iface's PHY alone, as Read gives it (Interface.PHY): nil when the port has
// none (veth, a fixed link); a NotFoundError when there is no such interface. Read asks
// the kernel every question of show (a fifth of a second on an emulated Cortex-A9), where
// the PHY is a few sysfs files.
func (r *Reader) PHY(iface string) (*PHY, error) {
	links, err := r.links()
	if err != nil {
		return nil, err
	}
	var have []string
	for _, l := range links {
		if l.Name == iface {
			return r.fs().readPHY(iface), nil
		}
		have = append(have, l.Name)
	}
	return nil, &NotFoundError{Name: iface, Have: have}
}

// readPHY reads the interface's PHY; nil when it has none (veth, a fixed link).
func (r fsRoot) readPHY(iface string) *PHY {
	dev := filepath.Join("sys/class/net", iface, "phydev")
	real, err := r.resolve(dev)
	if err != nil {
		return nil
	}
	p := &PHY{Device: filepath.Base(real)}
	if i := strings.LastIndexByte(p.Device, ':'); i >= 0 {
		if a, err := strconv.ParseUint(p.Device[i+1:], 16, 8); err == nil {
			n := int(a)
			p.Address = &n
		}
	}
	if v := r.optString(filepath.Join(dev, "phy_id")); v != nil {
		p.ID = *v
	}
	if v := r.optString(filepath.Join(dev, "phy_interface")); v != nil {
		p.Interface = *v
	}
	if t, err := r.resolve(filepath.Join(dev, "driver")); err == nil {
		p.Driver = filepath.Base(t)
	}
	return p
}

// MII registers (IEEE 802.3 clause 22) and their bits, as include/uapi/linux/mii.h
// names them.
const (
	MIIBMCR     = 0x00
	MIIBMSR     = 0x01
	MIIPHYID1   = 0x02
	MIIPHYID2   = 0x03
	MIIADVERT   = 0x04
	MIILPA      = 0x05
	MIICTRL1000 = 0x09
	MIISTAT1000 = 0x0a

	BMCRReset     = 0x8000
	BMCRLoopback  = 0x4000
	BMCRSpeed100  = 0x2000
	BMCRANEnable  = 0x1000
	BMCRPowerDown = 0x0800
	BMCRIsolate   = 0x0400
	BMCRANRestart = 0x0200
	BMCRFullDplx  = 0x0100
	BMCRSpeed1000 = 0x0040

	BMSRANComplete  = 0x0020
	BMSRRemoteFault = 0x0010
	BMSRLinkStatus  = 0x0004
)

// Registers are a PHY's standard registers, read through MII (SIOCGMIIREG).
type Registers struct {
	Address  int    `json:"address"`
	BMCR     uint16 `json:"bmcr"`
	BMSR     uint16 `json:"bmsr"`
	ID1      uint16 `json:"phyid1"`
	ID2      uint16 `json:"phyid2"`
	Advert   uint16 `json:"advertise"`
	LPA      uint16 `json:"lpa"`
	Ctrl1000 uint16 `json:"ctrl1000"`
	Stat1000 uint16 `json:"stat1000"`
}

// ID is the PHY's identifier as phylib and sysfs write it: 0x01410cc2.
func (r Registers) ID() string { return fmt.Sprintf("0x%04x%04x", r.ID1, r.ID2) }

// DecodeBMCR names the control register's bits: "loopback 1000 Mb/s full autoneg".
func DecodeBMCR(v uint16) string {
	var out []string
	for _, b := range []struct {
		bit  uint16
		name string
	}{{BMCRReset, "reset"}, {BMCRLoopback, "loopback"}, {BMCRPowerDown, "power-down"}, {BMCRIsolate, "isolate"}} {
		if v&b.bit != 0 {
			out = append(out, b.name)
		}
	}
	if v&BMCRANEnable != 0 {
		out = append(out, "autoneg")
		if v&BMCRANRestart != 0 {
			out = append(out, "restart-autoneg")
		}
	} else {
		out = append(out, "forced "+forcedSpeed(v))
	}
	return strings.Join(out, " ")
}

// forcedSpeed is the speed and duplex a control register forces.
func forcedSpeed(v uint16) string {
	speed := "10"
	switch {
	case v&BMCRSpeed1000 != 0 && v&BMCRSpeed100 == 0:
		speed = "1000"
	case v&BMCRSpeed100 != 0 && v&BMCRSpeed1000 == 0:
		speed = "100"
	case v&BMCRSpeed100 != 0:
		speed = "reserved"
	}
	d := "half"
	if v&BMCRFullDplx != 0 {
		d = "full"
	}
	return speed + " Mb/s " + d
}

// DecodeBMSR names the status register's bits that a bring-up engineer reads.
func DecodeBMSR(v uint16) string {
	out := []string{"link down"}
	if v&BMSRLinkStatus != 0 {
		out[0] = "link up"
	}
	if v&BMSRANComplete != 0 {
		out = append(out, "autoneg complete")
	}
	if v&BMSRRemoteFault != 0 {
		out = append(out, "remote fault")
	}
	return strings.Join(out, ", ")
}

// PartnerModes are the modes the link partner advertised (LPA and STAT1000), as ethtool
// names them.
func PartnerModes(lpa, stat1000 uint16) []string {
	var out []string
	for _, m := range []struct {
		reg, bit uint16
		name     string
	}{
		{lpa, 0x0020, "10baseT/Half"}, {lpa, 0x0040, "10baseT/Full"}, {lpa, 0x0080, "100baseT/Half"},
		{lpa, 0x0100, "100baseT/Full"}, {stat1000, 0x0400, "1000baseT/Half"}, {stat1000, 0x0800, "1000baseT/Full"},
	} {
		if m.reg&m.bit != 0 {
			out = append(out, m.name)
		}
	}
	return out
}

// LoopbackBMCR is the control register that loops the PHY back at the link's speed and
// duplex (autonegotiation off, as a forced link needs): what phylib keeps through its
// forced set-up (genphy_setup_forced keeps BMCR_LOOPBACK).
func LoopbackBMCR(speedMbps int, full bool) uint16 {
	v := uint16(BMCRLoopback)
	switch speedMbps {
	case 1000:
		v |= BMCRSpeed1000
	case 100:
		v |= BMCRSpeed100
	}
	if full {
		v |= BMCRFullDplx
	}
	return v
}
