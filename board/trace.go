package board

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zynqnet/linerate/internal/readall"
	"github.com/zynqnet/linerate/plan"
)

// What ties a board's report to what it ran: the tester image (its build file), the
// kernel, the boot loader that loaded it, and the programmable logic.

// BuildFile is where a tester image says what it is (make image writes it).
const BuildFile = "etc/linerate/build.json"

// Trace is what the running system says of what it runs.
type Trace struct {
	Build  *plan.Build
	Kernel string // the running kernel's release
	UBoot  string // the U-Boot that loaded it, from the device tree's /chosen ("" none)
	FPGA   *plan.FPGA
	// Note says why the image's build file could not be read ("" when it was, or when
	// there is none: a system that is no tester image).
	Note string
}

// ReadTrace reads the trace under root ("/" live, or a captured tree). Each text is held
// to a line a report takes (plan.OneLine, at most 256 bytes): the files are the board's,
// not to be trusted.
func ReadTrace(root string) Trace {
	t := Trace{Kernel: line(readString(root, "proc/sys/kernel/osrelease")), UBoot: line(readString(root, "proc/device-tree/chosen/u-boot,version"))}
	t.Build, t.Note = readBuild(root)
	t.FPGA = readFPGA(root)
	return t
}

// line is s as a one-word field of a report holds it.
func line(s string) string {
	s = plan.OneLine(strings.TrimSpace(s))
	if len(s) > 256 {
		s = s[:256]
	}
	return s
}

// readBuild reads the image's build file: one JSON object of the build's fields and
// nothing else, at most 64 KiB.
func readBuild(root string) (*plan.Build, string) {
	p := filepath.Join(root, BuildFile)
	b, err := readall.File(p, 64<<10)
	if os.IsNotExist(err) {
		return nil, ""
	}
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", BuildFile, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var bd plan.Build
	if err := dec.Decode(&bd); err != nil || dec.More() {
		return nil, fmt.Sprintf("%s: not a build file: %v", BuildFile, err)
	}
	for _, f := range []*string{&bd.ID, &bd.Linerate, &bd.Board, &bd.ImageSHA256, &bd.Kernel, &bd.KernelConfigSHA256} {
		*f = line(*f)
	}
	if bd.ID == "" {
		return nil, BuildFile + ": no id"
	}
	return &bd, ""
}

// readFPGA reads the first FPGA manager (sys/class/fpga_manager, in name order): its
// name and state, and the bitstream the device tree gives an FPGA region
// (firmware-name of a top-level fpga* node or of one under it).
func readFPGA(root string) *plan.FPGA {
	mgrs, _ := filepath.Glob(filepath.Join(root, "sys/class/fpga_manager/*"))
	if len(mgrs) == 0 {
		return nil
	}
	sort.Strings(mgrs)
	rel := func(p string) string { r, _ := filepath.Rel(root, p); return r }
	f := &plan.FPGA{Manager: line(readString(root, filepath.Join(rel(mgrs[0]), "name"))), State: line(readString(root, filepath.Join(rel(mgrs[0]), "state")))}
	if f.Manager == "" {
		f.Manager = filepath.Base(mgrs[0])
	}
	for _, pat := range []string{"proc/device-tree/fpga*/firmware-name", "proc/device-tree/*/fpga*/firmware-name"} {
		hits, _ := filepath.Glob(filepath.Join(root, pat))
		sort.Strings(hits)
		if len(hits) > 0 {
			f.Firmware = line(readString(root, rel(hits[0])))
			break
		}
	}
	return f
}
