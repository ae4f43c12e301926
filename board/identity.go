package board

import (
	"path/filepath"
	"strings"

	"github.com/zynqnet/linerate/internal/readall"
)

// Identity is what a running system's device tree, kernel command line and SoC say of
// the board.
type Identity struct {
	Compatible []string // the root node's compatible strings, most specific first
	Model      string
	// Serial is the serial number the system gives, and Source where it came from:
	// the kernel command line's linerate.serial= (a line's boot set-up), the device
	// tree's serial-number (U-Boot sets it from the board's EEPROM or the SoC), else the
	// SoC's (ZynqMP's eFuse DNA through soc0); "" if none.
	Serial, SerialSource string
	// Fixture is the kernel command line's linerate.fixture= ("" none): the test
	// fixture a line's boot set-up puts the board on; Operator its linerate.operator=.
	Fixture, Operator string
}

// Serial sources, in the order they are taken.
const (
	SerialOperator   = "operator"
	SerialCmdline    = "kernel command line"
	SerialDeviceTree = "device tree"
	SerialEEPROM     = "eeprom"
	SerialSoC        = "soc"
	SerialMAC        = "mac"
)

// ReadIdentity reads the identity under root ("/" live, or a captured tree).
func ReadIdentity(root string) Identity {
	id := Identity{Model: readString(root, "proc/device-tree/model")}
	if c := readString(root, "proc/device-tree/compatible"); c != "" {
		id.Compatible = strings.Split(c, "\x00")
	}
	for _, w := range strings.Fields(readString(root, "proc/cmdline")) {
		if v, ok := strings.CutPrefix(w, "linerate.fixture="); ok && v != "" {
			id.Fixture = v
		}
		if v, ok := strings.CutPrefix(w, "linerate.operator="); ok && v != "" {
			id.Operator = v
		}
	}
	for _, w := range strings.Fields(readString(root, "proc/cmdline")) {
		if v, ok := strings.CutPrefix(w, "linerate.serial="); ok && v != "" {
			id.Serial, id.SerialSource = v, SerialCmdline
			return id
		}
	}
	for _, s := range []struct{ path, source string }{{"proc/device-tree/serial-number", SerialDeviceTree}, {"sys/devices/soc0/serial_number", SerialSoC}} {
		if v := readString(root, s.path); v != "" {
			id.Serial, id.SerialSource = v, s.source
			break
		}
	}
	return id
}

// readString reads a device-tree string property or a sysfs line, without its NULs.
func readString(root, p string) string {
	b, _ := readall.File(filepath.Join(root, p), readall.MaxSys)
	return strings.TrimRight(string(b), "\x00\n ")
}
