package netboot

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScriptImageAsMkimage: the script image is byte for byte what mkimage (Debian's
// u-boot-tools, the reference) writes for the same script, name and time, and mkimage -l
// reads it back.
func TestScriptImageAsMkimage(t *testing.T) {
	mk, err := exec.LookPath("mkimage")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("mkimage is not installed (make test installs u-boot-tools)")
		}
		t.Skip("no mkimage")
	}
	script := Script(ScriptParams{Station: "http://198.18.5.1:8080/api/reports", Plan: "qemu-zc702", Fixture: "tap0",
		Boards: []ScriptBoard{{"zc702", "xlnx,zynq-zc702", "conf-zc702", "ttyPS0"}}, Extra: "linerate.after=reboot"})
	made := time.Unix(1764000000, 0)
	for _, arch := range []string{"arm", "arm64"} {
		got, err := ScriptImage(arch, "linerate netboot", script, made)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		in, out := filepath.Join(dir, "boot.scr"), filepath.Join(dir, "boot.scr.uimg")
		os.WriteFile(in, []byte(script), 0o644)
		cmd := exec.Command(mk, "-A", arch, "-O", "linux", "-T", "script", "-C", "none", "-n", "linerate netboot", "-d", in, out)
		cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1764000000")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mkimage: %v\n%s", err, b)
		}
		want, _ := os.ReadFile(out)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes differ from mkimage's %d", arch, len(got), len(want))
		}
		os.WriteFile(out, got, 0o644)
		list, err := exec.Command(mk, "-l", out).CombinedOutput()
		if err != nil || !strings.Contains(string(list), "Linux Script (uncompressed)") || !strings.Contains(string(list), "linerate netboot") {
			t.Errorf("mkimage -l: %v\n%s", err, list)
		}
	}
	if _, err := ScriptImage("mips", "x", "", made); err == nil {
		t.Error("an unknown architecture")
	}
	if _, err := ScriptImage("arm", strings.Repeat("n", 32), "", made); err == nil {
		t.Error("a name too long")
	}
	for _, want := range []string{`if test "${linerate_compat}" = "xlnx,zynq-zc702"; then setenv linerate_board zc702; setenv linerate_conf conf-zc702;`,
		`linerate.peer=${serverip} linerate.station=http://198.18.5.1:8080/api/reports linerate.plan=qemu-zc702 linerate.fixture=tap0 linerate.after=reboot"`,
		"setenv linerate_fit 0x10000000\ntftpboot ${linerate_fit} linerate-${linerate_board}.itb || exit\nbootm ${linerate_fit}#${linerate_conf}\n",
		"bootm ${linerate_fit}#conf-${linerate_board}\n"} {
		if !strings.Contains(script, want) {
			t.Errorf("the script lacks %q:\n%s", want, script)
		}
	}
}
