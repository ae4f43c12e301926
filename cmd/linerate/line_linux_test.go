package main

import (
	"context"
	"encoding/json"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
)

// TestLineInNamespaces: boards validated in a namespace against linerate station in
// another, as processes, as on a line: one MAC under two serials flagged, a serial
// tested twice an attempt 2 with its history, three serials failing one step on the
// station's port a fixture alarm that a PASS clears, a board killed mid-step listed in
// test and then lost, the page rendered in Chromium with the banner and the live row,
// and under --mac-policy reject a duplicate MAC failing the board's run by name.
func TestLineInNamespaces(t *testing.T) {
	b, st := boardPair(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "station")
	station := func(policy string) (*exec.Cmd, func(string) string) {
		cmd, _, errOut := linerateIn(t, st, "station", "--listen", "198.18.61.1:8080", "--data", data, "--iperf3", "off", "--mac-policy", policy, "--duration", "300s")
		waitListen(st, "8080")
		get := func(path string) string {
			resp, err := nsClient(st).Get("http://198.18.61.1:8080" + path)
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			return string(out)
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("station log:\n%s", errOut)
			}
		})
		return cmd, get
	}
	stop := func(cmd *exec.Cmd) {
		cmd.Process.Signal(os.Interrupt)
		waitOrKill(cmd, 20*time.Second)
	}
	plan := func(name, steps string) string {
		return writePlan(t, "name: "+name+"\nboard: zc702\ninterface: eth0\nbudget: 1m\nstation:\n  report_url: http://198.18.61.1:8080/api/reports\nsteps:\n"+steps)
	}
	pass := plan("pass", "  - {id: link, type: link, carrier_within: 5s}\n")
	fail := plan("fail", "  - {id: link, type: link, carrier_within: 5s, speed_mbps: 100}\n") // a veth runs at 10000
	reports := filepath.Join(dir, "reports")
	validate := func(planFile, serial string) (string, int) {
		return runIn(t, b, time.Minute, "validate", planFile, "--serial", serial, "--report-dir", reports, "--upload-window", "5s")
	}
	idOf := func(out string) string {
		m := regexp.MustCompile(`report (\S+) delivered`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no delivery:\n%s", out)
		}
		return m[1]
	}
	type served struct {
		Attempt      int
		Fixture      string
		DuplicateMAC []struct{ Serial string } `json:"duplicate_mac"`
		StationPort  *struct{ Name string }    `json:"station_port"`
	}
	report := func(get func(string) string, id string) served {
		var s served
		if err := json.Unmarshal([]byte(get("/api/reports/"+id)), &s); err != nil {
			t.Fatalf("report %s: %v", id, err)
		}
		return s
	}

	srv, get := station("flag")
	out, code := validate(pass, "S1")
	s1 := idOf(out)
	if code != 0 {
		t.Fatalf("S1: exit %d\n%s", code, out)
	}
	if r := report(get, s1); r.Attempt != 1 || len(r.DuplicateMAC) != 0 || r.Fixture != "st0" || r.StationPort == nil || r.StationPort.Name != "st0" {
		t.Errorf("S1 as served: %+v", r)
	}
	// One board MAC (this namespace's eth0) under a second serial.
	out, _ = validate(pass, "S2")
	if r := report(get, idOf(out)); len(r.DuplicateMAC) != 1 || r.DuplicateMAC[0].Serial != "S1" {
		t.Errorf("S2 with S1's MAC: %+v", r)
	}
	// S1 again: a retest, with its history on its page.
	out, _ = validate(pass, "S1")
	s1b := idOf(out)
	if r := report(get, s1b); r.Attempt != 2 {
		t.Errorf("S1's retest: %+v", r)
	}
	if page := get("/reports/" + s1b); !strings.Contains(page, "This board's tests") || !strings.Contains(page, `<a href="/reports/`+s1+`">report</a>`) {
		t.Errorf("S1's history not on its page")
	}
	// Three boards fail the link on the station's port st0: the fixture is suspect.
	for _, s := range []string{"F1", "F2", "F3"} {
		if out, code := validate(fail, s); code != 1 || !strings.Contains(out, "failed=link") {
			t.Fatalf("%s: exit %d\n%s", s, code, out)
		}
	}
	var alarms []struct{ Fixture, Step string }
	if json.Unmarshal([]byte(get("/api/alarms")), &alarms); len(alarms) != 1 || alarms[0].Fixture != "st0" || alarms[0].Step != "link" {
		t.Fatalf("alarms: %s", get("/api/alarms"))
	}
	// A board killed mid-step: in test while it runs, lost once its budget has passed.
	killed := writePlan(t, "name: killed\nboard: zc702\ninterface: eth0\nbudget: 5s\nstation:\n  report_url: http://198.18.61.1:8080/api/reports\nsteps:\n  - {id: link, type: link}\n  - {id: stable, type: stability, duration: 30s, traffic: none}\n")
	k, _, _ := linerateIn(t, b, "validate", killed, "--serial", "K1", "--report-dir", reports)
	var live []struct{ Serial, Step, State string }
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		json.Unmarshal([]byte(get("/api/live")), &live)
		if len(live) == 1 && live[0].Step == "stable" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(live) != 1 || live[0].Serial != "K1" || live[0].State != "testing" {
		t.Fatalf("the board in test: %s", get("/api/live"))
	}
	shot := chromiumShot(t, st, "http://198.18.61.1:8080/")
	k.Process.Signal(syscall.SIGKILL)
	k.Wait()
	if shot != nil {
		checkShot(t, shot)
	}
	time.Sleep(5*time.Second + 15*time.Second + time.Second) // its budget and the station's grace
	if json.Unmarshal([]byte(get("/api/live")), &live); len(live) != 1 || live[0].State != "lost" {
		t.Errorf("the killed board: %s", get("/api/live"))
	}
	// A PASS on the fixture clears the alarm.
	validate(pass, "P1")
	if body := get("/api/alarms"); strings.TrimSpace(body) != "[]" {
		t.Errorf("alarms after a PASS on st0: %s", body)
	}
	stop(srv)

	// Under --mac-policy reject a second serial with a MAC seen fails its run by name.
	srv, _ = station("reject")
	defer stop(srv)
	out, code = validate(pass, "S9")
	if code != 1 || !regexp.MustCompile(`(?m)^LINERATE FAIL board=zc702 serial=S9 .*failed=duplicate-mac `).MatchString(out) ||
		!strings.Contains(out, "the station refused report S9-") || !strings.Contains(out, "duplicate MAC") || !strings.Contains(out, "already reported by zc702 S1") {
		t.Errorf("S9 under reject: exit %d\n%s", code, out)
	}
}

// nsClient is an HTTP client whose connections are made in ns (a socket keeps the
// namespace of the thread that made it).
func nsClient(ns *nstest.NS) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var c net.Conn
			err := ns.Run(func() (err error) {
				c, err = (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
				return err
			})
			return c, err
		}}}
}

// chromiumShot renders url in headless Chromium in ns (the station's namespace) and
// returns the PNG (nil when Chromium is not installed and this is no CI).
func chromiumShot(t *testing.T, ns *nstest.NS, url string) []byte {
	t.Helper()
	if _, err := exec.LookPath("chromium"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed: make test installs it")
		}
		t.Log("no chromium: no screenshot")
		return nil
	}
	out := filepath.Join(t.TempDir(), "line.png")
	cmd := exec.Command("ip", "netns", "exec", ns.Name, "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--window-size=1280,900", "--virtual-time-budget=3000", "--screenshot="+out, url)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join("..", "..", "out"), 0o755)
	os.WriteFile(filepath.Join("..", "..", "out", "station-line.png"), b, 0o644)
	return b
}

// checkShot: the alarm (its tile and its banner, red, in the page's top 300 rows, under
// the tiles) and the live row's badge (blue) below the tiles, within the top 600 rows.
func checkShot(t *testing.T, b []byte) {
	img, err := png.Decode(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	red, blue := 0, 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Min.Y+600 && y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			switch {
			case y < bd.Min.Y+300 && r>>8 > 0xb0 && g>>8 < 0x50 && bl>>8 < 0x50:
				red++
			case y >= bd.Min.Y+150 && r>>8 < 0x30 && g>>8 > 0x50 && g>>8 < 0x70 && bl>>8 > 0xa0:
				blue++
			}
		}
	}
	if red < 2000 || blue < 100 {
		t.Errorf("screenshot (out/station-line.png): %d red pixels in the top 300 rows (the alarm's tile and banner), %d blue in rows 150-600 (the live row's badge)", red, blue)
	}
}
