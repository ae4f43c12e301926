package initramfs_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSDCard: make sdcard's image for the ZC702, checked as the BootROM and U-Boot
// would read it (QEMU cannot boot a Zynq from SD: it has no BootROM): an MBR with one
// bootable FAT32 partition from 1 MiB; on it BOOT.BIN with the BootROM's header (width
// word, "XNLX", a header checksum that adds up), U-Boot's FIT u-boot.img, the SD boot
// script (netboot first, else the card's image) as a legacy script image, and the
// tester image, each file the same bytes as what it was made from.
func TestSDCard(t *testing.T) {
	need(t)
	for _, tool := range []string{"sfdisk", "mkfs.vfat", "mcopy"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed: make test installs it", tool)
			}
			t.Skipf("no %s", tool)
		}
	}
	script(t, 30*time.Minute, "build-image", "zc702")
	out := script(t, 40*time.Minute, "build-sdcard", "zc702", "qemu-zc702")
	t.Log(strings.TrimSpace(out))
	lines := strings.Split(strings.TrimSpace(script(t, 40*time.Minute, "build-uboot", "zc702")), "\n")
	uboot := lines[len(lines)-1]
	img := filepath.Join(repoRoot(t), "out", "linerate-zc702-sd.img")

	js, err := exec.Command("sfdisk", "--json", img).Output()
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		PartitionTable struct {
			Label      string
			Partitions []struct {
				Start, Size int
				Type        string
				Bootable    bool
			}
		}
	}
	json.Unmarshal(js, &table)
	pt := table.PartitionTable
	if pt.Label != "dos" || len(pt.Partitions) != 1 || pt.Partitions[0].Start != 2048 || pt.Partitions[0].Type != "c" || !pt.Partitions[0].Bootable {
		t.Fatalf("partition table: %s", js)
	}
	dir := t.TempDir()
	for _, f := range []string{"BOOT.BIN", "u-boot.img", "boot.scr", "linerate-zc702.itb"} {
		cmd := exec.Command("mcopy", "-n", "-i", img+"@@1M", "::"+f, filepath.Join(dir, f))
		cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mcopy %s: %v\n%s", f, err, b)
		}
	}
	same := func(got, want string) {
		a, _ := os.ReadFile(got)
		b, err := os.ReadFile(want)
		if err != nil || sha256.Sum256(a) != sha256.Sum256(b) {
			t.Errorf("%s on the card is not %s (%v)", filepath.Base(got), want, err)
		}
	}
	same(filepath.Join(dir, "BOOT.BIN"), filepath.Join(uboot, "boot.bin"))
	same(filepath.Join(dir, "u-boot.img"), filepath.Join(uboot, "u-boot.img"))
	same(filepath.Join(dir, "linerate-zc702.itb"), filepath.Join(repoRoot(t), "out", "linerate-zc702.itb"))

	// The BootROM's header (Zynq-7000 TRM, UG585 6.3.2): the width detection word at
	// 0x20, "XNLX" at 0x24, and at 0x48 the complement of the sum of the words 0x20-0x44.
	boot, _ := os.ReadFile(filepath.Join(dir, "BOOT.BIN"))
	if len(boot) < 0x4c || binary.LittleEndian.Uint32(boot[0x20:]) != 0xaa995566 || !bytes.Equal(boot[0x24:0x28], []byte("XNLX")) {
		t.Fatalf("BOOT.BIN has no BootROM header: % x", boot[:min(len(boot), 0x50)])
	}
	var sum uint32
	for o := 0x20; o < 0x48; o += 4 {
		sum += binary.LittleEndian.Uint32(boot[o:])
	}
	if ^sum != binary.LittleEndian.Uint32(boot[0x48:]) {
		t.Errorf("BOOT.BIN's header checksum %#x, want %#x", binary.LittleEndian.Uint32(boot[0x48:]), ^sum)
	}
	for f, want := range map[string][]string{
		"boot.scr":           {"linerate boot script", "ARM Linux Script (uncompressed)"},
		"u-boot.img":         {"U-Boot 2023.01 for zynq board"},
		"linerate-zc702.itb": {"conf-zc702-zc702", "Hash algo:    sha256"},
	} {
		l, err := exec.Command("mkimage", "-l", filepath.Join(dir, f)).CombinedOutput()
		for _, w := range want {
			if err != nil || !strings.Contains(string(l), w) {
				t.Errorf("mkimage -l %s lacks %q: %v\n%s", f, w, err, l)
			}
		}
	}
	scr, _ := os.ReadFile(filepath.Join(dir, "boot.scr"))
	for _, w := range []string{"if dhcp ${scriptaddr} boot.scr.uimg; then source ${scriptaddr}; fi", "load mmc 0:1 ${linerate_fit} linerate-${linerate_board}.itb || exit", "linerate.plan=qemu-zc702"} {
		if !bytes.Contains(scr, []byte(w)) {
			t.Errorf("the card's boot script lacks %q", w)
		}
	}
}
