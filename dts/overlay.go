package dts

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"

	"github.com/u-root/u-root/pkg/dt"
	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/tune"
)

// linerate's own properties on a GEM node. No upstream driver reads a ring depth from the
// device tree (macb takes it only from ethtool -G), so these are vendor-prefixed and read
// back at boot by `linerate tune --from-dt` (FromDT).
const (
	PropRxRing  = "linerate,rx-ring-size" // <u32> RX descriptors, 64..8192, a power of two
	PropTxRing  = "linerate,tx-ring-size" // <u32> TX descriptors, 64..4096, a power of two
	PropProfile = "linerate,tune-profile" // "NAME" a built-in tune profile applied first
)

// Properties the kernel honours, written as its bindings define them
// (Documentation/devicetree/bindings/net/cdns,macb.yaml, ethernet-controller.yaml).
const (
	PropRxWatermark = "cdns,rx-watermark" // <u32> RX partial store-and-forward (macb, Linux 6.5 and later)
	PropPhyMode     = "phy-mode"
	PropLocalMAC    = "local-mac-address"
	PropMAC         = "mac-address"
	PropStatus      = "status"
)

// Ring limits of the macb driver (MIN_RX_RING_SIZE.. in macb_main.c); macb rounds a
// request up to a power of two, so the overlay asks for one.
const (
	MinRing   = 64
	MaxRxRing = 8192
	MaxTxRing = 4096
	// The pbuf_rxcutthru field takes 12 bits on the GEMs of both SoCs.
	MaxRxWatermark = 0xfff
)

// PhyModes are the phy-mode values a Zynq GEM can be wired for (the MIO RGMII pins, EMIO
// GMII/MII, SGMII and 1000BASE-X through the PL or the ZynqMP PS-GTR).
var PhyModes = []string{"rgmii", "rgmii-id", "rgmii-rxid", "rgmii-txid", "gmii", "mii", "rmii", "sgmii", "1000base-x"}

// SoCGEM is one GEM of a SoC: its label in the mainline dtsi and its node path.
type SoCGEM struct {
	Label, Address string
}

// Path is the node's path in the mainline dtsi (zynq-7000.dtsi, zynqmp.dtsi).
func (g SoCGEM) Path() string { return "/axi/ethernet@" + g.Address }

// SoCGEMs lists the GEMs of a SoC ("zynq-7000", "zynqmp").
func SoCGEMs(soc string) []SoCGEM {
	switch soc {
	case "zynq-7000":
		return []SoCGEM{{"gem0", "e000b000"}, {"gem1", "e000c000"}}
	case "zynqmp":
		return []SoCGEM{{"gem0", "ff0b0000"}, {"gem1", "ff0c0000"}, {"gem2", "ff0d0000"}, {"gem3", "ff0e0000"}}
	}
	return nil
}

// Overlay describes a device-tree overlay for one GEM of a board.
type Overlay struct {
	Board *board.Board
	GEM   string // label, gem0..gem3; "" means the board's Ethernet jack

	// TargetPath, when set, makes the fragment name its target by path (target-path)
	// instead of by label (target = <&gem0>, resolved through the base's __symbols__).
	TargetPath string

	RxRing, TxRing uint32 // 0: not set
	RxWatermark    uint32 // 0: not set
	MAC            net.HardwareAddr
	PhyMode        string
	Status         string // "", "okay" or "disabled"
	Profile        string // a built-in tune profile

	// Comment is written at the top of the DTS (the command that made it, say).
	Comment string
}

// gem returns the SoC GEM the overlay is for, checking the board has it.
func (o *Overlay) gem() (SoCGEM, error) {
	if o.Board == nil {
		return SoCGEM{}, errorf("no board given")
	}
	label := o.GEM
	if label == "" {
		label = o.Board.GEM.Label
	}
	gems := SoCGEMs(o.Board.SoC)
	var have []string
	for _, g := range gems {
		if g.Label == label {
			return g, nil
		}
		have = append(have, g.Label)
	}
	return SoCGEM{}, errorf("board %s (%s) has no %s: its GEMs are %s", o.Board.Name, o.Board.SoC, label, strings.Join(have, ", "))
}

// Check validates every value against the driver's limits, before anything is written.
func (o *Overlay) Check() error {
	if _, err := o.gem(); err != nil {
		return err
	}
	for _, r := range []struct {
		name string
		v    uint32
		max  uint32
	}{{"RX ring", o.RxRing, MaxRxRing}, {"TX ring", o.TxRing, MaxTxRing}} {
		if r.v == 0 {
			continue
		}
		if r.v < MinRing || r.v > r.max {
			return errorf("%s size %d is outside %d..%d, the macb driver's limits", r.name, r.v, MinRing, r.max)
		}
		if r.v&(r.v-1) != 0 {
			p := uint32(MinRing)
			for p < r.v {
				p <<= 1
			}
			return errorf("%s size %d is not a power of two: macb would round it up to %d; give %d", r.name, r.v, p, p)
		}
	}
	if o.RxWatermark > MaxRxWatermark {
		return errorf("RX watermark %d is above %d (the 12-bit pbuf_rxcutthru field)", o.RxWatermark, MaxRxWatermark)
	}
	if o.MAC != nil {
		if len(o.MAC) != 6 {
			return errorf("MAC %s is not a 6-byte Ethernet address", o.MAC)
		}
		if o.MAC[0]&1 != 0 {
			return errorf("MAC %s is a multicast address; a port needs a unicast one (first byte even)", o.MAC)
		}
		if slices.Equal(o.MAC, net.HardwareAddr{0, 0, 0, 0, 0, 0}) {
			return errorf("MAC 00:00:00:00:00:00 is not a valid port address")
		}
	}
	if o.PhyMode != "" && !slices.Contains(PhyModes, o.PhyMode) {
		return errorf("phy-mode %q is not one a Zynq GEM takes (%s)", o.PhyMode, strings.Join(PhyModes, ", "))
	}
	if o.Status != "" && o.Status != "okay" && o.Status != "disabled" {
		return errorf("status %q: want okay or disabled", o.Status)
	}
	if o.Profile != "" {
		if _, err := tune.Builtin(o.Profile); err != nil {
			return errorf("tune profile: %v", err)
		}
	}
	if o.TargetPath != "" && !strings.HasPrefix(o.TargetPath, "/") {
		return errorf("target path %q does not start with /", o.TargetPath)
	}
	if len(o.props()) == 0 {
		return errorf("the overlay sets nothing: give at least one of --rx-ring, --tx-ring, --mac, --phy-mode, --rx-watermark, --disable, --enable, --tune")
	}
	return nil
}

// props are the overlay's properties, in the order written.
func (o *Overlay) props() []dt.Property {
	var ps []dt.Property
	if o.Status != "" {
		ps = append(ps, dt.Property{Name: PropStatus, Value: str(o.Status)})
	}
	if o.PhyMode != "" {
		ps = append(ps, dt.Property{Name: PropPhyMode, Value: str(o.PhyMode)})
	}
	if o.MAC != nil {
		// mac-address wins over local-mac-address in of_get_mac_address, and U-Boot may
		// have set it from its environment: the overlay sets both.
		ps = append(ps, dt.Property{Name: PropLocalMAC, Value: []byte(o.MAC)}, dt.Property{Name: PropMAC, Value: []byte(o.MAC)})
	}
	if o.RxWatermark != 0 {
		ps = append(ps, dt.Property{Name: PropRxWatermark, Value: u32(o.RxWatermark)})
	}
	if o.RxRing != 0 {
		ps = append(ps, dt.Property{Name: PropRxRing, Value: u32(o.RxRing)})
	}
	if o.TxRing != 0 {
		ps = append(ps, dt.Property{Name: PropTxRing, Value: u32(o.TxRing)})
	}
	if o.Profile != "" {
		ps = append(ps, dt.Property{Name: PropProfile, Value: str(o.Profile)})
	}
	return ps
}

// Tree is the overlay as dtc -@ compiles its Source: one fragment whose target is the
// GEM's label (an unresolved phandle listed in __fixups__) or its path (target-path).
func (o *Overlay) Tree() (*dt.FDT, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	g, _ := o.gem()
	frag := &dt.Node{Name: "fragment@0"}
	root := &dt.Node{Children: []*dt.Node{frag}}
	if o.TargetPath != "" {
		frag.Properties = []dt.Property{{Name: "target-path", Value: str(o.TargetPath)}}
	} else {
		frag.Properties = []dt.Property{{Name: "target", Value: u32(0xffffffff)}}
		root.Children = append(root.Children, &dt.Node{Name: "__fixups__", Properties: []dt.Property{{Name: g.Label, Value: str("/fragment@0:target:0")}}})
	}
	frag.Children = []*dt.Node{{Name: "__overlay__", Properties: o.props()}}
	f := New()
	f.RootNode = root
	return f, nil
}

// Source is the overlay as DTS text that dtc -@ -I dts -O dtb compiles to Tree.
func (o *Overlay) Source() (string, error) {
	if err := o.Check(); err != nil {
		return "", err
	}
	g, _ := o.gem()
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(o.Comment), "\n") {
		if l != "" {
			fmt.Fprintf(&b, "// %s\n", l)
		}
	}
	fmt.Fprintf(&b, "// %s (ethernet@%s) of the %s.\n", g.Label, g.Address, o.Board.Model)
	b.WriteString("/dts-v1/;\n/plugin/;\n\n")
	indent := "\t"
	if o.TargetPath != "" {
		fmt.Fprintf(&b, "/ {\n\tfragment@0 {\n\t\ttarget-path = %q;\n\t\t__overlay__ {\n", o.TargetPath)
		indent = "\t\t\t"
	} else {
		fmt.Fprintf(&b, "&%s {\n", g.Label)
	}
	for _, p := range o.props() {
		fmt.Fprintf(&b, "%s%s = %s;\n", indent, p.Name, dtsValue(p))
	}
	if o.TargetPath != "" {
		b.WriteString("\t\t};\n\t};\n};\n")
	} else {
		b.WriteString("};\n")
	}
	return b.String(), nil
}

func dtsValue(p dt.Property) string {
	switch p.Name {
	case PropLocalMAC, PropMAC:
		var hex []string
		for _, c := range p.Value {
			hex = append(hex, fmt.Sprintf("%02x", c))
		}
		return "[" + strings.Join(hex, " ") + "]"
	case PropRxWatermark, PropRxRing, PropTxRing:
		v, _ := PropU32(&dt.Node{Properties: []dt.Property{p}}, p.Name)
		return fmt.Sprintf("<%d>", v)
	}
	return fmt.Sprintf("%q", strings.TrimSuffix(string(p.Value), "\x00"))
}

// Fit makes the overlay fit a base tree: by label where the base has __symbols__ with the
// GEM's label, else by the GEM node's path. It fails where the base has no such GEM.
func (o *Overlay) Fit(base *dt.FDT) error {
	g, err := o.gem()
	if err != nil {
		return err
	}
	path := o.TargetPath
	if path == "" {
		if syms := Child(base.RootNode, "__symbols__"); syms != nil {
			if p := PropString(syms, g.Label); p != "" && Lookup(base.RootNode, p) != nil && Phandle(Lookup(base.RootNode, p)) != 0 {
				return nil
			}
		}
		path = FindGEMPath(base.RootNode, g.Address)
		if path == "" {
			return errorf("the base has no GEM at %s (%s): is it a %s device tree?", g.Address, g.Label, o.Board.SoC)
		}
	} else if Lookup(base.RootNode, path) == nil {
		return errorf("the base has no node %s", path)
	}
	o.TargetPath = path
	return nil
}

// FindGEMPath returns the path of the ethernet@ADDRESS node, wherever the tree puts it
// (/axi in mainline, /amba in older Xilinx trees).
func FindGEMPath(root *dt.Node, address string) string {
	var found string
	Walk(root, func(p string, n *dt.Node) error {
		if found == "" && n.Name == "ethernet@"+address {
			found = p
		}
		return nil
	})
	return found
}

// Render writes the overlay in the form a file's extension asks for: DTS source for
// .dts and .dtso (dtc -@ compiles it), a blob for .dtbo and .dtb.
func (o *Overlay) Render(ext string) ([]byte, error) {
	switch ext {
	case ".dts", ".dtso":
		src, err := o.Source()
		return []byte(src), err
	case ".dtbo", ".dtb":
		t, err := o.Tree()
		if err != nil {
			return nil, err
		}
		return Encode(t)
	}
	return nil, errorf("%q: name the overlay .dts (source) or .dtbo (binary)", ext)
}

// Describe says what the overlay is for and how it finds its node, for a person.
func (o *Overlay) Describe() string {
	gem := o.GEM
	if gem == "" {
		gem = o.Board.GEM.Label
	}
	target := "label " + gem
	if o.TargetPath != "" {
		target = "path " + o.TargetPath
	}
	return fmt.Sprintf("overlay for %s of %s, target by %s", gem, o.Board.Name, target)
}

// Prepare settles the overlay's board, by name or else from the compatible of the base
// DTB at basePath, checks the settings against it and, given a base, checks that the
// overlay fits it. Every error is bad input naming the flag it comes from.
func (o *Overlay) Prepare(boardName, basePath string) error {
	var base *dt.FDT
	if basePath != "" {
		var err error
		if base, _, err = ReadFile(basePath); err != nil {
			return err
		}
	}
	switch {
	case boardName != "":
		b, err := board.Lookup(boardName)
		if err != nil {
			return errorf("--board: %v", err)
		}
		o.Board = b
	case base != nil:
		if o.Board = board.Detect(PropStrings(base.RootNode, "compatible")); o.Board == nil {
			return errorf("--base %s: its compatible %q names no known board; give --board", basePath, PropStrings(base.RootNode, "compatible"))
		}
	default:
		return errorf("--board is required (known: %s)", strings.Join(board.Names(), ", "))
	}
	if err := o.Check(); err != nil {
		return err
	}
	if base != nil {
		if err := o.Fit(base); err != nil {
			return errorf("--base %s: %v", basePath, err)
		}
	}
	return nil
}

// WriteFile renders the overlay by the file's extension (.dts, .dtso source; .dtbo,
// .dtb binary) and writes it atomically; it returns the bytes written.
func (o *Overlay) WriteFile(path string) (int, error) {
	data, err := o.Render(strings.ToLower(filepath.Ext(path)))
	if err != nil {
		return 0, err
	}
	return len(data), atomicfile.Write(path, data, 0o644)
}
