package netboot

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/u-root/u-root/pkg/dt"
	"github.com/zynqnet/linerate/internal/fdtblob"
)

// MaxImage bounds a FIT image the station reads (a tester image is about 10 MB).
const MaxImage = 512 << 20

// Image is what a tester image (a FIT, as make image writes it) says of itself: the
// board it is for, that board's device-tree compatibles and console, the architecture
// U-Boot names, its build, and its configurations.
type Image struct {
	Path       string
	Board      string
	Compatible []string
	Console    string
	Arch       string
	Build      string
	Configs    []string
}

// HasConfig says whether the image has a configuration of that name.
func (im Image) HasConfig(name string) bool {
	i := sort.SearchStrings(im.Configs, name)
	return i < len(im.Configs) && im.Configs[i] == name
}

// ReadImage reads a FIT image's own description: the root's linerate,board,
// linerate,compatible, linerate,console and linerate,build, the kernel's arch, and the
// configurations (internal/fdtblob parses the tree, every size checked before use).
func ReadImage(path string) (Image, error) {
	bad := func(why string) (Image, error) {
		return Image{}, fmt.Errorf("%s: %s: want a FIT image from make image (out/linerate-BOARD.itb)", path, why)
	}
	f, err := os.Open(path)
	if err != nil {
		return Image{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return bad("not a regular file")
	}
	if fi.Size() > MaxImage {
		return bad(fmt.Sprintf("%d bytes, more than %d", fi.Size(), MaxImage))
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxImage))
	if err != nil {
		return bad(err.Error())
	}
	fdt, err := fdtblob.Decode(b, MaxImage)
	if err != nil {
		return bad(err.Error())
	}
	root := fdt.RootNode
	str := func(n *dt.Node, name string) string {
		if p, ok := n.LookProperty(name); ok {
			return strings.TrimRight(string(p.Value), "\x00")
		}
		return ""
	}
	im := Image{Path: path, Board: str(root, "linerate,board"), Console: str(root, "linerate,console"), Build: str(root, "linerate,build")}
	if p, ok := root.LookProperty("linerate,compatible"); ok {
		for _, c := range bytes.Split(bytes.TrimRight(p.Value, "\x00"), []byte{0}) {
			im.Compatible = append(im.Compatible, string(c))
		}
	}
	if k, ok := root.NodeByName("kernel"); ok {
		im.Arch = str(k, "arch")
	}
	if c, ok := root.LookupChildByName("configurations"); ok {
		for _, n := range c.Children {
			im.Configs = append(im.Configs, n.Name)
		}
	}
	sort.Strings(im.Configs)
	if why := im.problem(); why != "" {
		return bad(why)
	}
	return im, nil
}

// problem is what makes an image one the station cannot serve ("" when none).
func (im Image) problem() string {
	switch {
	case im.Board == "" || len(im.Compatible) == 0 || im.Console == "":
		return "no linerate,board, linerate,compatible or linerate,console at its root"
	case im.Arch != "arm" && im.Arch != "arm64":
		return fmt.Sprintf("kernel arch %q, want arm or arm64", im.Arch)
	case filepath.Base(im.Path) != "linerate-"+im.Board+".itb":
		return fmt.Sprintf("the image is for board %s: name it linerate-%s.itb", im.Board, im.Board)
	case !im.HasConfig("conf-" + im.Board):
		return "no configuration conf-" + im.Board
	}
	for _, s := range append([]string{im.Board, im.Console}, im.Compatible...) {
		if s == "" || strings.ContainsAny(s, "\"'$;\\#\n ") {
			return fmt.Sprintf("%q: not a name U-Boot's shell can carry", s)
		}
	}
	return ""
}
