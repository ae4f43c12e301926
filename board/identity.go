package board

import (
	"os"
	"path/filepath"
	"strings"
)

// Identity is what a running system's device tree and SoC say of the board.
type Identity struct {
	Compatible []string // the root node's compatible strings, most specific first
	Model      string
	// Serial is the device tree's serial-number (U-Boot sets it from the board's
	// EEPROM or the SoC), else the SoC's (ZynqMP's eFuse DNA through soc0); "" if none.
	Serial string
}

// ReadIdentity reads the identity under root ("/" live, or a captured tree).
func ReadIdentity(root string) Identity {
	id := Identity{Model: readString(root, "proc/device-tree/model")}
	if c := readString(root, "proc/device-tree/compatible"); c != "" {
		id.Compatible = strings.Split(c, "\x00")
	}
	for _, p := range []string{"proc/device-tree/serial-number", "sys/devices/soc0/serial_number"} {
		if s := readString(root, p); s != "" {
			id.Serial = s
			break
		}
	}
	return id
}

// readString reads a device-tree string property or a sysfs line, without its NULs.
func readString(root, p string) string {
	b, _ := os.ReadFile(filepath.Join(root, p))
	return strings.TrimRight(string(b), "\x00\n ")
}
