package station

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/doctor"
	"github.com/zynqnet/linerate/plan"
)

func TestYieldsAndPareto(t *testing.T) {
	day := time.Date(2026, 11, 30, 10, 0, 0, 0, time.Local)
	n := 0
	s := func(board, serial, verdict string, at time.Time, failed ...string) *record {
		n++
		return &record{Summary: Summary{ID: fmt.Sprint(n), Board: board, Serial: serial, Verdict: verdict, Received: at, Failed: failed}}
	}
	x := newIndex(newAlarms(3, nil))
	for _, r := range []*record{
		s("zc702", "A", "FAIL", day, "tcp-up", "frames"),
		s("zc702", "A", "PASS", day.Add(time.Hour)), // a retest: A failed its first test, passed in the end
		func() *record {
			r := s("zc702", "B", "PASS", day.Add(2*time.Hour))
			r.Marginal = []string{"tcp-up_mbps"}
			return r
		}(), // passed in a band
		s("zc702", "E", "FAIL", day.Add(2*time.Hour), "frames"),
		s("zc702", "C", "FAIL", day.Add(25*time.Hour), "tcp-up"),
		s("zcu102", "D", "PASS", day.Add(3*time.Hour)),
	} {
		x.add(r)
	}
	list := filterRows(x.rows, map[string]string{})
	got := yields(list)
	want := []Yield{{"zc702", "2026-12-01", 1, 0, 0, 0, 0, 0}, {"zc702", "2026-11-30", 3, 1, 100.0 / 3, 1, 2, 200.0 / 3}, {"zcu102", "2026-11-30", 1, 1, 100, 0, 1, 100}}
	if len(got) != len(want) {
		t.Fatalf("yield %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("yield %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	p := pareto(list)
	if len(p) != 2 || p[0].Step != "frames" || p[0].Count != 2 || p[1].Step != "tcp-up" || p[1].CumulativePct != 100 || p[0].CumulativePct != 50 {
		t.Errorf("pareto %+v", p)
	}
}

// dashboardStation is a station with reports of two boards, one failed with doctor
// findings and a sweep.
func dashboardStation(t *testing.T) string {
	t.Helper()
	_, hs := newServer(t, t.TempDir())
	t.Cleanup(hs.Close)
	for _, b := range [][]byte{report("d1", "zc702", "PASS", 941), report("d3", "zcu102", "PASS", 938)} {
		if code, msg := post(t, hs.URL, b); code != 201 {
			t.Fatal(code, msg)
		}
	}
	var r plan.Report
	json.Unmarshal(report("d2", "zc702", "FAIL", 412), &r)
	res := curve.Result{Iface: "eth0", Knob: "rings.rx", Restored: true, Columns: []curve.Column{{Key: "tcp_mbps", Unit: "Mbit/s"}},
		Points: []curve.Point{{Value: "64", Median: map[string]float64{"tcp_mbps": 2}}, {Value: "512", Median: map[string]float64{"tcp_mbps": 900}}}}
	d, _ := json.Marshal(res)
	r.Steps = append(r.Steps, plan.StepResult{ID: "rings", Type: "sweep", Pass: true, Summary: "rings.rx over 2 values", Detail: d})
	r.Steps[1].Reason = "412.0 Mbit/s is below 930"
	r.Seconds, r.WindowS, r.Steps[1].WindowS, r.Steps[1].SetupS = 20, 14.5, 9.75, 0.5
	r.Steps[1].LinkEvents = []string{"12:00:01.250 eth0 <b>rx_crc_errors</b> +3"}
	doc := doctor.Report{Interfaces: []doctor.Interface{{Name: "eth0", Findings: []doctor.Finding{{ID: "RX_RING_SMALL", Severity: doctor.Warn, Why: "the RX ring holds 64 frames", Fix: "linerate tune eth0 --profile zc702"}}}}}
	r.Doctor, _ = json.Marshal(doc)
	b, _ := json.Marshal(r)
	if code, msg := post(t, hs.URL, b); code != 201 {
		t.Fatal(code, msg)
	}
	return hs.URL
}

func TestReportPageAndCSV(t *testing.T) {
	base := dashboardStation(t)
	code, page := get(t, base+"/reports/d2")
	for _, want := range []string{"zc702 SN-d2", `<span class="FAIL">FAIL</span>`, "412.0 Mbit/s is below 930", "Sweep rings", "sweep of rings.rx on eth0", "RX_RING_SMALL", "linerate tune eth0 --profile zc702", "posted from 127.0.0.1:",
		"20.0 s (measuring 14.5 s, overhead 5.5 s)", "window 9.8&nbsp;s", "12:00:01.250 eth0 &lt;b&gt;rx_crc_errors&lt;/b&gt; &#43;3"} {
		if code != 200 || !strings.Contains(page, want) {
			t.Errorf("report page lacks %q (%d)", want, code)
		}
	}
	if code, _ := get(t, base+"/reports/nope"); code != 404 {
		t.Errorf("an unknown report's page: %d", code)
	}
	code, c := get(t, base+"/api/reports.csv?board=zc702")
	rows, err := csv.NewReader(strings.NewReader(c)).ReadAll()
	if code != 200 || err != nil || len(rows) != 3 || rows[0][1] != "id" || rows[1][1] != "d1" || rows[2][5] != "FAIL" || rows[2][6] != "tcp-up" {
		t.Errorf("CSV %d %v:\n%s", code, err, c)
	}
	tomorrow := time.Now().Add(24 * time.Hour).Format("2006-01-02")
	if _, c := get(t, base+"/api/reports.csv?from="+tomorrow); strings.Count(c, "\n") != 1 {
		t.Errorf("from tomorrow: %s", c)
	}
}

// TestDashboardInChromium renders the page and a report's page in headless Chromium;
// the screenshots are the test's artifacts (out/station-*.png).
func TestDashboardInChromium(t *testing.T) {
	needChromium(t)
	base := dashboardStation(t)
	for name, path := range map[string]string{"page": "/", "report": "/reports/d2"} {
		shot := filepath.Join("..", "out", "station-"+name+".png")
		img := chromiumShot(t, base+path, "1280,1000", shot)
		// The FAIL badge and the failing step's bar are red (#c62828): the page rendered.
		red := 0
		for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 2 {
			for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 2 {
				r, g, b, _ := img.At(x, y).RGBA()
				if r>>8 > 0xb0 && g>>8 < 0x50 && b>>8 < 0x50 {
					red++
				}
			}
		}
		if red < 20 {
			t.Errorf("%s: %d red pixels sampled: the page did not render its FAIL", shot, red)
		}
		t.Logf("%s: %s", path, shot)
	}
}

// needChromium skips a test where headless Chromium is missing (fails it in CI, where
// make test installs it).
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("chromium"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed: make test installs it")
		}
		t.Skip("no chromium")
	}
}

// chromiumShot renders url in headless Chromium at size ("1280,1000"), writes the
// screenshot of the viewport to shot and gives it decoded.
func chromiumShot(t *testing.T, url, size, shot string) image.Image {
	t.Helper()
	os.MkdirAll(filepath.Dir(shot), 0o755)
	cmd := exec.Command("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--window-size="+size, "--screenshot="+shot, url)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, b)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", shot, err)
	}
	return img
}

// A multi-port report's page shows each port's own doctor findings, named by port.
func TestReportPagePortsDoctor(t *testing.T) {
	_, hs := newServer(t, t.TempDir())
	defer hs.Close()
	var r plan.Report
	json.Unmarshal(report("p2", "zc702", "PASS", 941), &r)
	for _, iface := range []string{"eth0", "eth1"} {
		doc, _ := json.Marshal(doctor.Report{Interfaces: []doctor.Interface{{Name: iface, Findings: []doctor.Finding{{ID: "FINDING_" + iface, Severity: doctor.Warn, Why: "why " + iface, Fix: "fix " + iface}}}}})
		r.Ports = append(r.Ports, plan.PortReport{Interface: iface, MAC: "02:00:00:00:00:0" + iface[3:], Verdict: "PASS", Failed: []string{}, Doctor: doc})
	}
	b, _ := json.Marshal(r)
	if code, msg := post(t, hs.URL, b); code != 201 {
		t.Fatal(code, msg)
	}
	_, page := get(t, hs.URL+"/reports/p2")
	for _, want := range []string{"<td>eth0</td><td><span class=\"warn\">warn</span></td><td>FINDING_eth0</td>", "<td>eth1</td><td><span class=\"warn\">warn</span></td><td>FINDING_eth1</td>", "fix eth1"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
