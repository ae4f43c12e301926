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
	if lm, err := nic.ReadLinkModes(s.Kernel, k.Iface); err == nil && lm.Autoneg {
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
// loopback. The forcing does not run config_aneg itself: the kernel (6.1 as later ones)
// puts the PHY back in PHY_UP and wakes phylib's state machine on its work queue, which
// runs it when it is scheduled, on an emulated board tens of milliseconds later. So the
// register is written once config_aneg is seen to have run (configAnegRan); where that
// cannot be seen, the loopback is held (written again until it holds 0.5 s,
// holdLoopback), as it is where the read-back at once finds it already ended. A value
// with autonegotiation on gives phylib its autonegotiation back.
func (phyControl) write(s *System, k Knob, v string) error {
	n, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 16)
	if err != nil {
		return fmt.Errorf("phy.bmcr %q: want a 16-bit hex value", v)
	}
	unseen := false // the forcing's config_aneg was not seen to run
	if bmcr := uint16(n); bmcr&(nic.BMCRANEnable|nic.BMCRReset) == 0 {
		if lm, err := nic.ReadLinkModes(s.Kernel, k.Iface); err == nil && lm.Autoneg {
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
			unseen = !configAnegRan(s.Kernel, k.Iface, len(lm.Partner) > 0, configAnegWait)
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
		} else if got&nic.BMCRLoopback == 0 || unseen {
			return holdLoopback(m, addr, uint16(n))
		}
	}
	// A MAC on phylink (macb) writes the register straight to the PHY and phylib does not
	// see it: autonegotiation comes back through ethtool, as it went.
	if uint16(n)&nic.BMCRANEnable != 0 {
		if lm, err := nic.ReadLinkModes(s.Kernel, k.Iface); err == nil && !lm.Autoneg {
			return s.Setter.SetAutoneg(k.Iface)
		}
	}
	return nil
}

// configAnegRan waits until phylib has run the PHY driver's config_aneg that a forcing
// of the link woke (see write) and says whether it saw it. The sign is the link
// partner's modes: on a forced link the status read that follows config_aneg, under the
// same phydev lock, clears them (marvell_read_status, genphy_read_status), and ethtool's
// get takes that lock, so it never sees half of it; nothing else reads the status
// between the forcing and config_aneg (the state machine in PHY_UP runs config_aneg
// first). It cannot tell where the partner advertised nothing before the forcing
// (partnerBefore false), nor on a driver that leaves the modes: false after within.
func configAnegRan(k nic.Kernel, iface string, partnerBefore bool, within time.Duration) bool {
	if !partnerBefore {
		return false
	}
	for deadline := time.Now().Add(within); ; time.Sleep(5 * time.Millisecond) {
		lm, err := nic.ReadLinkModes(k, iface)
		if err == nil && len(lm.Partner) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// configAnegWait bounds the wait for the forcing's config_aneg: phylib's work queue runs
// it within milliseconds on a board, within a few hundred on an emulated Cortex-A9 under
// load.
const configAnegWait = time.Second

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
