package dts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zynqnet/linerate/internal/readall"
	"github.com/zynqnet/linerate/tune"
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

// FromDT builds the tune profile the live device tree asks for the interface (the
// properties Prop*: `linerate tune --from-dt`), from its node
// (NodeDir) under root.
func FromDT(root, iface string) (*tune.Profile, error) {
	node, ok := NodeDir(root, iface)
	if !ok {
		return nil, fmt.Errorf("%s has no device-tree node: %w", iface, ErrNoDTTuning)
	}
	src := "device tree " + node
	p := &tune.Profile{Name: "device-tree", Description: "linerate properties of " + iface + "'s device-tree node", Required: map[string]bool{}, Source: src}
	found := false
	if b, err := readall.File(filepath.Join(node, PropProfile), readall.MaxSys); err == nil {
		name := strings.TrimRight(string(b), "\x00")
		base, err := tune.Builtin(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", src, PropProfile, err)
		}
		p.Settings, p.Required, p.Name = base.Settings, base.Required, "device-tree ("+name+")"
		found = true
	}
	for prop, knob := range map[string]string{PropRxRing: tune.RingKnob(true), PropTxRing: tune.RingKnob(false)} {
		b, err := readall.File(filepath.Join(node, prop), readall.MaxSys)
		if err != nil {
			continue
		}
		if len(b) != 4 {
			return nil, fmt.Errorf("%s: %s is %d bytes, want one u32 cell", src, prop, len(b))
		}
		v := strconv.FormatUint(uint64(binary.BigEndian.Uint32(b)), 10)
		if _, err := tune.CheckSetting(knob, v); err != nil {
			return nil, fmt.Errorf("%s: %s: %v", src, prop, err)
		}
		replaced := false
		for i := range p.Settings {
			if p.Settings[i].Knob == knob {
				p.Settings[i].Value, replaced = v, true
			}
		}
		if !replaced {
			p.Settings = append(p.Settings, tune.Setting{Knob: knob, Value: v})
		}
		p.Required[knob] = true
		found = true
	}
	if !found {
		return nil, fmt.Errorf("%s: %w", iface, ErrNoDTTuning)
	}
	return p, nil
}
