package board

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/zynqnet/linerate/internal/readall"
)

// Tester is what the tester image's kernel command line says of this board's setup
// (linerate.iface=, linerate.peer=, linerate.station=, linerate.plan=), for the
// operator's short list at the console; the zero Tester off a tester image.
type Tester struct {
	Iface, Peer, Station, Plan string
}

// ReadTester reads root's /proc/cmdline. Values are taken as written: the uinit checks
// them at boot and says what is wrong.
func ReadTester(root string) Tester {
	b, _ := readall.File(filepath.Join(root, "proc/cmdline"), readall.MaxSys)
	var t Tester
	for _, w := range strings.Fields(string(b)) {
		k, v, _ := strings.Cut(w, "=")
		switch k {
		case "linerate.iface":
			t.Iface = v
		case "linerate.peer":
			t.Peer = v
		case "linerate.station":
			t.Station = v
		case "linerate.plan":
			t.Plan = v
		}
	}
	return t
}

// OnTester reports whether the command line is a tester image's.
func (t Tester) OnTester() bool { return t.Peer != "" || t.Station != "" || t.Plan != "" }

// WriteOperatorList is linerate's short list at a tester image's console: what an
// operator runs on this board, with its port, profile, station and plan filled in.
func (t Tester) WriteOperatorList(w io.Writer, profile string) {
	iface := t.Iface
	if iface == "" {
		iface = "eth0"
	}
	fmt.Fprintf(w, "linerate on this board: what an operator runs (linerate --help lists all)\n\n")
	rows := [][2]string{
		{"linerate show " + iface, "everything that decides the port's throughput"},
		{"linerate doctor " + iface, "what holds it back, with the fix"},
		{"linerate tune " + iface + " --profile " + profile, "the board's profile, as one transaction"},
		{"linerate revert " + iface, "give back what it had before"},
	}
	if t.Peer != "" {
		rows = append(rows, [2]string{"linerate iperf3 -c " + t.Peer + " -t 10", "TCP to the station (-R: from it)"})
	}
	if t.Plan != "" {
		v := "linerate validate " + t.Plan
		if t.Station != "" {
			v += " --station " + t.Station
		}
		rows = append(rows, [2]string{v, "the factory plan: one verdict line"})
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  %s\n      %s\n", r[0], r[1])
	}
	if t.Station != "" {
		fmt.Fprintf(w, "\nstation: %s\n", t.Station)
	}
}

// OperatorList writes, at the tester image's console (root "/" live), what an operator
// runs there, ready to type, with the board's own profile; false off the tester.
func OperatorList(root string, w io.Writer) bool {
	t := ReadTester(root)
	if !t.OnTester() {
		return false
	}
	prof := "throughput"
	if b := Detect(ReadIdentity(root).Compatible); b != nil {
		prof = b.Name
	}
	t.WriteOperatorList(w, prof)
	return true
}
