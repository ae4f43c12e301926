package tune

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/nic"
)

// The PHY control family: the PHY's control register (BMCR) through MII, as phylib takes
// it: a PHY loopback test's journal (internal: no profile sets it).
type phyControl struct{}

// KnobPHYControl is the PHY's control register, a 16-bit hex value.
const KnobPHYControl = "phy.bmcr"

func init() {
	register(row{key: KnobPHYControl, family: phyControl{}, internal: true, concrete: KnobPHYControl, order: orderLink, bounces: true})
}

func (phyControl) expand(x *expander, _ *row, s Setting) error {
	return x.p.perr(s, "linerate's own commands set it; a profile cannot")
}

// read reads the PHY's control register through MII, with the autonegotiation bit as
// phylib runs the PHY: a PHY (QEMU's) that reads its enable bit back as 0 still
// autonegotiates when phylib says so, and a write of this value gives phylib back its
// autonegotiation.
func (phyControl) read(s *System, k Knob) (string, error) {
	m, addr, err := nic.OpenPHY(k.Iface)
	if err != nil {
		return "", err
	}
	defer m.Close()
	v, err := m.Read(addr, nic.MIIBMCR)
	if err != nil {
		return "", err
	}
	v &^= nic.BMCRReset | nic.BMCRANRestart // self-clearing
	if et, err := s.Kernel.Ethtool(k.Iface); err == nil && et.LinkModes != nil && et.LinkModes.Autoneg {
		v |= nic.BMCRANEnable
	}
	return fmt.Sprintf("0x%04x", v), nil
}

// write writes the PHY's control register through MII (the kernel's phy_mii_ioctl).
// A value that turns autonegotiation off while phylib runs it on (a loopback test's) is
// written in two moves, as the kernel's own genphy_loopback does it: phylib first forces
// the link at the value's speed and duplex (its PHY driver's config_aneg runs then,
// soft reset included, with loopback still off), then the register is written as it is.
// Written at once, phylib would not know its PHY runs forced (phylink's MII write goes
// straight to the PHY), or (a MAC without phylink, through phy_mii_ioctl) would run that
// config_aneg after the write, where a vendor driver's soft reset (Marvell's) ends the
// loopback. The tester images' kernel (6.1) runs that config_aneg within the ethtool
// request, before the write; later kernels queue it on phylib's state machine, where it
// can still come after the write. The write reads a loopback back at once and, where a
// reset already ended it, holds it (written again until it holds, holdLoopback); it does
// not wait for a reset that may not come: the loopback test checks after its frames that
// the PHY stayed looped (HoldLoopback). A value with autonegotiation on gives phylib its
// autonegotiation back.
func (phyControl) write(s *System, k Knob, v string) error {
	n, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 16)
	if err != nil {
		return fmt.Errorf("phy.bmcr %q: want a 16-bit hex value", v)
	}
	if bmcr := uint16(n); bmcr&(nic.BMCRANEnable|nic.BMCRReset) == 0 {
		if et, err := s.Kernel.Ethtool(k.Iface); err == nil && et.LinkModes != nil && et.LinkModes.Autoneg {
			speed := 10
			switch {
			case bmcr&nic.BMCRSpeed1000 != 0:
				speed = 1000
			case bmcr&nic.BMCRSpeed100 != 0:
				speed = 100
			}
			if err := s.Setter.SetForced(k.Iface, speed, bmcr&nic.BMCRFullDplx != 0); err != nil {
				return err
			}
		}
	}
	m, addr, err := nic.OpenPHY(k.Iface)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Write(addr, nic.MIIBMCR, uint16(n)); err != nil {
		return err
	}
	if uint16(n)&nic.BMCRLoopback != 0 {
		// Read back at once: a reset that came between the forcing and now is held off
		// here, not found by the read-back as a value the PHY refused.
		if got, err := m.Read(addr, nic.MIIBMCR); err != nil {
			return err
		} else if got&nic.BMCRLoopback == 0 {
			return holdLoopback(m, addr, uint16(n))
		}
	}
	// A MAC on phylink (macb) writes the register straight to the PHY and phylib does not
	// see it: autonegotiation comes back through ethtool, as it went.
	if uint16(n)&nic.BMCRANEnable != 0 {
		if et, err := s.Kernel.Ethtool(k.Iface); err == nil && et.LinkModes != nil && !et.LinkModes.Autoneg {
			return s.Setter.SetAutoneg(k.Iface)
		}
	}
	return nil
}

// HoldLoopback loops iface's PHY back again with v (its loopback value) after it left
// loopback on its own: phylib's state machine, which the forcing woke on a kernel that
// runs it on its own work queue, ran the driver's config_aneg after the write, and
// Marvell's ends in a soft reset, which ends the loopback. The value is written again
// until it holds for loopbackSettle. The journal already holds the change (v is its
// value), so nothing more is journalled.
func HoldLoopback(iface string, v uint16) error {
	m, addr, err := nic.OpenPHY(iface)
	if err != nil {
		return err
	}
	defer m.Close()
	return holdLoopback(m, addr, v)
}

// holdLoopback writes v until the PHY at addr holds it for loopbackSettle.
func holdLoopback(m *nic.MII, addr int, v uint16) error {
	if err := m.Write(addr, nic.MIIBMCR, v); err != nil {
		return err
	}
	held := time.Now()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		got, err := m.Read(addr, nic.MIIBMCR)
		if err != nil {
			return err
		}
		if got&nic.BMCRLoopback != 0 {
			if time.Since(held) >= loopbackSettle {
				return nil
			}
			continue
		}
		if err := m.Write(addr, nic.MIIBMCR, v); err != nil {
			return err
		}
		held = time.Now()
	}
	return fmt.Errorf("phy.bmcr: the PHY left loopback again and again after 0x%04x was written (its driver resets it)", v)
}

// loopbackSettle is how long a loopback written again must hold: phylib's state
// machine runs within milliseconds of the forcing, on an emulated Cortex-A9 within a
// few hundred.
const loopbackSettle = 500 * time.Millisecond
