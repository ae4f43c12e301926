package board

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, v := range files {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestReadTrace: a tester image's build file, the kernel, the U-Boot that loaded it
// and the FPGA, read off a system's tree; a hostile or broken build file is no build,
// and says why.
func TestReadTrace(t *testing.T) {
	root := writeTree(t, map[string]string{
		BuildFile:                                  `{"id":"0123456789abcdef","linerate":"v1.2","board":"zc702","image_sha256":"aa","kernel":"6.1.192","kernel_config_sha256":"bb"}` + "\n",
		"proc/sys/kernel/osrelease":                "6.1.192\n",
		"proc/device-tree/chosen/u-boot,version":   "2023.01+dfsg-2+deb12u3\x00",
		"sys/class/fpga_manager/fpga0/name":        "Xilinx Zynq FPGA Manager\n",
		"sys/class/fpga_manager/fpga0/state":       "operating\n",
		"proc/device-tree/fpga-full/firmware-name": "system.bit.bin\x00",
	})
	tr := ReadTrace(root)
	if tr.Build == nil || tr.Build.ID != "0123456789abcdef" || tr.Build.Kernel != "6.1.192" || tr.Kernel != "6.1.192" || tr.UBoot != "2023.01+dfsg-2+deb12u3" || tr.Note != "" {
		t.Errorf("%+v %+v", tr, tr.Build)
	}
	if f := tr.FPGA; f == nil || f.Manager != "Xilinx Zynq FPGA Manager" || f.State != "operating" || f.Firmware != "system.bit.bin" {
		t.Errorf("fpga %+v", tr.FPGA)
	}
	// A system that is no tester image, with no FPGA manager and no U-Boot.
	bare := ReadTrace(writeTree(t, map[string]string{"proc/sys/kernel/osrelease": "6.18.44\n"}))
	if bare.Build != nil || bare.Note != "" || bare.FPGA != nil || bare.UBoot != "" || bare.Kernel != "6.18.44" {
		t.Errorf("bare: %+v", bare)
	}
	for name, body := range map[string]string{
		"an unknown field": `{"id":"x","colour":"red"}`,
		"no id":            `{"linerate":"v1"}`,
		"two documents":    `{"id":"x"} {"id":"y"}`,
		"not JSON":         "id=x",
		"too big":          `{"id":"` + strings.Repeat("x", 70<<10) + `"}`,
	} {
		tr := ReadTrace(writeTree(t, map[string]string{BuildFile: body}))
		if tr.Build != nil || !strings.Contains(tr.Note, BuildFile) {
			t.Errorf("%s: %+v", name, tr)
		}
	}
	// Control characters become blanks; a long text is cut to a field's length.
	tr = ReadTrace(writeTree(t, map[string]string{BuildFile: `{"id":"a\u001b[2Jb","kernel":"` + strings.Repeat("k", 300) + `"}`}))
	if tr.Build == nil || tr.Build.ID != "a [2Jb" || len(tr.Build.Kernel) != 256 {
		t.Errorf("hostile texts: %+v", tr.Build)
	}
	// A FIFO where the build file should be does not block the read.
	fifo := t.TempDir()
	os.MkdirAll(filepath.Join(fifo, "etc/linerate"), 0o755)
	if err := mkfifo(filepath.Join(fifo, BuildFile)); err == nil {
		if tr := ReadTrace(fifo); tr.Build != nil || !strings.Contains(tr.Note, "not a regular file") {
			t.Errorf("a FIFO: %+v", tr)
		}
	}
}
