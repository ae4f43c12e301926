package dts

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/u-root/u-root/pkg/dt"
	"github.com/zynqnet/linerate/internal/fdtblob"
	"github.com/zynqnet/linerate/internal/readall"
)

// GEM is what a device tree says of one Cadence GEM/MACB node.
type GEM struct {
	Path       string   `json:"path"`
	Label      string   `json:"label,omitempty"`
	Alias      string   `json:"alias,omitempty"`
	Compatible []string `json:"compatible"`
	Status     string   `json:"status"`
	PhyMode    string   `json:"phy_mode,omitempty"`
	MAC        string   `json:"mac,omitempty"`
	MACFrom    string   `json:"mac_from,omitempty"`
	PHY        string   `json:"phy,omitempty"`
	PHYAddress *uint32  `json:"phy_address,omitempty"`
	FixedLink  bool     `json:"fixed_link,omitempty"`
	// Linerate holds the linerate and tuning properties present, by name, with their
	// values as text.
	Linerate []NameValue `json:"linerate"`
}

// NameValue is one property shown as text.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// IsGEM reports whether a compatible list names a Cadence GEM or MACB.
func IsGEM(compatible []string) bool {
	for _, c := range compatible {
		if strings.HasPrefix(c, "cdns,") && (strings.Contains(c, "gem") || strings.Contains(c, "macb") || strings.Contains(c, "emac")) {
			return true
		}
	}
	return false
}

// GEMs lists the GEM nodes of a tree, in tree order.
func GEMs(f *dt.FDT) []GEM {
	root := f.RootNode
	labels := map[string]string{}
	if syms := Child(root, "__symbols__"); syms != nil {
		for _, p := range syms.Properties {
			labels[strings.TrimRight(string(p.Value), "\x00")] = p.Name
		}
	}
	aliases := map[string]string{}
	if a := Child(root, "aliases"); a != nil {
		for _, p := range a.Properties {
			aliases[strings.TrimRight(string(p.Value), "\x00")] = p.Name
		}
	}
	var out []GEM
	Walk(root, func(path string, n *dt.Node) error {
		compat := PropStrings(n, "compatible")
		if !IsGEM(compat) {
			return nil
		}
		g := GEM{Path: path, Label: labels[path], Alias: aliases[path], Compatible: compat, Status: PropString(n, "status"), PhyMode: PropString(n, "phy-mode"), Linerate: []NameValue{}}
		if g.Label == "" {
			_, addr, _ := strings.Cut(n.Name, "@")
			for _, soc := range []string{"zynq-7000", "zynqmp"} {
				for _, sg := range SoCGEMs(soc) {
					if sg.Address == addr {
						g.Label = sg.Label
					}
				}
			}
		}
		if g.Status == "" {
			g.Status = "okay" // absent status means enabled (Devicetree Specification 2.3.4)
		}
		if g.PhyMode == "" {
			g.PhyMode = PropString(n, "phy-connection-type")
		}
		for _, p := range []string{PropMAC, PropLocalMAC} {
			if v, ok := Prop(n, p); ok && len(v) == 6 {
				g.MAC = fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", v[0], v[1], v[2], v[3], v[4], v[5])
				g.MACFrom = p
				break
			}
		}
		if ph, ok := PropU32(n, "phy-handle"); ok {
			if p, phy := ByPhandle(root, ph); phy != nil {
				g.PHY = p
				if a, ok := PropU32(phy, "reg"); ok {
					g.PHYAddress = &a
				}
			} else {
				g.PHY = fmt.Sprintf("phandle %#x (not in the tree)", ph)
			}
		}
		g.FixedLink = Child(n, "fixed-link") != nil
		for _, p := range n.Properties {
			if !strings.HasPrefix(p.Name, "linerate,") && p.Name != PropRxWatermark {
				continue
			}
			g.Linerate = append(g.Linerate, NameValue{p.Name, propText(p)})
		}
		out = append(out, g)
		return nil
	})
	return out
}

// propText shows a value as dtc would write it: a string, cells, or bytes.
func propText(p dt.Property) string {
	v := p.Value
	if len(v) > 0 && v[len(v)-1] == 0 && printable(v[:len(v)-1]) {
		return fmt.Sprintf("%q", string(v[:len(v)-1]))
	}
	if len(v) > 0 && len(v)%4 == 0 {
		var cells []string
		for i := 0; i < len(v); i += 4 {
			c := uint32(v[i])<<24 | uint32(v[i+1])<<16 | uint32(v[i+2])<<8 | uint32(v[i+3])
			cells = append(cells, fmt.Sprint(c))
		}
		return "<" + strings.Join(cells, " ") + ">"
	}
	var hex []string
	for _, c := range v {
		hex = append(hex, fmt.Sprintf("%02x", c))
	}
	return "[" + strings.Join(hex, " ") + "]"
}

func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return len(b) > 0
}

// Live paths, relative to a root ("/" on a board).
const (
	LiveDir  = "proc/device-tree"
	LiveBlob = "sys/firmware/fdt"
)

// ReadLive reads the running kernel's device tree: the unflattened tree under
// /proc/device-tree (which shows runtime overlays), else the boot blob /sys/firmware/fdt.
// It returns the tree and where it came from.
func ReadLive(root string) (*dt.FDT, string, error) {
	dir := filepath.Join(root, LiveDir)
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		n, err := readDir(dir, "", 0)
		if err != nil {
			return nil, "", err
		}
		f := New()
		f.RootNode = n
		return f, "/" + LiveDir, nil
	}
	blob := filepath.Join(root, LiveBlob)
	b, err := readall.File(blob, MaxBlob)
	if err != nil {
		return nil, "", errorf("no live device tree: neither /%s nor /%s is readable (a board booted without a device tree, or a PC: give a DTB file instead)", LiveDir, LiveBlob)
	}
	f, err := Decode(b)
	if err != nil {
		return nil, "", fmt.Errorf("/%s: %w", LiveBlob, err)
	}
	return f, "/" + LiveBlob, nil
}

const maxLiveProp = 1 << 20

func readDir(dir, name string, depth int) (*dt.Node, error) {
	if depth > fdtblob.MaxDepth {
		return nil, errorf("%s: nested deeper than %d", dir, fdtblob.MaxDepth)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	n := &dt.Node{Name: name}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			c, err := readDir(p, e.Name(), depth+1)
			if err != nil {
				return nil, err
			}
			n.Children = append(n.Children, c)
			continue
		}
		if e.Type()&fs.ModeType != 0 {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		if fi.Size() > maxLiveProp {
			return nil, errorf("%s: %d bytes, too large for a property", p, fi.Size())
		}
		v, err := readall.File(p, readall.MaxSys)
		if err != nil {
			return nil, err
		}
		// The kernel adds a "name" property to every node for old userspace; it is not
		// in the blob.
		if e.Name() == "name" {
			base, _, _ := strings.Cut(name, "@")
			if strings.TrimRight(string(v), "\x00") == base {
				continue
			}
		}
		n.Properties = append(n.Properties, dt.Property{Name: e.Name(), Value: v})
	}
	return n, nil
}
