// Package testfit makes FIT images for tests, as make image writes them, with mkimage.
package testfit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Make writes dir/name, a FIT image as make image writes one for board, with small
// stand-ins for its parts (made by mkimage -f, the reference); props replaces the
// root's linerate properties when given. Without mkimage the test skips (fails in CI,
// where make test installs it).
func Make(t testing.TB, dir, name, board, arch, props string) string {
	t.Helper()
	mk, err := exec.LookPath("mkimage")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("mkimage is not installed (make test installs u-boot-tools)")
		}
		t.Skip("no mkimage")
	}
	blob := filepath.Join(dir, "blob")
	os.WriteFile(blob, []byte("stand-in"), 0o644)
	if props == "" {
		props = `linerate,board = "` + board + `"; linerate,console = "ttyPS0"; linerate,compatible = "xlnx,zynq-` + board + `", "xlnx,zynq-7000"; linerate,build = "0123456789abcdef";`
	}
	its := `/dts-v1/;
/ {
	description = "test"; #address-cells = <1>; ` + props + `
	images {
		kernel { data = /incbin/("` + blob + `"); type = "kernel_noload"; arch = "` + arch + `"; os = "linux"; compression = "none"; load = <0>; entry = <0>; hash { algo = "sha256"; }; };
		fdt { data = /incbin/("` + blob + `"); type = "flat_dt"; arch = "` + arch + `"; compression = "none"; };
	};
	configurations {
		default = "conf-` + board + `";
		conf-` + board + ` { kernel = "kernel"; fdt = "fdt"; };
		conf-` + board + `-throughput { kernel = "kernel"; fdt = "fdt"; };
	};
};
`
	src := filepath.Join(dir, "image.its")
	os.WriteFile(src, []byte(its), 0o644)
	out := filepath.Join(dir, name)
	if b, err := exec.Command(mk, "-f", src, out).CombinedOutput(); err != nil {
		t.Fatalf("mkimage: %v\n%s", err, b)
	}
	return out
}
