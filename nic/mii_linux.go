package nic

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// miiReq is struct ifreq holding struct mii_ioctl_data in its union (if_mii() in
// include/linux/mii.h), padded to the ifreq the kernel copies in whole.
type miiReq struct {
	name                         [unix.IFNAMSIZ]byte
	phyID, regNum, valIn, valOut uint16
	_                            [16]byte
}

// MII reads and writes a PHY's registers through the interface's driver: SIOCGMIIPHY,
// SIOCGMIIREG and SIOCSMIIREG (phy_mii_ioctl in drivers/net/phy/phy.c). A write to the
// control register goes through phylib, which takes the autonegotiation and forced speed
// it sets as its own.
type MII struct {
	Iface string
	fd    int
}

// ErrNoMII is an interface whose driver gives no access to a PHY's registers (veth, tun,
// a fixed link).
var ErrNoMII = errors.New("no MII access to a PHY")

// OpenMII opens MII access to iface's PHY in the calling thread's network namespace.
func OpenMII(iface string) (*MII, error) {
	if len(iface) >= unix.IFNAMSIZ {
		return nil, fmt.Errorf("interface name %q is longer than %d bytes", iface, unix.IFNAMSIZ-1)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("MII socket: %w", err)
	}
	return &MII{Iface: iface, fd: fd}, nil
}

// OpenPHY opens MII access to iface's PHY and finds its address (SIOCGMIIPHY): what
// every read or write of its registers starts with. Nothing stays open on an error.
func OpenPHY(iface string) (*MII, int, error) {
	m, err := OpenMII(iface)
	if err != nil {
		return nil, 0, err
	}
	addr, err := m.Address()
	if err != nil {
		m.Close()
		return nil, 0, err
	}
	return m, addr, nil
}

// Close closes the socket.
func (m *MII) Close() error { return unix.Close(m.fd) }

func (m *MII) ioctl(req uintptr, r *miiReq) error {
	copy(r.name[:], m.Iface)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m.fd), req, uintptr(unsafe.Pointer(r)))
	switch errno {
	case 0:
		return nil
	case unix.EOPNOTSUPP, unix.ENOTTY:
		return fmt.Errorf("%s: %w (its driver has no SIOCGMIIREG: a virtual port, or a PHY-less link)", m.Iface, ErrNoMII)
	case unix.EINVAL:
		return fmt.Errorf("%s: MII access refused (EINVAL): the interface must be up for its driver to reach the PHY", m.Iface)
	case unix.ENODEV:
		return fmt.Errorf("%s: no such interface, or no PHY attached (ENODEV)", m.Iface)
	}
	return fmt.Errorf("%s: MII: %w", m.Iface, errno)
}

// Address is the PHY's MDIO address (SIOCGMIIPHY).
func (m *MII) Address() (int, error) {
	var r miiReq
	if err := m.ioctl(unix.SIOCGMIIPHY, &r); err != nil {
		return 0, err
	}
	return int(r.phyID), nil
}

// Read reads register reg of the PHY at addr.
func (m *MII) Read(addr, reg int) (uint16, error) {
	r := miiReq{phyID: uint16(addr), regNum: uint16(reg)}
	if err := m.ioctl(unix.SIOCGMIIREG, &r); err != nil {
		return 0, err
	}
	return r.valOut, nil
}

// Write writes v to register reg of the PHY at addr.
func (m *MII) Write(addr, reg int, v uint16) error {
	r := miiReq{phyID: uint16(addr), regNum: uint16(reg), valIn: v}
	return m.ioctl(unix.SIOCSMIIREG, &r)
}

// Registers reads the PHY's standard registers.
func (m *MII) Registers() (Registers, error) {
	addr, err := m.Address()
	if err != nil {
		return Registers{}, err
	}
	r := Registers{Address: addr}
	for _, x := range []struct {
		reg int
		p   *uint16
	}{{MIIBMCR, &r.BMCR}, {MIIBMSR, &r.BMSR}, {MIIPHYID1, &r.ID1}, {MIIPHYID2, &r.ID2}, {MIIADVERT, &r.Advert},
		{MIILPA, &r.LPA}, {MIICTRL1000, &r.Ctrl1000}, {MIISTAT1000, &r.Stat1000}} {
		if *x.p, err = m.Read(addr, x.reg); err != nil {
			return r, err
		}
	}
	return r, nil
}
