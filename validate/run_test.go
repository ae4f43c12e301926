package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// A board without a clock takes the time of day from the station's Date header.
func TestStationTime(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "HEAD" {
			t.Errorf("method %s, want HEAD", r.Method)
		}
	}))
	defer srv.Close()
	got, ok := stationTime(context.Background(), nil, "", srv.URL+"/api/reports")
	if !ok || time.Since(got).Abs() > 5*time.Second {
		t.Fatalf("station time %v %v, want about now", got, ok)
	}
	if _, ok := stationTime(context.Background(), nil, "http://127.0.0.1:1/"); ok {
		t.Fatal("a station that is down gave a time")
	}
}

// TestStampWaitsForClock: a board without a clock stamps its report with the station's
// time once that answers, whoever asks first (the live events' sender, or the report at
// the run's end); nothing before waits on it; both get one id, and the console's line
// on the clock is kept for the run's end.
func TestStampWaitsForClock(t *testing.T) {
	boot := time.Date(1970, 1, 1, 0, 0, 2, 0, time.UTC)
	station := time.Date(2026, 12, 8, 1, 2, 3, 456e6, time.UTC)
	r := &run{Validation: &Validation{Root: t.TempDir()}, clock: make(chan time.Time, 1)}
	rep := &plan.Report{Serial: "SN 7/1", Started: boot}
	ids := make(chan string, 2)
	for range 2 {
		go func() { ids <- r.stamp(rep) }()
	}
	select {
	case id := <-ids:
		t.Fatalf("stamped %q before the station's clock answered", id)
	case <-time.After(100 * time.Millisecond):
	}
	r.clock <- station
	a, b := <-ids, <-ids
	if a != b || !strings.HasPrefix(a, "SN_7_1-20261208T010203.456Z-") || rep.ID != a {
		t.Fatalf("ids %q and %q (report %q), want one, of the station's time", a, b, rep.ID)
	}
	if !rep.Started.Equal(station) || !strings.Contains(r.clockNote, "1970-01-01T00:00:02Z") || !strings.Contains(r.clockNote, "2026-12-08T01:02:03Z") {
		t.Fatalf("started %v, note %q", rep.Started, r.clockNote)
	}
	// A station that never answered (the zero time) leaves the board's clock.
	r = &run{Validation: &Validation{Root: t.TempDir()}, clock: make(chan time.Time, 1)}
	r.clock <- time.Time{}
	rep = &plan.Report{Serial: "b", Started: boot}
	if id := r.stamp(rep); !strings.Contains(id, "19700101T000002.000Z") || r.clockNote != "" {
		t.Fatalf("no station time: id %q, note %q", id, r.clockNote)
	}
}

// A figure that is not a number fails its step with an internal error, and the report
// can still be written: the run always ends in a verdict and a report.
func TestSettleNonFinite(t *testing.T) {
	rep := &plan.Report{Steps: []plan.StepResult{
		{ID: "ok", Pass: true, Measured: map[string]float64{"mbps": 941}},
		{ID: "odd", Pass: true, Measured: map[string]float64{"p99_us": math.NaN(), "loss_pct": math.Inf(1), "mbps": -3}},
	}, Figures: map[string]float64{"odd_p99_us": math.NaN(), "odd_mbps": -3, "ok_mbps": 941}}
	settle(rep)
	if rep.Verdict != "FAIL" || len(rep.Failed) != 1 || rep.Failed[0] != "odd" || !strings.Contains(rep.Steps[1].Reason, "internal error") {
		t.Fatalf("verdict %s, failed %v, reason %q", rep.Verdict, rep.Failed, rep.Steps[1].Reason)
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatalf("the settled report does not encode: %v", err)
	}
	if _, ok := rep.Figures["ok_mbps"]; !ok {
		t.Fatal("a finite figure was dropped")
	}
	if len(rep.Steps[1].Measured) != 0 || len(rep.Figures) != 1 {
		t.Fatalf("numbers outside their ranges kept: %v %v", rep.Steps[1].Measured, rep.Figures)
	}
	rep.Schema, rep.ID, rep.Board, rep.Started = plan.SchemaVersion, "x", "zc702", time.Now()
	if err := rep.CheckNumbers(); err != nil {
		t.Fatalf("the settled report breaks the door's rule: %v", err)
	}
}

// A whole run over a captured tree (no kernel needed): a link step, the verdict line on
// the console, the JSON and JUnit reports in the report directory.
func TestValidationRunOnTree(t *testing.T) {
	root := t.TempDir()
	for f, v := range map[string]string{"carrier": "1", "speed": "100", "duplex": "full", "operstate": "up"} {
		p := filepath.Join(root, "sys/class/net/eth9", f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(v+"\n"), 0o644)
	}
	plan, err := Parse([]byte("board: zc702\ninterface: eth9\nsteps:\n  - id: link\n    type: link\n    speed_mbps: 1000\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var console strings.Builder
	dir := t.TempDir()
	res, err := (&Validation{Plan: plan, Root: root, ReportDir: dir, Serial: "S1", Console: &console, Version: "test"}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Verdict != "FAIL" || !strings.Contains(console.String(), "LINERATE FAIL board=zc702 serial=S1 ") || !strings.Contains(console.String(), "link at 100 Mbit/s, want 1000") {
		t.Fatalf("verdict %s, console:\n%s", res.Report.Verdict, console.String())
	}
	for _, ext := range []string{".json", ".xml"} {
		if _, err := os.Stat(filepath.Join(dir, res.Report.ID+ext)); err != nil {
			t.Errorf("report %s: %v", ext, err)
		}
	}
}

// identityTree is a captured ZCU102 tree: the port's MAC, its device-tree node's
// local-mac-address, the identity EEPROM as an nvmem device (its MAC cell at 0x20, the
// serial at 0) and the kernel command line.
func identityTree(t *testing.T, kernelMAC, dtMAC, eepromMAC, eepromSerial, cmdline string) string {
	t.Helper()
	root := t.TempDir()
	write := func(p string, b []byte) {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mac := func(s string) []byte {
		hw, err := net.ParseMAC(s)
		if err != nil {
			t.Fatal(err)
		}
		return hw
	}
	write("sys/class/net/eth0/address", []byte(kernelMAC+"\n"))
	write("proc/cmdline", []byte(cmdline+"\n"))
	gem := "sys/firmware/devicetree/base/axi/ethernet@ff0e0000"
	write(gem+"/local-mac-address", mac(dtMAC))
	if err := os.Symlink("../../../firmware/devicetree/base/axi/ethernet@ff0e0000", filepath.Join(root, "sys/class/net/eth0/of_node")); err != nil {
		t.Fatal(err)
	}
	node := "sys/firmware/devicetree/base/axi/i2c@ff030000/i2c-mux@74/i2c@0/eeprom@54"
	write(node+"/compatible", []byte("atmel,24c08\x00"))
	cells := bytes.Repeat([]byte{0xff}, 1024)
	copy(cells, eepromSerial)
	copy(cells[0x20:], mac(eepromMAC))
	write("sys/bus/nvmem/devices/1-00540/nvmem", cells)
	if err := os.Symlink("../../../../firmware/devicetree/base/axi/i2c@ff030000/i2c-mux@74/i2c@0/eeprom@54", filepath.Join(root, "sys/bus/nvmem/devices/1-00540/of_node")); err != nil {
		t.Fatal(err)
	}
	return root
}

// The identity step over captured trees: what the kernel cannot hold on a veth (a
// multicast MAC in the device tree, which the kernel refuses and replaces), the device
// tree's and the EEPROM's MACs, and the serial's source in the report.
func TestIdentityOnTree(t *testing.T) {
	const step = "board: zcu102\ninterface: eth0\nsteps:\n  - id: identity\n    type: identity\n    expect_oui: [00:0a:35]\n    serial_pattern: 'ZCU-[0-9]{4}'\n"
	for _, c := range []struct {
		name                                string
		kernel, dt, eeprom, serial, cmdline string
		pass                                bool
		want                                []string
		serialSource, macSource             string
	}{
		{"all agree", "00:0a:35:01:02:03", "00:0a:35:01:02:03", "00:0a:35:01:02:03", "ZCU-0007", "console=ttyPS0", true, nil, "eeprom", "eeprom"},
		{"serial on the command line", "00:0a:35:01:02:03", "00:0a:35:01:02:03", "00:0a:35:01:02:03", "ZCU-0007", "console=ttyPS0 linerate.serial=ZCU-1234", true, nil, "kernel command line", "eeprom"},
		{"multicast in the device tree", "8a:1f:00:3c:4d:5e", "01:00:5e:00:00:01", "00:0a:35:01:02:03", "ZCU-0007", "", false,
			[]string{"locally administered", "the device tree's local-mac-address says 01:00:5e:00:00:01", "the board's EEPROM holds 00:0a:35:01:02:03", "outside the expected OUIs"}, "eeprom", "kernel"},
		{"EEPROM never programmed", "00:0a:35:00:01:22", "00:0a:35:00:01:22", "ff:ff:ff:ff:ff:ff", "", "", false,
			[]string{"is a placeholder", "EEPROM MAC: blank", `serial "`}, "mac", "device tree (local-mac-address)"},
		{"garbage serial", "00:0a:35:01:02:03", "00:0a:35:01:02:03", "00:0a:35:01:02:03", "\x1b[2JZCU", "", false, []string{"does not match"}, "mac", "eeprom"},
	} {
		p, err := Parse([]byte(step), "t.yaml")
		if err != nil {
			t.Fatal(err)
		}
		root := identityTree(t, c.kernel, c.dt, c.eeprom, c.serial, c.cmdline)
		var console strings.Builder
		res, err := (&Validation{Plan: p, Root: root, ReportDir: t.TempDir(), Console: &console, Version: "test"}).Run(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r := res.Report
		if (r.Verdict == "PASS") != c.pass {
			t.Errorf("%s: verdict %s:\n%s", c.name, r.Verdict, console.String())
		}
		for _, w := range c.want {
			if !strings.Contains(console.String(), w) {
				t.Errorf("%s: the console does not say %q:\n%s", c.name, w, console.String())
			}
		}
		if r.SerialSource != c.serialSource || r.MACSource != c.macSource || r.MAC != c.kernel {
			t.Errorf("%s: serial %q from %q, MAC %s from %q; want from %q and %q", c.name, r.Serial, r.SerialSource, r.MAC, r.MACSource, c.serialSource, c.macSource)
		}
		if strings.ContainsRune(console.String(), 0x1b) {
			t.Errorf("%s: an escape sequence reached the console", c.name)
		}
	}
}
