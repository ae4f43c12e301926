package netboot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zynqnet/linerate/internal/testfit"
)

// TestReadImage: a FIT says which board it is for, its compatibles, console, arch,
// build and configurations; a file that is no such FIT is an error naming it.
func TestReadImage(t *testing.T) {
	dir := t.TempDir()
	im, err := ReadImage(testfit.Make(t, dir, "linerate-zc702.itb", "zc702", "arm", ""))
	if err != nil {
		t.Fatal(err)
	}
	if im.Board != "zc702" || strings.Join(im.Compatible, " ") != "xlnx,zynq-zc702 xlnx,zynq-7000" || im.Console != "ttyPS0" || im.Arch != "arm" ||
		im.Build != "0123456789abcdef" || !im.HasConfig("conf-zc702-throughput") || im.HasConfig("conf-zc702-latency") {
		t.Errorf("read %+v", im)
	}
	for _, c := range []struct{ name, board, arch, props, want string }{
		{"linerate-zc706.itb", "zc702", "arm", "", "name it linerate-zc702.itb"},
		{"linerate-zc702.itb", "zc702", "mips", "", `kernel arch "mips"`},
		{"linerate-zc702.itb", "zc702", "arm", `linerate,board = "zc702";`, "no linerate,board, linerate,compatible"},
		{"linerate-zc702.itb", "zc702", "arm", `linerate,board = "zc702"; linerate,console = "ttyPS0"; linerate,compatible = "a;reset";`, "not a name U-Boot's shell can carry"},
	} {
		_, err := ReadImage(testfit.Make(t, t.TempDir(), c.name, c.board, c.arch, c.props))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s %s %s: got %v, want %q", c.name, c.arch, c.props, err, c.want)
		}
	}
	junk := filepath.Join(dir, "linerate-x.itb")
	os.WriteFile(junk, []byte("not a device tree at all"), 0o644)
	if _, err := ReadImage(junk); err == nil || !strings.Contains(err.Error(), "want a FIT image") {
		t.Errorf("junk: %v", err)
	}
	if _, err := ReadImage(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
}

// FuzzReadImage: any file's bytes are read without panic.
func FuzzReadImage(f *testing.F) {
	dir := f.TempDir()
	good, _ := os.ReadFile(testfit.Make(f, dir, "linerate-zc702.itb", "zc702", "arm", ""))
	f.Add(good)
	f.Add([]byte{0xd0, 0x0d, 0xfe, 0xed, 0, 0, 0, 0x40})
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "linerate-zc702.itb")
		os.WriteFile(p, b, 0o644)
		ReadImage(p)
	})
}
