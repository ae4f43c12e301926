package dts

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/u-root/u-root/pkg/dt"

	"github.com/zynqnet/linerate/internal/dttest"
)

// needTool fails under CI (make test installs the reference tools) and skips elsewhere.
func needTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; make test installs it", name)
		}
		t.Skipf("%s is not installed; make test installs it", name)
	}
}

func runTool(t testing.TB, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	needTool(t, name)
	cmd := exec.Command(name, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, stderr.String())
	}
	return out
}

// compile runs dtc -@ on DTS source.
func compile(t testing.TB, src []byte) []byte {
	return runTool(t, src, "dtc", "-q", "-@", "-I", "dts", "-O", "dtb", "-o", "-", "-")
}

func compileFile(t testing.TB, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return compile(t, src)
}

// canonical is dtc's sorted decompilation: the form trees are compared in.
func canonical(t testing.TB, blob []byte) string {
	return string(runTool(t, blob, "dtc", "-q", "-s", "-I", "dtb", "-O", "dts", "-o", "-", "-"))
}

// fdtoverlay applies overlays to base with the reference tool.
func fdtoverlay(t testing.TB, base []byte, overlays ...[]byte) []byte {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "base.dtb")
	os.WriteFile(in, base, 0o644)
	args := []string{"-i", in, "-o", filepath.Join(dir, "out.dtb")}
	for i, o := range overlays {
		p := filepath.Join(dir, "ov"+string(rune('a'+i))+".dtbo")
		os.WriteFile(p, o, 0o644)
		args = append(args, p)
	}
	runTool(t, nil, "fdtoverlay", args...)
	out, err := os.ReadFile(filepath.Join(dir, "out.dtb"))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustDecode(t testing.TB, b []byte) *dt.FDT {
	t.Helper()
	f, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustEncode(t testing.TB, f *dt.FDT) []byte {
	t.Helper()
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// kernelDTB returns a board DTB from the kernel builds of make kernels.
func kernelDTB(t testing.TB, board string) []byte { return dttest.KernelDTB(t, board) }
