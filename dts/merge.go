package dts

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/u-root/u-root/pkg/dt"
)

// Merge applies overlays to a copy of base, in order, the way libfdt's fdt_overlay_apply
// (fdtoverlay, U-Boot's fdt apply) does: the overlay's own phandles are moved above the
// base's highest, its references to them (__local_fixups__) follow, its references to base
// labels (__fixups__) are resolved through the base's __symbols__, every fragment's
// __overlay__ is merged into its target (a phandle, or target-path), and the overlay's
// labels are added to the base's __symbols__ under their new paths. base and the overlays
// are left as they were, whether the merge succeeds or not.
func Merge(base *dt.FDT, overlays ...*dt.FDT) (*dt.FDT, error) {
	out := Clone(base)
	for i, o := range overlays {
		if err := apply(out.RootNode, Clone(o).RootNode); err != nil {
			if len(overlays) > 1 {
				return nil, errorf("overlay %d: %v", i+1, err)
			}
			return nil, err
		}
	}
	return out, nil
}

func apply(base, ov *dt.Node) error {
	delta := maxPhandle(base)
	if err := adjustPhandles(ov, delta); err != nil {
		return err
	}
	if lf := Child(ov, "__local_fixups__"); lf != nil {
		if err := localFixups(ov, lf, "/", delta); err != nil {
			return err
		}
	}
	if err := fixups(base, ov); err != nil {
		return err
	}
	for _, f := range ov.Children {
		body := Child(f, "__overlay__")
		if body == nil || f.Name == "__overlay__" {
			continue
		}
		_, t, err := target(base, f)
		if err != nil {
			return err
		}
		mergeNode(t, body)
	}
	return symbols(base, ov)
}

func adjustPhandles(n *dt.Node, delta uint32) error {
	for _, name := range []string{"phandle", "linux,phandle"} {
		v, ok := Prop(n, name)
		if !ok {
			continue
		}
		if len(v) != 4 {
			return errorf("node %q: %s is %d bytes, want one cell", n.Name, name, len(v))
		}
		p := binary.BigEndian.Uint32(v)
		if p+delta < p || p+delta == 0xffffffff {
			return errorf("node %q: phandle %#x + %#x overflows", n.Name, p, delta)
		}
		binary.BigEndian.PutUint32(v, p+delta)
	}
	for _, c := range n.Children {
		if err := adjustPhandles(c, delta); err != nil {
			return err
		}
	}
	return nil
}

// localFixups walks __local_fixups__ alongside the overlay tree: each property there lists
// the byte offsets of phandles to the overlay's own nodes in the same-named property.
func localFixups(tree, fix *dt.Node, path string, delta uint32) error {
	for _, p := range fix.Properties {
		if len(p.Value)%4 != 0 {
			return errorf("__local_fixups__%s: %s is not a list of cells", path, p.Name)
		}
		v, ok := Prop(tree, p.Name)
		if !ok {
			return errorf("__local_fixups__ names %s%s, which the overlay does not have", path, p.Name)
		}
		for i := 0; i < len(p.Value); i += 4 {
			off := binary.BigEndian.Uint32(p.Value[i:])
			if uint64(off)+4 > uint64(len(v)) {
				return errorf("__local_fixups__: offset %d is past the end of %s%s (%d bytes)", off, path, p.Name, len(v))
			}
			binary.BigEndian.PutUint32(v[off:], binary.BigEndian.Uint32(v[off:])+delta)
		}
	}
	for _, fc := range fix.Children {
		tc := Child(tree, fc.Name)
		if tc == nil {
			return errorf("__local_fixups__ names node %s%s, which the overlay does not have", path, fc.Name)
		}
		if err := localFixups(tc, fc, path+fc.Name+"/", delta); err != nil {
			return err
		}
	}
	return nil
}

// fixups resolves the overlay's references to labels of the base.
func fixups(base, ov *dt.Node) error {
	fx := Child(ov, "__fixups__")
	if fx == nil || len(fx.Properties) == 0 {
		return nil
	}
	syms := Child(base, "__symbols__")
	for _, p := range fx.Properties {
		if syms == nil {
			return errorf("the overlay refers to label %q, but the base has no __symbols__ (it was compiled without dtc -@): compile the base with -@, or write the overlay with target-path (linerate dts overlay --base BASE.dtb does)", p.Name)
		}
		symPath, ok := Prop(syms, p.Name)
		if !ok {
			return errorf("the overlay refers to label %q, which the base does not define (its __symbols__ has %s)", p.Name, labelList(syms))
		}
		sp := strings.TrimRight(string(symPath), "\x00")
		node := Lookup(base, sp)
		if node == nil {
			return errorf("label %q of the base points to %s, which is not in the base", p.Name, sp)
		}
		ph := Phandle(node)
		if ph == 0 {
			return errorf("label %q of the base (%s) has no phandle: compile the base with dtc -@", p.Name, sp)
		}
		if len(p.Value) == 0 || p.Value[len(p.Value)-1] != 0 {
			return errorf("__fixups__: %s is not a list of strings", p.Name)
		}
		for _, ref := range strings.Split(string(p.Value[:len(p.Value)-1]), "\x00") {
			// path:property:offset; the path may not contain ':' (libfdt splits at the first).
			np, rest, ok1 := strings.Cut(ref, ":")
			prop, offs, ok2 := strings.Cut(rest, ":")
			off, err := strconv.ParseUint(offs, 10, 32)
			if !ok1 || !ok2 || prop == "" || err != nil {
				return errorf("__fixups__: %s: malformed reference %q, want PATH:PROPERTY:OFFSET", p.Name, ref)
			}
			n := Lookup(ov, np)
			if n == nil {
				return errorf("__fixups__: %s: %s is not in the overlay", p.Name, np)
			}
			v, ok := Prop(n, prop)
			if !ok || off+4 > uint64(len(v)) {
				return errorf("__fixups__: %s: %s:%s has no cell at offset %d", p.Name, np, prop, off)
			}
			binary.BigEndian.PutUint32(v[off:], ph)
		}
	}
	return nil
}

func labelList(syms *dt.Node) string {
	var l []string
	for _, p := range syms.Properties {
		l = append(l, p.Name)
	}
	if len(l) == 0 {
		return "no labels"
	}
	if len(l) > 12 {
		l = append(l[:12], "...")
	}
	return strings.Join(l, " ")
}

// target finds a fragment's target in the base: the phandle in target, else target-path.
func target(base, frag *dt.Node) (string, *dt.Node, error) {
	if v, ok := Prop(frag, "target"); ok {
		if len(v) != 4 || binary.BigEndian.Uint32(v) == 0xffffffff {
			return "", nil, errorf("%s: target is not a resolved phandle (an unresolved label reference?)", frag.Name)
		}
		if ph := binary.BigEndian.Uint32(v); ph != 0 {
			path, n := ByPhandle(base, ph)
			if n == nil {
				return "", nil, errorf("%s: target phandle %#x is not in the base", frag.Name, ph)
			}
			return path, n, nil
		}
	}
	p, ok := Prop(frag, "target-path")
	if !ok {
		return "", nil, errorf("%s has an __overlay__ but neither target nor target-path", frag.Name)
	}
	path := strings.TrimRight(string(p), "\x00")
	n := Lookup(base, path)
	if n == nil {
		return "", nil, errorf("%s: target-path %q is not in the base", frag.Name, path)
	}
	return path, n, nil
}

func mergeNode(dst, src *dt.Node) {
	for _, p := range src.Properties {
		SetProp(dst, p.Name, p.Value)
	}
	for _, c := range src.Children {
		d := Child(dst, c.Name)
		if d == nil {
			d = &dt.Node{Name: c.Name}
			dst.Children = append(dst.Children, d)
		}
		mergeNode(d, c)
	}
}

// symbols adds the overlay's labels to the base's __symbols__, rewriting
// /FRAGMENT/__overlay__/REST to TARGET/REST as libfdt does (TARGET being the target-path
// as written, or the target node's path).
func symbols(base, ov *dt.Node) error {
	os := Child(ov, "__symbols__")
	if os == nil {
		return nil
	}
	bs := Child(base, "__symbols__")
	if bs == nil {
		bs = &dt.Node{Name: "__symbols__"}
		base.Children = append(base.Children, bs)
	}
	for _, p := range os.Properties {
		v := p.Value
		if len(v) < 1 || strings.IndexByte(string(v), 0) != len(v)-1 || v[0] != '/' {
			return errorf("__symbols__: %s is not a path", p.Name)
		}
		path := string(v[:len(v)-1])
		fragName, rest, ok := strings.Cut(path[1:], "/")
		if !ok {
			continue // refers to something that does not end up in the base
		}
		var rel string
		switch {
		case strings.HasPrefix(rest, "__overlay__/") && len(rest) > len("__overlay__/"):
			rel = rest[len("__overlay__/"):]
		case rest == "__overlay__":
		default:
			continue
		}
		frag := Child(ov, fragName)
		if frag == nil || Child(frag, "__overlay__") == nil {
			return errorf("__symbols__: %s points into %s, which is not a fragment of the overlay", p.Name, fragName)
		}
		tpath, _, err := target(base, frag)
		if err != nil {
			return err
		}
		full := tpath
		if len(tpath) > 1 {
			full += "/"
		}
		SetProp(bs, p.Name, str(full+rel))
	}
	return nil
}
