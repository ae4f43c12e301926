package board

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// EEPROM is a board's identity EEPROM: its device-tree node (the nvmem provider) and
// where the MAC and the serial number are in it.
type EEPROM struct {
	Node      string `yaml:"node" json:"node"`
	MAC       int    `yaml:"mac" json:"mac"`       // offset of the 6-byte MAC
	Serial    int    `yaml:"serial" json:"serial"` // offset of the serial number (text, NUL padded)
	SerialLen int    `yaml:"serial_len" json:"serial_len"`
}

// EEPROMData is what the EEPROM holds of the board's identity.
type EEPROMData struct {
	Device string           // the nvmem device the kernel made of it
	MAC    net.HardwareAddr // nil: the cell is blank (all 0xff or 0)
	Serial string
}

// Read reads the EEPROM under root through the kernel's nvmem device whose device-tree
// node is e.Node (/sys/bus/nvmem/devices/*/of_node).
func (e *EEPROM) Read(root string) (*EEPROMData, error) {
	dev, err := e.device(root)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(root, "sys/bus/nvmem/devices", dev, "nvmem"))
	if err != nil {
		return nil, fmt.Errorf("EEPROM %s: %w", dev, err)
	}
	defer f.Close()
	end := max(e.MAC+6, e.Serial+e.SerialLen)
	b := make([]byte, end)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("EEPROM %s: %d bytes wanted: %w", dev, end, err)
	}
	d := &EEPROMData{Device: dev, MAC: net.HardwareAddr(b[e.MAC : e.MAC+6])}
	if blank(d.MAC) {
		d.MAC = nil
	}
	if e.SerialLen > 0 {
		d.Serial = strings.TrimRight(string(b[e.Serial:e.Serial+e.SerialLen]), "\x00\xff ")
		if strings.IndexFunc(d.Serial, func(r rune) bool { return r < 0x20 || r > 0x7e }) >= 0 {
			d.Serial = "" // not a programmed serial: garbage, or another layout
		}
	}
	return d, nil
}

func blank(b []byte) bool {
	for _, c := range b {
		if c != 0 && c != 0xff {
			return false
		}
	}
	return true
}

// device finds the nvmem device of the EEPROM's node.
func (e *EEPROM) device(root string) (string, error) {
	dir := filepath.Join(root, "sys/bus/nvmem/devices")
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	for _, d := range ents {
		t, err := filepath.EvalSymlinks(filepath.Join(dir, d.Name(), "of_node"))
		if err != nil {
			continue
		}
		if _, node, ok := strings.Cut(filepath.ToSlash(t), "/devicetree/base"); ok && node == e.Node {
			return d.Name(), nil
		}
	}
	return "", fmt.Errorf("no nvmem device for the EEPROM %s (its I2C bus, mux or at24 driver is not in this kernel, or the EEPROM did not answer)", e.Node)
}
