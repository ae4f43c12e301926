package dts

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/u-root/u-root/pkg/dt"
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

// kernelDTB returns a board DTB from the kernel builds of make kernels
// (scripts/build-kernel-zc702, scripts/fetch-kernel-zcu102), cached under
// $LINERATE_CACHE or /var/cache/linerate.
func kernelDTB(t testing.TB, board string) []byte {
	t.Helper()
	cache := os.Getenv("LINERATE_CACHE")
	if cache == "" {
		cache = "/var/cache/linerate"
	}
	pattern := map[string]string{"zc702": "kernel-zc702-*/zynq-zc702.dtb", "zcu102": "kernel-zcu102/zcu102.dtb"}[board]
	m, _ := filepath.Glob(filepath.Join(cache, pattern))
	if len(m) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("no %s DTB under %s: make test builds the kernels first (make kernels)", board, cache)
		}
		t.Skipf("no %s DTB under %s: run make kernels", board, cache)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}
