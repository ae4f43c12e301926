package experiment

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAutotuneOverlay: the ring depth autotune picks becomes the GEM's overlay, as
// 'dts overlay --rx-ring' writes it: dtc reads the binary back with the property on the
// board's GEM, and the source form says the same.
func TestAutotuneOverlay(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ knob, value, prop string }{{"rings.rx", "2048", "linerate,rx-ring-size = <0x800>"}, {"rings.tx", "1024", "linerate,tx-ring-size = <0x400>"}} {
		ov, err := RingOverlay("zc702", "", c.knob, c.value)
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, c.knob+".dtbo")
		if err := func() error { _, err := ov.WriteFile(bin); return err }(); err != nil {
			t.Fatal(err)
		}
		if _, err := exec.LookPath("dtc"); err == nil {
			out, err := exec.Command("dtc", "-q", "-I", "dtb", "-O", "dts", bin).CombinedOutput()
			if err != nil || !strings.Contains(string(out), c.prop) || !strings.Contains(string(out), "gem0") {
				t.Errorf("%s: dtc reads back (%v):\n%s", c.knob, err, out)
			}
		}
		src := filepath.Join(dir, c.knob+".dts")
		if err := func() error { _, err := ov.WriteFile(src); return err }(); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(src); !strings.Contains(string(b), strings.Split(c.prop, " = ")[0]) {
			t.Errorf("%s: the source:\n%s", c.knob, b)
		}
	}
	for _, c := range []struct{ board, value, want string }{{"zc702", "max", "rings.rx=max is not a depth"}, {"zc702", "100", "power of two"}, {"nosuch", "64", "nosuch"}} {
		if _, err := RingOverlay(c.board, "", "rings.rx", c.value); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.board, c.value, err, c.want)
		}
	}
}
