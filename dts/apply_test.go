package dts

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeConfigfs does what the kernel's configfs overlay code does on mkdir (create dtbo
// and status, "unapplied") and, through apply, on the write of dtbo.
type fakeConfigfs struct {
	root   string
	result string // status after the dtbo write: applied, or unapplied (refused)
}

func (f *fakeConfigfs) mkdir(p string) error {
	if err := os.Mkdir(p, 0o755); err != nil {
		return err
	}
	os.WriteFile(filepath.Join(p, "status"), []byte(f.result+"\n"), 0o644)
	os.WriteFile(filepath.Join(p, "path"), nil, 0o644)
	return nil
}

func TestConfigfsApply(t *testing.T) {
	o := &Overlay{Board: mustBoard(t, "zc702"), RxRing: 1024}
	tr, _ := o.Tree()
	blob := mustEncode(t, tr)

	root := t.TempDir()
	dir := filepath.Join(root, ConfigfsDir)
	os.MkdirAll(dir, 0o755)
	fake := &fakeConfigfs{root: root, result: "applied"}
	c := &Configfs{Root: root, Mkdir: fake.mkdir}
	st, err := c.Apply("gem0-rings", blob)
	if err != nil || st != "applied" {
		t.Fatalf("Apply: %q %v", st, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "gem0-rings", "dtbo")); string(b) != string(blob) {
		t.Error("the blob was not written to dtbo")
	}
	if _, err := c.Apply("gem0-rings", blob); err == nil || !strings.Contains(err.Error(), "already loaded") {
		t.Errorf("second apply under the same name: %v", err)
	}
	if err := c.Remove("gem0-rings"); err != nil {
		// A real configfs removes its files itself; the fake leaves them.
		os.RemoveAll(filepath.Join(dir, "gem0-rings"))
	}
	if err := c.Remove("gem0-rings"); err == nil || !strings.Contains(err.Error(), "no overlay named gem0-rings") {
		t.Errorf("remove twice: %v", err)
	}

	// The kernel refuses it: the directory goes again, nothing stays half-applied.
	fake.result = "unapplied"
	c.Mkdir = func(p string) error {
		if err := fake.mkdir(p); err != nil {
			return err
		}
		// os.Remove of a directory with files fails on a real fs; configfs has none to remove.
		t.Cleanup(func() { os.RemoveAll(p) })
		return nil
	}
	if _, err := c.Apply("refused", blob); err == nil || !strings.Contains(err.Error(), `status "unapplied"`) {
		t.Errorf("refused overlay: %v", err)
	}

	// Bad input never reaches configfs.
	for _, tc := range []struct {
		name string
		blob []byte
		want string
	}{
		{"x/../y", blob, "overlay name"},
		{"base", compileFile(t, "zynq7000-base.dts"), "not an overlay"},
		{"junk", []byte("not a dtbo at all, but long enough for a header"), "magic"},
	} {
		_, err := c.Apply(tc.name, tc.blob)
		var de *Error
		if !errors.As(err, &de) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}

	// No configfs overlays (a mainline kernel): ErrNoConfigfs, and the mount is tried
	// when /sys/kernel/config is empty.
	bare := t.TempDir()
	os.MkdirAll(filepath.Join(bare, "sys/kernel/config"), 0o755)
	mounted := false
	c2 := &Configfs{Root: bare, Mount: func(string) error { mounted = true; return nil }}
	if _, err := c2.Apply("x", blob); !errors.Is(err, ErrNoConfigfs) || !mounted {
		t.Errorf("no configfs: %v (mount tried: %v)", err, mounted)
	}
	if h := UBootHelp("/tmp/x.dtbo"); !strings.Contains(h, "fdt apply ${fdtoverlay_addr_r}") || !strings.Contains(h, "fdt resize") || !strings.Contains(h, "linerate dts merge system.dtb /tmp/x.dtbo") {
		t.Errorf("U-Boot help:\n%s", h)
	}
}
