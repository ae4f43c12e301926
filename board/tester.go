package board

import (
	"os"
	"path/filepath"
	"strings"
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
	b, _ := os.ReadFile(filepath.Join(root, "proc/cmdline"))
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
