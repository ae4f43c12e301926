package validate

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/zynqnet/linerate/internal/readall"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/plan"
)

// Identity checks that the board is who it says: a real, globally administered MAC of
// an expected OUI that is no placeholder, the same in the kernel as in the device tree
// and in the board's EEPROM, and a serial number of the line's pattern.
type Identity struct {
	AllowLocalMAC   bool     `yaml:"allow_local_mac" json:"allow_local_mac,omitempty" doc:"take a locally administered MAC (one no vendor OUI gave: an emulated board's)" default:"false"`
	PlaceholderMACs []string `yaml:"placeholder_macs" json:"placeholder_macs,omitempty" doc:"MACs that stand in for a programmed one, besides U-Boot's hard-coded ones (00:0a:35:00:01:22, ...)"`
	ExpectOUI       []string `yaml:"expect_oui" json:"expect_oui,omitempty" doc:"the OUIs the MAC must be of (00:0a:35)"`
	SerialPattern   string   `yaml:"serial_pattern" json:"serial_pattern,omitempty" doc:"a regular expression the whole serial must match; the console prompt asks again until it does"`
	// MACLayout is how a board's ports' MACs relate: consecutive from the first port's
	// (eth1 = eth0's + 1, ...), or any (distinct, as every port's must be).
	MACLayout string `yaml:"mac_layout" json:"mac_layout,omitempty" doc:"how the board's ports' MACs relate: consecutive (each port's is the first port's plus its place in ports:) or any; they must differ either way" default:"any"`
	// EEPROM: compare with the EEPROM's MAC where the board profile names one (default
	// true; an emulated board has none).
	EEPROM *bool `yaml:"eeprom" json:"eeprom,omitempty" doc:"compare the MAC with the identity EEPROM's where the board profile names one" default:"true"`

	placeholders []net.HardwareAddr
	ouis         [][]byte
	serial       *regexp.Regexp
}

// Placeholders are MACs that stand in for a programmed one: Xilinx's U-Boot
// configurations hard-code ethaddr=00:0a:35:00:01:22 for its boards, so every board
// whose EEPROM was never programmed boots with it.
var Placeholders = []string{"00:0a:35:00:01:22", "00:0a:35:00:22:01", "00:0a:35:00:00:00", "02:00:00:00:00:00", "de:ad:be:ef:00:00"}

// Check parses the MACs, OUIs and the serial's pattern.
func (s *Identity) Check(*plan.Plan) error {
	for _, m := range append(append([]string{}, Placeholders...), s.PlaceholderMACs...) {
		hw, err := net.ParseMAC(m)
		if err != nil || len(hw) != 6 {
			return fmt.Errorf("placeholder_macs: %q is not a MAC (02:00:00:00:00:0b)", m)
		}
		s.placeholders = append(s.placeholders, hw)
	}
	for _, o := range s.ExpectOUI {
		hw, err := net.ParseMAC(o + ":00:00:00")
		if err != nil || len(hw) != 6 {
			return fmt.Errorf("expect_oui: %q is not an OUI (three bytes, 00:0a:35)", o)
		}
		s.ouis = append(s.ouis, hw[:3])
	}
	switch s.MACLayout {
	case "":
		s.MACLayout = "any"
	case "any", "consecutive":
	default:
		return fmt.Errorf("mac_layout %q: want consecutive or any", s.MACLayout)
	}
	if s.SerialPattern != "" {
		re, err := regexp.Compile("^(?:" + s.SerialPattern + ")$")
		if err != nil {
			return fmt.Errorf("serial_pattern %q: %v", s.SerialPattern, err)
		}
		s.serial = re
	}
	return nil
}

// serialPattern is what a serial must match (nil: any name a report can carry).
func (s *Identity) serialPattern() *regexp.Regexp { return s.serial }

// Timeout: a few files.
func (s *Identity) Timeout() time.Duration { return 10 * time.Second }

// IdentityFacts are what the identity step read.
type IdentityFacts struct {
	MAC          string `json:"mac"`
	DTMAC        string `json:"dt_mac,omitempty"` // the device tree's local-mac-address or mac-address
	DTProp       string `json:"dt_property,omitempty"`
	EEPROMMAC    string `json:"eeprom_mac,omitempty"`
	EEPROMNote   string `json:"eeprom,omitempty"` // why the EEPROM was not compared
	Serial       string `json:"serial"`
	SerialSource string `json:"serial_source"`
	MACSource    string `json:"mac_source"`
	// Ports are the MACs of the board's other ports, in the plan's order with this
	// port's place (Index): what its MAC must differ from, or follow.
	Ports []PortMAC `json:"ports,omitempty"`
	Index int       `json:"index,omitempty"`
}

// PortMAC is a port of the board and its MAC.
type PortMAC struct {
	Iface string `json:"interface"`
	MAC   string `json:"mac"`
}

// Run reads the port's MAC, the device tree's and the EEPROM's.
func (s *Identity) Run(ctx context.Context, e Env) (Outcome, error) {
	mac, err := nic.ReadFile(e.Root, filepath.Join("sys/class/net", e.Iface, "address"))
	if err != nil {
		return Outcome{}, fmt.Errorf("interface %s: %w", e.Iface, err)
	}
	f := IdentityFacts{MAC: mac, Serial: e.Serial, SerialSource: e.SerialSource}
	for i, p := range e.BoardPorts {
		if p == e.Iface {
			f.Index = i
		}
		m, _ := nic.ReadFile(e.Root, filepath.Join("sys/class/net", p, "address"))
		f.Ports = append(f.Ports, PortMAC{p, m})
	}
	f.DTProp, f.DTMAC = dtMAC(e.Root, e.Iface)
	first := e.First
	switch b := e.Board; {
	case s.EEPROM != nil && !*s.EEPROM:
		f.EEPROMNote = "not compared (the plan says eeprom: false)"
	case !first:
		f.EEPROMNote = "compared on the plan's first port (the EEPROM holds one MAC)"
	case b == nil || b.EEPROM == nil:
		f.EEPROMNote = "the board profile names no EEPROM"
	default:
		d, err := b.EEPROM.Read(e.Root)
		switch {
		case err != nil:
			f.EEPROMNote = "unreadable: " + err.Error()
		case d.MAC == nil:
			f.EEPROMNote = "blank: its MAC cell was never programmed"
		default:
			f.EEPROMMAC = d.MAC.String()
		}
	}
	return s.Judge(f, first && e.Board != nil && e.Board.EEPROM != nil && (s.EEPROM == nil || *s.EEPROM)), nil
}

// judgePorts: the port's MAC differs from every other port's of the board, and with
// mac_layout consecutive is the first port's plus the port's place.
func (s *Identity) judgePorts(f IdentityFacts, hw net.HardwareAddr) []string {
	if len(hw) != 6 {
		return nil
	}
	var bad []string
	for i, p := range f.Ports {
		other, err := net.ParseMAC(p.MAC)
		if i == f.Index || err != nil {
			continue
		}
		if bytes.Equal(other, hw) {
			bad = append(bad, fmt.Sprintf("MAC %s is also %s's: each port of a board needs its own", f.MAC, p.Iface))
		}
	}
	if s.MACLayout == "consecutive" && f.Index > 0 && len(f.Ports) > 0 {
		base, err := net.ParseMAC(f.Ports[0].MAC)
		if err == nil && len(base) == 6 {
			want := macPlus(base, f.Index)
			if !bytes.Equal(want, hw) {
				bad = append(bad, fmt.Sprintf("MAC %s, want %s: %s's %s plus %d (mac_layout: consecutive)", f.MAC, want, f.Ports[0].Iface, base, f.Index))
			}
		}
	}
	return bad
}

// macPlus is mac plus n, carrying across the octets below the OUI.
func macPlus(mac net.HardwareAddr, n int) net.HardwareAddr {
	v := uint64(mac[3])<<16 | uint64(mac[4])<<8 | uint64(mac[5])
	v = (v + uint64(n)) & 0xffffff
	return net.HardwareAddr{mac[0], mac[1], mac[2], byte(v >> 16), byte(v >> 8), byte(v)}
}

// dtMAC is the MAC the port's device-tree node gives (mac-address, else
// local-mac-address), "" when none or all zero (a placeholder the DTS leaves U-Boot to
// fill).
func dtMAC(root, iface string) (prop, mac string) {
	for _, rel := range []string{"device/of_node", "of_node"} {
		node := filepath.Join(root, "sys/class/net", iface, rel)
		for _, p := range []string{"mac-address", "local-mac-address"} {
			b, err := readall.File(filepath.Join(node, p), readall.MaxSys)
			if err == nil && len(b) == 6 && !bytes.Equal(b, make([]byte, 6)) {
				return p, net.HardwareAddr(b).String()
			}
		}
	}
	return "", ""
}

// Judge: the MAC is a unicast, globally administered address (locally administered
// only where the plan allows it), no placeholder, of an expected OUI when the plan names
// some, the device tree's and the EEPROM's where they give one (eeprom: the board has an
// EEPROM to compare with), and the serial matches the plan's pattern.
func (s *Identity) Judge(f IdentityFacts, eeprom bool) Outcome {
	hw, _ := net.ParseMAC(f.MAC)
	f.MACSource = "kernel"
	var bad []string
	switch {
	case len(hw) != 6:
		bad = append(bad, fmt.Sprintf("%q is not an Ethernet MAC", f.MAC))
	case bytes.Equal(hw, make([]byte, 6)):
		bad = append(bad, "MAC 00:00:00:00:00:00: none was programmed")
	case bytes.Equal(hw, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}):
		bad = append(bad, "MAC ff:ff:ff:ff:ff:ff is the broadcast address")
	case hw[0]&1 != 0:
		bad = append(bad, fmt.Sprintf("MAC %s is a multicast address: a port needs a unicast one", f.MAC))
	case hw[0]&2 != 0 && !s.AllowLocalMAC:
		bad = append(bad, fmt.Sprintf("MAC %s is locally administered (not from a vendor's OUI): the random MAC a kernel or U-Boot makes when none was programmed", f.MAC))
	}
	if slices.ContainsFunc(s.placeholders, func(p net.HardwareAddr) bool { return bytes.Equal(p, hw) }) {
		bad = append(bad, fmt.Sprintf("MAC %s is a placeholder (U-Boot's hard-coded ethaddr): this board's MAC was never programmed, and every such board collides on the network", f.MAC))
	}
	if len(s.ouis) > 0 && len(hw) == 6 && !slices.ContainsFunc(s.ouis, func(o []byte) bool { return bytes.Equal(o, hw[:3]) }) {
		bad = append(bad, fmt.Sprintf("MAC %s is outside the expected OUIs (%s)", f.MAC, strings.Join(s.ExpectOUI, ", ")))
	}
	if f.DTMAC != "" {
		if f.DTMAC != f.MAC {
			bad = append(bad, fmt.Sprintf("the kernel uses %s, the device tree's %s says %s", f.MAC, f.DTProp, f.DTMAC))
		} else {
			f.MACSource = "device tree (" + f.DTProp + ")"
		}
	}
	switch {
	case eeprom && f.EEPROMMAC == "":
		bad = append(bad, "the board's EEPROM MAC: "+f.EEPROMNote)
	case f.EEPROMMAC != "" && f.EEPROMMAC != f.MAC:
		bad = append(bad, fmt.Sprintf("the kernel uses %s, the board's EEPROM holds %s", f.MAC, f.EEPROMMAC))
	case f.EEPROMMAC != "":
		f.MACSource = "eeprom"
	}
	bad = append(bad, s.judgePorts(f, hw)...)
	if s.serial != nil && !s.serial.MatchString(f.Serial) {
		bad = append(bad, fmt.Sprintf("serial %q (%s) does not match %s", f.Serial, orDash(f.SerialSource), s.SerialPattern))
	}
	o := Outcome{Pass: len(bad) == 0, Detail: f, Found: Found{MAC: f.MAC, MACSource: f.MACSource}}
	o.Summary = fmt.Sprintf("MAC %s from the %s, serial %s from the %s", f.MAC, f.MACSource, f.Serial, orDash(f.SerialSource))
	if !o.Pass {
		o.Reason = strings.Join(bad, "; ")
	}
	return o
}
