package main

import (
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

func insmod(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	err = unix.FinitModule(int(f.Fd()), "", 0)
	if err == unix.EEXIST {
		return nil
	}
	return err
}

// configure brings the port up, addresses it and waits (bounded) for carrier.
func configure(cfg Config, iface string) error {
	var l netlink.Link
	var err error
	// The driver may still be probing the PHY right after the module loaded.
	for i := 0; i < 50; i++ {
		if l, err = netlink.LinkByName(iface); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		have, _ := net.Interfaces()
		var names []string
		for _, h := range have {
			names = append(names, h.Name)
		}
		return fmt.Errorf("no such interface (have: %s)", strings.Join(names, ", "))
	}
	if lo, err := netlink.LinkByName("lo"); err == nil {
		netlink.LinkSetUp(lo)
	}
	if err := netlink.LinkSetUp(l); err != nil {
		return fmt.Errorf("set up: %w", err)
	}
	if err := waitCarrier(iface, 15*time.Second); err != nil {
		return err
	}
	switch {
	case cfg.IP == "dhcp":
		say("%s: DHCP", iface)
		ipn, err := dhcp4(l, 15*time.Second)
		if err != nil {
			return fmt.Errorf("DHCP: %w", err)
		}
		say("%s: %s (DHCP lease)", iface, ipn)
	case cfg.IP != "":
		addr := &netlink.Addr{IPNet: &net.IPNet{IP: cfg.Prefix.Addr().AsSlice(), Mask: net.CIDRMask(cfg.Prefix.Bits(), cfg.Prefix.Addr().BitLen())}}
		if err := netlink.AddrReplace(l, addr); err != nil {
			return fmt.Errorf("address %s: %w", cfg.Prefix, err)
		}
		say("%s: %s", iface, cfg.Prefix)
	}
	return nil
}

func waitCarrier(iface string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		b, err := os.ReadFile("/sys/class/net/" + iface + "/carrier")
		if err == nil && strings.TrimSpace(string(b)) == "1" {
			speed, _ := os.ReadFile("/sys/class/net/" + iface + "/speed")
			duplex, _ := os.ReadFile("/sys/class/net/" + iface + "/duplex")
			say("%s: link up %s Mb/s %s", iface, strings.TrimSpace(string(speed)), strings.TrimSpace(string(duplex)))
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no carrier after %v: check the cable and the station port", timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// bounce takes the port down and up again and waits for its carrier: the driver
// re-initialises its rings and enables the receiver again.
func bounce(iface string) error {
	l, err := netlink.LinkByName(iface)
	if err != nil {
		return err
	}
	if err := netlink.LinkSetDown(l); err != nil {
		return fmt.Errorf("set down: %w", err)
	}
	if err := netlink.LinkSetUp(l); err != nil {
		return fmt.Errorf("set up: %w", err)
	}
	return waitCarrier(iface, 15*time.Second)
}

// after powers off, reboots, or stays at the shell; it never returns.
func after(what string) {
	unix.Sync()
	if what != "shell" {
		drainConsole()
	}
	switch what {
	case "poweroff":
		say("power off")
		unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	case "reboot":
		say("reboot")
		unix.Reboot(unix.LINUX_REBOOT_CMD_RESTART)
	}
	shellForever()
}

// drainConsole waits until the serial console has sent what is queued (tcdrain): a
// reboot or power-off cuts off whatever is still in the UART's buffer, which is where
// the last result lines are.
func drainConsole() {
	for _, fd := range []int{1, 2} {
		unix.IoctlSetInt(fd, unix.TCSBRK, 1)
	}
	time.Sleep(500 * time.Millisecond)
}
