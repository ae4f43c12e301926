package dts

import (
	"bytes"
	"encoding/binary"
	"strings"

	"github.com/u-root/u-root/pkg/dt"
)

// Prop returns the value of n's property name.
func Prop(n *dt.Node, name string) ([]byte, bool) {
	for i := range n.Properties {
		if n.Properties[i].Name == name {
			return n.Properties[i].Value, true
		}
	}
	return nil, false
}

// PropString returns a string property without its terminating NUL ("" when absent).
func PropString(n *dt.Node, name string) string {
	v, _ := Prop(n, name)
	return strings.TrimRight(string(v), "\x00")
}

// PropStrings returns a string-list property.
func PropStrings(n *dt.Node, name string) []string {
	v, ok := Prop(n, name)
	if !ok || len(v) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(v), "\x00"), "\x00")
}

// PropU32 returns a one-cell property.
func PropU32(n *dt.Node, name string) (uint32, bool) {
	v, ok := Prop(n, name)
	if !ok || len(v) != 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(v), true
}

// SetProp sets a property in place, or appends it (as libfdt's fdt_setprop does).
func SetProp(n *dt.Node, name string, v []byte) {
	for i := range n.Properties {
		if n.Properties[i].Name == name {
			n.Properties[i].Value = v
			return
		}
	}
	n.Properties = append(n.Properties, dt.Property{Name: name, Value: v})
}

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func str(s string) []byte { return append([]byte(s), 0) }

// Child returns n's child called name: by its full name, or, when name has no unit
// address, the child whose name without the unit address matches (libfdt's rule).
func Child(n *dt.Node, name string) *dt.Node {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	if !strings.Contains(name, "@") {
		for _, c := range n.Children {
			if base, _, ok := strings.Cut(c.Name, "@"); ok && base == name {
				return c
			}
		}
	}
	return nil
}

// Lookup finds a node by path ("/axi/ethernet@e000b000"), or by an alias ("ethernet0",
// "ethernet0/mdio") as libfdt's fdt_path_offset does.
func Lookup(root *dt.Node, path string) *dt.Node {
	if path == "" {
		return nil
	}
	n := root
	rest := path
	if path[0] != '/' {
		alias, tail, _ := strings.Cut(path, "/")
		aliases := Child(root, "aliases")
		if aliases == nil {
			return nil
		}
		target := PropString(aliases, alias)
		if !strings.HasPrefix(target, "/") {
			return nil
		}
		n = Lookup(root, target)
		rest = tail
	}
	for _, c := range strings.Split(rest, "/") {
		if n == nil {
			return nil
		}
		if c == "" {
			continue
		}
		n = Child(n, c)
	}
	return n
}

// Walk calls fn for every node below and including n, parents first, with its path.
func Walk(n *dt.Node, fn func(path string, n *dt.Node) error) error {
	return walk("/", n, fn)
}

func walk(path string, n *dt.Node, fn func(string, *dt.Node) error) error {
	if err := fn(path, n); err != nil {
		return err
	}
	for _, c := range n.Children {
		p := path + "/" + c.Name
		if path == "/" {
			p = "/" + c.Name
		}
		if err := walk(p, c, fn); err != nil {
			return err
		}
	}
	return nil
}

// Phandle returns a node's phandle (phandle, or the older linux,phandle), 0 if none.
func Phandle(n *dt.Node) uint32 {
	if v, ok := PropU32(n, "phandle"); ok {
		return v
	}
	v, _ := PropU32(n, "linux,phandle")
	return v
}

// ByPhandle finds the node with that phandle and its path.
func ByPhandle(root *dt.Node, ph uint32) (string, *dt.Node) {
	var path string
	var found *dt.Node
	Walk(root, func(p string, n *dt.Node) error {
		if found == nil && ph != 0 && ph != 0xffffffff && Phandle(n) == ph {
			path, found = p, n
		}
		return nil
	})
	return path, found
}

// PathOf returns the path of target within root ("" when it is not there).
func PathOf(root, target *dt.Node) string {
	var path string
	Walk(root, func(p string, n *dt.Node) error {
		if n == target && path == "" {
			path = p
		}
		return nil
	})
	return path
}

func maxPhandle(root *dt.Node) uint32 {
	var m uint32
	Walk(root, func(_ string, n *dt.Node) error {
		if p := Phandle(n); p != 0xffffffff && p > m {
			m = p
		}
		return nil
	})
	return m
}

// Clone deep-copies a tree, so a failed merge leaves its inputs as they were.
func Clone(f *dt.FDT) *dt.FDT {
	c := *f
	c.ReserveEntries = append([]dt.ReserveEntry{}, f.ReserveEntries...)
	c.RootNode = cloneNode(f.RootNode)
	return &c
}

func cloneNode(n *dt.Node) *dt.Node {
	c := &dt.Node{Name: n.Name}
	for _, p := range n.Properties {
		c.Properties = append(c.Properties, dt.Property{Name: p.Name, Value: bytes.Clone(p.Value)})
	}
	for _, ch := range n.Children {
		c.Children = append(c.Children, cloneNode(ch))
	}
	return c
}
