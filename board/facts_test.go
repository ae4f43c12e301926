package board

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

func TestFacts(t *testing.T) {
	for _, b := range All() {
		f, err := b.Facts()
		if err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		want := map[string]string{"zynq-7000": "arm", "zynqmp": "arm64"}[b.SoC]
		if f.GOARCH != want || f.Board != b.Name || f.Console == "" || f.QEMUMachine == "" {
			t.Errorf("%s: %+v", b.Name, f)
		}
	}
	if _, err := (&Board{Name: "x", SoC: "versal"}).Facts(); err == nil {
		t.Error("a SoC without recipe has facts")
	}
}

// The --env form is what the scripts eval: a shell reads back every value as written.
func TestWriteEnvEvaluates(t *testing.T) {
	f := Facts{Board: "odd'name", SoC: "zynq-7000", GOARCH: "arm", GOARM: "7", QEMU: "qemu-system-arm", QEMUMachine: "xilinx-zynq-a9", Console: "ttyPS0", UBootArch: "arm", GEM: "gem0"}
	var b bytes.Buffer
	if err := f.WriteEnv(&b); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", "-c", b.String()+`printf '%s|%s|%s' "$LINERATE_BOARD" "$LINERATE_QEMU_MACHINE" "$LINERATE_GOARM"`).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); got != "odd'name|xilinx-zynq-a9|7" {
		t.Fatalf("bash read %q", got)
	}
	if !strings.Contains(b.String(), "LINERATE_SOC='zynq-7000'") {
		t.Fatalf("env: %s", b.String())
	}
}
