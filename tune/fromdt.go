package tune

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Device-tree properties linerate reads from the interface's GEM node (its own,
// vendor-prefixed: no upstream driver reads dma-rx-depth or similar, see DESIGN.md):
//
//	linerate,rx-ring-size  <u32>      rings.rx
//	linerate,tx-ring-size  <u32>      rings.tx
//	linerate,tune-profile  "NAME"     a built-in profile applied first
const (
	DTRxRing  = "linerate,rx-ring-size"
	DTTxRing  = "linerate,tx-ring-size"
	DTProfile = "linerate,tune-profile"
)

// ErrNoDTTuning is returned when the interface's device-tree node has no linerate
// properties (or the interface has no node).
var ErrNoDTTuning = errors.New("no linerate properties in the device tree")

// NodeDir is the interface's device-tree node under root: the of_node link of its
// device (where platform drivers such as macb have it), or of the interface itself.
func NodeDir(root, iface string) (string, bool) {
	for _, p := range []string{"device/of_node", "of_node"} {
		node := filepath.Join(root, "sys/class/net", iface, p)
		if fi, err := os.Stat(node); err == nil && fi.IsDir() {
			return node, true
		}
	}
	return "", false
}

// FromDT builds the profile the live device tree asks for the interface, from its node
// (NodeDir) under root.
func FromDT(root, iface string) (*Profile, error) {
	node, ok := NodeDir(root, iface)
	if !ok {
		return nil, fmt.Errorf("%s has no device-tree node: %w", iface, ErrNoDTTuning)
	}
	src := "device tree " + node
	p := &Profile{Name: "device-tree", Description: "linerate properties of " + iface + "'s device-tree node", Required: map[string]bool{}, Source: src}
	found := false
	if b, err := os.ReadFile(filepath.Join(node, DTProfile)); err == nil {
		name := strings.TrimRight(string(b), "\x00")
		base, err := Builtin(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", src, DTProfile, err)
		}
		p.Settings, p.Required, p.Name = base.Settings, base.Required, "device-tree ("+name+")"
		found = true
	}
	for prop, knob := range map[string]string{DTRxRing: "rings.rx", DTTxRing: "rings.tx"} {
		b, err := os.ReadFile(filepath.Join(node, prop))
		if err != nil {
			continue
		}
		if len(b) != 4 {
			return nil, fmt.Errorf("%s: %s is %d bytes, want one u32 cell", src, prop, len(b))
		}
		v := strconv.FormatUint(uint64(binary.BigEndian.Uint32(b)), 10)
		if err := checkValue(knob, kCount, v); err != nil {
			return nil, fmt.Errorf("%s: %s: %v", src, prop, err)
		}
		replaced := false
		for i := range p.Settings {
			if p.Settings[i].Knob == knob {
				p.Settings[i].Value, replaced = v, true
			}
		}
		if !replaced {
			p.Settings = append(p.Settings, Setting{Knob: knob, Value: v})
		}
		p.Required[knob] = true
		found = true
	}
	if !found {
		return nil, fmt.Errorf("%s: %w", iface, ErrNoDTTuning)
	}
	return p, nil
}
