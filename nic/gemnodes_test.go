package nic

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/u-root/u-root/pkg/dt"

	"github.com/zynqnet/linerate/internal/dttest"
	"github.com/zynqnet/linerate/internal/fdtblob"
)

const liveBase = "sys/firmware/devicetree/base"

func prop(name, v string) dt.Property { return dt.Property{Name: name, Value: []byte(v)} }

// gemTree is a ZC702-like tree: two GEMs on the bus (one disabled, one with a PHY under
// its mdio node and a ring depth), pin groups, and nodes with no compatible.
func gemTree() *dt.Node {
	phy := &dt.Node{Name: "ethernet-phy@7", Properties: []dt.Property{prop("reg", "\x00\x00\x00\x07"), prop("compatible", "ethernet-phy-id0141.0cc2\x00")}}
	gem0 := &dt.Node{Name: "ethernet@e000b000", Properties: []dt.Property{prop("compatible", "cdns,zynq-gem\x00cdns,gem\x00"),
		prop("status", "okay\x00"), prop("reg", "\xe0\x00\xb0\x00\x00\x00\x10\x00"), prop("dma-rx-depth", "\x00\x00\x10\x00"), prop("phy-mode", "rgmii-id\x00")},
		Children: []*dt.Node{{Name: "mdio", Children: []*dt.Node{phy}}}}
	gem1 := &dt.Node{Name: "ethernet@e000c000", Properties: []dt.Property{prop("compatible", "cdns,zynq-gem\x00cdns,gem\x00"), prop("status", "disabled\x00")}}
	var groups []*dt.Node
	for _, g := range []string{"gem0-default", "i2c0-default", "uart1-default", "usb0-default"} {
		groups = append(groups, &dt.Node{Name: g, Children: []*dt.Node{{Name: "mux", Properties: []dt.Property{prop("groups", g+"\x00")}}}})
	}
	slcr := &dt.Node{Name: "slcr@f8000000", Properties: []dt.Property{prop("compatible", "xlnx,zynq-slcr\x00syscon\x00simple-mfd\x00")},
		Children: []*dt.Node{{Name: "pinctrl@700", Properties: []dt.Property{prop("compatible", "xlnx,pinctrl-zynq\x00")}, Children: groups}}}
	axi := &dt.Node{Name: "axi", Properties: []dt.Property{prop("compatible", "simple-bus\x00")}, Children: []*dt.Node{gem1, slcr, gem0}}
	return &dt.Node{Properties: []dt.Property{prop("compatible", "xlnx,zynq-zc702\x00xlnx,zynq-7000\x00")},
		Children: []*dt.Node{{Name: "chosen"}, {Name: "cpus", Children: []*dt.Node{{Name: "cpu@0", Properties: []dt.Property{prop("compatible", "arm,cortex-a9\x00")}}}}, axi}}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o444); err != nil {
		t.Fatal(err)
	}
}

func blobOf(t *testing.T, root *dt.Node) []byte {
	t.Helper()
	f := &dt.FDT{RootNode: root, ReserveEntries: []dt.ReserveEntry{}}
	f.Header.Magic, f.Header.Version, f.Header.LastCompVersion = fdtblob.Magic, 17, 16
	var buf bytes.Buffer
	if _, err := f.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// liveTree writes the tree as the kernel shows it, with its boot blob, under a new root.
func liveTree(t *testing.T, n *dt.Node) fsRoot {
	t.Helper()
	root := t.TempDir()
	dttest.WriteLive(t, filepath.Join(root, liveBase), n)
	write(t, filepath.Join(root, "sys/firmware/fdt"), string(blobOf(t, n)))
	return fsRoot{root: root}
}

func walked(r fsRoot) []DTNode {
	var out []DTNode
	r.walkDT(liveBase, "", 0, &out)
	return out
}

func paths(ns []DTNode) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Path+" "+n.Status)
	}
	return out
}

// TestGEMNodesFromBlob: the GEM nodes read where the boot blob says they are are the
// walk's, in its order, with their live properties; a node the live tree has and the blob
// has not is the walk's alone, found once an overlay is loaded through configfs, or when
// the blob cannot be read.
func TestGEMNodesFromBlob(t *testing.T) {
	r := liveTree(t, gemTree())
	got := r.readGEMNodes()
	if want := walked(r); !reflect.DeepEqual(got, want) || len(got) != 2 {
		t.Fatalf("from the blob %v, walked %v", paths(got), paths(want))
	}
	if got[0].Path != "/axi/ethernet@e000b000" || string(got[0].Props["dma-rx-depth"]) != "\x00\x00\x10\x00" || got[1].Status != "disabled" {
		t.Errorf("GEM nodes %+v", got)
	}

	// Live changes to a GEM node of the blob are read: an overlay enabled GEM1.
	write(t, filepath.Join(r.root, liveBase, "axi/ethernet@e000c000/status"), "okay\x00")
	if got := r.readGEMNodes(); got[1].Status != "okay" {
		t.Errorf("live status: %v, want GEM1 okay", paths(got))
	}

	// A GEM node only the live tree has: not looked for while the blob holds...
	extra := filepath.Join(r.root, liveBase, "axi/fpga-region/ethernet@43c00000")
	write(t, filepath.Join(extra, "compatible"), "cdns,gem\x00")
	if got := r.readGEMNodes(); len(got) != 2 {
		t.Errorf("without an overlay: %v, want the blob's two", paths(got))
	}
	// ...found once configfs holds an overlay, or when the blob is not one.
	overlay := filepath.Join(r.root, "sys/kernel/config/device-tree/overlays/gem")
	if err := os.MkdirAll(overlay, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := r.readGEMNodes(), walked(r); len(got) != 3 || !reflect.DeepEqual(got, want) {
		t.Errorf("with an overlay: %v, want the walk's %v", paths(got), paths(want))
	}
	os.Remove(overlay)
	write(t, filepath.Join(r.root, "sys/firmware/fdt"), "\xd0\x0d\xfe\xed truncated")
	if got := r.readGEMNodes(); len(got) != 3 {
		t.Errorf("bad blob: %v, want the walk's three", paths(got))
	}
	os.Remove(filepath.Join(r.root, "sys/firmware/fdt"))
	if got := r.readGEMNodes(); len(got) != 3 {
		t.Errorf("no blob: %v, want the walk's three", paths(got))
	}

	// Recording a snapshot walks (the node only the live tree has is found), and the
	// snapshot holds the walk's files, not the blob.
	rec := liveTree(t, gemTree())
	write(t, filepath.Join(rec.root, liveBase, "axi/fpga-region/ethernet@43c00000/compatible"), "cdns,gem\x00")
	rec.rec = NewRecorder()
	if got := rec.readGEMNodes(); len(got) != 3 {
		t.Errorf("recording: %v, want the walk's three", paths(got))
	}
	if _, ok := rec.rec.files["sys/firmware/fdt"]; ok || len(rec.rec.files) == 0 {
		t.Errorf("recorded %d files, the blob among them: %v", len(rec.rec.files), ok)
	}
}

// TestGEMNodesFromKernelBlob: on the ZC702 kernel's own DTB (make kernels), the nodes
// read from the blob's paths are the walk's.
func TestGEMNodesFromKernelBlob(t *testing.T) {
	b := dttest.KernelDTB(t, "zc702")
	f, err := fdtblob.Decode(b, maxFDT)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dttest.WriteLive(t, filepath.Join(root, liveBase), f.RootNode)
	write(t, filepath.Join(root, "sys/firmware/fdt"), string(b))
	r := fsRoot{root: root}
	got := r.readGEMNodes()
	if want := walked(r); len(got) != 2 || !reflect.DeepEqual(got, want) {
		t.Errorf("from the blob %v, walked %v", paths(got), paths(want))
	}
}
