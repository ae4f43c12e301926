package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The dts commands driven as a user types them; the dts package tests cover the trees
// against dtc and fdtoverlay in depth, these cover the flags, files and exit codes.

func needDtc(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"dtc", "fdtoverlay"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed; make test installs it", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

func dtcCompile(t *testing.T, src, out string) {
	t.Helper()
	if b, err := exec.Command("dtc", "-q", "-@", "-I", "dts", "-O", "dtb", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("dtc %s: %v %s", src, err, b)
	}
}

func dtcSorted(t *testing.T, dtb string) string {
	t.Helper()
	b, err := exec.Command("dtc", "-q", "-s", "-I", "dtb", "-O", "dts", dtb).Output()
	if err != nil {
		t.Fatalf("dtc %s: %v", dtb, err)
	}
	return string(b)
}

func TestDtsCommands(t *testing.T) {
	needDtc(t)
	dir := t.TempDir()
	base := filepath.Join(dir, "base.dtb")
	dtcCompile(t, "../../dts/testdata/zynq7000-base.dts", base)
	p := func(n string) string { return filepath.Join(dir, n) }

	// overlay: .dts and .dtbo of the same settings; dtc compiles the one to the other.
	for _, out := range []string{"o.dts", "o.dtbo"} {
		stdout, stderr, code := runCLI(t, "dts", "overlay", "--board", "zc702", "--rx-ring", "2048", "--tx-ring", "1024", "--tune", "throughput", "-o", p(out))
		if code != 0 || !strings.Contains(stdout, "target by label gem0") {
			t.Fatalf("overlay -o %s: %d %s %s", out, code, stdout, stderr)
		}
	}
	dtcCompile(t, p("o.dts"), p("o-dtc.dtbo"))
	if dtcSorted(t, p("o.dtbo")) != dtcSorted(t, p("o-dtc.dtbo")) {
		t.Error("our .dtbo differs from dtc's compile of our .dts")
	}

	// merge, and the same with fdtoverlay.
	if _, stderr, code := runCLI(t, "dts", "merge", base, p("o.dtbo"), "-o", p("merged.dtb")); code != 0 {
		t.Fatalf("merge: %d %s", code, stderr)
	}
	if b, err := exec.Command("fdtoverlay", "-i", base, "-o", p("ref.dtb"), p("o.dtbo")).CombinedOutput(); err != nil {
		t.Fatalf("fdtoverlay: %v %s", err, b)
	}
	if dtcSorted(t, p("merged.dtb")) != dtcSorted(t, p("ref.dtb")) {
		t.Error("linerate dts merge differs from fdtoverlay")
	}

	// show, text and JSON.
	stdout, _, code := runCLI(t, "dts", "show", p("merged.dtb"))
	for _, want := range []string{"/axi/ethernet@e000b000  gem0  ethernet0  okay", "linerate,rx-ring-size    <2048>", `linerate,tune-profile    "throughput"`, "(MDIO address 7)", "/axi/ethernet@e000c000  gem1  disabled"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("show lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _, _ = runCLI(t, "dts", "show", "--json", p("merged.dtb"))
	if !strings.Contains(stdout, `"value": "<1024>"`) || !strings.Contains(stdout, `"model": "Xilinx ZC702 board"`) {
		t.Errorf("show --json:\n%s", stdout)
	}

	// --base: a base with symbols keeps the label; without, target-path.
	stdout, _, code = runCLI(t, "dts", "overlay", "--base", base, "--rx-ring", "512", "-o", p("b.dtbo"))
	if code != 0 || !strings.Contains(stdout, "overlay for gem0 of zc702, target by label gem0") {
		t.Errorf("--base with symbols: %d %s", code, stdout)
	}
	nosym := p("nosym.dtb")
	if b, err := exec.Command("dtc", "-q", "-I", "dts", "-O", "dtb", "-o", nosym, "../../dts/testdata/zynq7000-base.dts").CombinedOutput(); err != nil {
		t.Fatalf("dtc: %v %s", err, b)
	}
	stdout, _, code = runCLI(t, "dts", "overlay", "--base", nosym, "--rx-ring", "512", "-o", p("c.dtbo"))
	if code != 0 || !strings.Contains(stdout, "target by path /axi/ethernet@e000b000") {
		t.Errorf("--base without symbols: %d %s", code, stdout)
	}
	if _, stderr, code := runCLI(t, "dts", "merge", nosym, p("b.dtbo"), "-o", p("x.dtb")); code != 2 || !strings.Contains(stderr, "no __symbols__") {
		t.Errorf("label overlay on a base without symbols: %d %s", code, stderr)
	}
	if _, err := os.Stat(p("x.dtb")); err == nil {
		t.Error("a failed merge wrote its output")
	}

	// apply where the kernel has no configfs overlays: exit 1 with the U-Boot way.
	_, stderr, code := runCLI(t, "dts", "apply", "--root", dir, p("o.dtbo"))
	if code != 1 || !strings.Contains(stderr, "no configfs device-tree overlay interface") || !strings.Contains(stderr, "fdt apply ${fdtoverlay_addr_r}") {
		t.Errorf("apply without configfs: %d %s", code, stderr)
	}
}

func TestDtsBadInput(t *testing.T) {
	needDtc(t)
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	os.WriteFile(p("trunc.dtb"), []byte{0xd0, 0x0d, 0xfe, 0xed, 0, 0, 1, 0, 0, 0, 0, 0x38, 0, 0, 0, 0, 0, 0, 0, 0x28, 0, 0, 0, 17, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0o644)
	os.WriteFile(p("text.dtb"), []byte("this is a text file and not a device tree at all\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"dts", "overlay", "--board", "zc702", "--rx-ring", "32", "-o", p("a.dtbo")}, "outside 64..8192"},
		{[]string{"dts", "overlay", "--board", "zc702", "--tx-ring", "8192", "-o", p("a.dtbo")}, "outside 64..4096"},
		{[]string{"dts", "overlay", "--board", "zc702", "--rx-ring", "3000", "-o", p("a.dtbo")}, "give 4096"},
		{[]string{"dts", "overlay", "--board", "zc702", "--gem", "gem3", "--rx-ring", "512", "-o", p("a.dtbo")}, "has no gem3"},
		{[]string{"dts", "overlay", "--board", "zc999", "--rx-ring", "512", "-o", p("a.dtbo")}, "zc999"},
		{[]string{"dts", "overlay", "--board", "zc702", "--mac", "00:0a:35", "-o", p("a.dtbo")}, "--mac"},
		{[]string{"dts", "overlay", "--board", "zc702", "-o", p("a.dtbo")}, "sets nothing"},
		{[]string{"dts", "overlay", "--board", "zc702", "--rx-ring", "512", "-o", p("a.txt")}, "name it .dts"},
		{[]string{"dts", "overlay", "--board", "zc702", "--rx-ring", "512"}, "-o FILE"},
		{[]string{"dts", "overlay", "--board", "zc702", "--rx-ring", "512", "--base", p("trunc.dtb"), "-o", p("a.dtbo")}, "trunc.dtb: device tree blob is truncated"},
		{[]string{"dts", "merge", p("text.dtb"), p("trunc.dtb"), "-o", p("m.dtb")}, "text.dtb: not a device tree blob: magic"},
		{[]string{"dts", "merge", p("missing.dtb"), p("trunc.dtb"), "-o", p("m.dtb")}, "missing.dtb: no such file"},
		{[]string{"dts", "show"}, "give one FILE.dtb or --live"},
		{[]string{"dts", "show", "--live", "--root", dir}, "no live device tree"},
		{[]string{"dts", "frobnicate"}, "unknown dts command"},
		{[]string{"dts", "apply", p("text.dtb"), "--root", dir}, "text.dtb: not a device tree blob"},
	} {
		_, stderr, code := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q in:\n%s", tc.args[1:], code, tc.want, stderr)
		}
	}
	if _, err := os.Stat(p("a.dtbo")); err == nil {
		t.Error("a refused overlay was written")
	}
}

// TestDtsShowEscapesControls: a DTB's strings cannot drive the terminal: dts show
// writes escape sequences from a model or compatible as visible text.
func TestDtsShowEscapesControls(t *testing.T) {
	needDtc(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "evil.dts")
	os.WriteFile(src, []byte(`/dts-v1/;
/ {
	model = "evil\x1b]0;owned\x07\x1b[2J board";
	compatible = "xlnx,zynq-zc702\r\x1b[1A";
	ethernet@e000b000 { compatible = "cdns,zynq-gem\x1b[31m", "cdns,gem"; status = "okay"; phy-mode = "rgmii-id\x1b[0m"; };
};
`), 0o644)
	dtb := filepath.Join(dir, "evil.dtb")
	dtcCompile(t, src, dtb)
	out, errOut, code := runCLI(t, "dts", "show", dtb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.ContainsAny(out, "\x1b\x07\r") {
		t.Fatalf("control characters reach the terminal: %q", out)
	}
	for _, want := range []string{`evil\x1b]0;owned\x07\x1b[2J board`, `rgmii-id\x1b[0m`} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q shown escaped in:\n%s", want, out)
		}
	}
}

// TestOutputIntoDevices: an output flag aimed at a device node or a FIFO writes into it
// (as '> /dev/null' would) and leaves it what it was; aimed at a symbolic link it is
// refused and the link's target kept. (Before, the output was renamed over the node:
// 'autotune --write-profile /dev/null' made /dev/null a regular file.)
func TestOutputIntoDevices(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a device node needs root")
	}
	needDtc(t)
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	base := p("base.dtb")
	dtcCompile(t, "../../dts/testdata/zynq7000-base.dts", base)
	runCLI(t, "dts", "overlay", "--board", "zc702", "--rx-ring", "2048", "-o", p("o.dtbo"))
	null := p("null.dtbo") // overlay -o takes its format from the name
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatal(err)
	}
	fifo := p("fifo.dtbo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p("target"), []byte("keep"), 0o644)
	os.Symlink(p("target"), p("link.dtbo"))
	for _, args := range [][]string{
		{"dts", "overlay", "--board", "zc702", "--rx-ring", "2048", "-o"},
		{"dts", "merge", base, p("o.dtbo"), "-o"},
	} {
		if _, stderr, code := runCLI(t, append(args, null)...); code != 0 {
			t.Errorf("%v into a device: %d %s", args, code, stderr)
		}
		if fi, err := os.Lstat(null); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%v: the device node is now %v (%v)", args, fi.Mode(), err)
		}
		got := make(chan int, 1)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				got <- -1
				return
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			got <- len(b)
		}()
		// The reader opens the FIFO first; a writer with no reader is refused by name.
		time.Sleep(100 * time.Millisecond)
		if _, stderr, code := runCLI(t, append(args, fifo)...); code != 0 {
			t.Errorf("%v into a FIFO: %d %s", args, code, stderr)
			if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				f.Close() // let the reader go
			}
		}
		if n := <-got; n <= 0 {
			t.Errorf("%v: the FIFO's reader got %d bytes", args, n)
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("%v: the FIFO is now %v (%v)", args, fi.Mode(), err)
		}
		if _, stderr, code := runCLI(t, append(args, p("link.dtbo"))...); code == 0 || !strings.Contains(stderr, "symbolic link") {
			t.Errorf("%v through a link: %d %s", args, code, stderr)
		}
		if b, _ := os.ReadFile(p("target")); string(b) != "keep" {
			t.Errorf("%v: the link's target was replaced", args)
		}
	}
}
