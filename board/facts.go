package board

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Facts are what building and booting a board's tester image needs, from its SoC: the
// Go target of its binary, the QEMU machine that emulates it, its console and U-Boot's
// name for its architecture. Scripts read them from 'linerate board NAME --env'.
type Facts struct {
	Board       string `json:"board"`
	SoC         string `json:"soc"`
	GOARCH      string `json:"goarch"`
	GOARM       string `json:"goarm,omitempty"`
	QEMU        string `json:"qemu"`
	QEMUMachine string `json:"qemu_machine"`
	Console     string `json:"console"`
	UBootArch   string `json:"uboot_arch"`
	GEM         string `json:"gem"`
	// Compatible are the board's device-tree compatibles, space-separated (the FIT image
	// carries them for a station's boot script).
	Compatible string `json:"compatible"`
}

// socFacts are the facts each SoC family shares. Both consoles are the PS UART driver's
// ttyPS0 (on the ZC702 the second UART, QEMU's second serial port).
var socFacts = map[string]Facts{
	"zynq-7000": {GOARCH: "arm", GOARM: "7", QEMU: "qemu-system-arm", QEMUMachine: "xilinx-zynq-a9", Console: "ttyPS0", UBootArch: "arm"},
	"zynqmp":    {GOARCH: "arm64", QEMU: "qemu-system-aarch64", QEMUMachine: "xlnx-zcu102", Console: "ttyPS0", UBootArch: "arm64"},
}

// Facts returns the board's facts; an error for a SoC with no image recipe.
func (b *Board) Facts() (Facts, error) {
	f, ok := socFacts[b.SoC]
	if !ok {
		return Facts{}, fmt.Errorf("board %s: SoC %q has no image recipe (known: zynq-7000, zynqmp)", b.Name, b.SoC)
	}
	f.Board, f.SoC, f.GEM, f.Compatible = b.Name, b.SoC, b.GEM.Label, strings.Join(b.Compatible, " ")
	return f, nil
}

// WriteEnv writes the facts as shell assignments (LINERATE_SOC='zynq-7000', ...), for
// scripts to eval.
func (f Facts) WriteEnv(w io.Writer) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "LINERATE_%s='%s'\n", strings.ToUpper(k), strings.ReplaceAll(m[k], "'", `'\''`))
	}
	return nil
}

// WriteTable writes the known boards, one line each, for a person.
func WriteTable(w io.Writer) {
	fmt.Fprintf(w, "%-18s %-10s %-6s %-8s %s\n", "board", "soc", "gem", "max mtu", "model")
	for _, b := range All() {
		fmt.Fprintf(w, "%-18s %-10s %-6s %-8d %s\n", b.Name, b.SoC, b.GEM.Label, b.MaxMTU, b.Model)
	}
}
