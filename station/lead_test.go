package station

import (
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// leadStation is a line's morning: Line 3 at a target of 50 tests an hour; fixture fx-a
// fails three boards in a row on tcp-up (its alarm), two boards share a MAC, a board
// fails until it is for repair (--max-attempts 2), one board is in test, one passes
// with a long serial.
func leadStation(t *testing.T) string {
	st, err := OpenBolt(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := NewServer(st, log.New(io.Discard, "", 0), Options{Line: "Line 3", Target: 50, MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	for _, r := range []struct{ id, serial, mac, fixture, verdict string }{
		{"l-a", "A", "00:0a:35:00:10:01", "fx-a", "PASS"}, {"l-b", "B", "00:0a:35:00:10:02", "fx-a", "FAIL"},
		{"l-c", "C", "00:0a:35:00:10:03", "fx-a", "FAIL"}, {"l-d", "D", "00:0a:35:00:10:04", "fx-a", "FAIL"},
		{"l-e", "E", "00:0a:35:00:10:05", "fx-b", "PASS"}, {"l-f", "F", "00:0a:35:00:10:05", "fx-b", "PASS"},
		{"l-g1", "G", "00:0a:35:00:10:07", "fx-b", "FAIL"}, {"l-g2", "G", "00:0a:35:00:10:07", "fx-c", "FAIL"}, {"l-g3", "G", "00:0a:35:00:10:07", "fx-c", "FAIL"},
		{"l-h", "SERIAL-WITH-A-VERY-LONG-NAME-0123456789", "00:0a:35:00:10:08", "fx-c", "PASS"},
	} {
		if code, msg := post(t, hs.URL, boardReport(r.id, r.serial, r.mac, r.fixture, r.verdict, "tcp-up")); code != 201 {
			t.Fatalf("post %s: %d %s", r.id, code, msg)
		}
	}
	e := plan.LiveEvent{ID: "l-live", Board: "zc702", Serial: "K", MAC: "00:0a:35:00:10:09", Fixture: "fx-b", Plan: "zc702", Budget: 600, Event: "step", Step: "tcp-up", Index: 3, Steps: 9}
	b, _ := json.Marshal(e)
	if code, _ := do(t, "POST", hs.URL+"/api/live", map[string]string{"Content-Type": "application/json"}, string(b)); code != 204 {
		t.Fatalf("live: %d", code)
	}
	return hs.URL
}

// TestLeadPage: the line's name, today's tiles (first-pass and final yield 4 of 8, tests
// an hour below the target, a board in test, the open alarm), the banners (the duplicate
// MAC, the board for repair), the yield per fixture worst first, the hour chart's y-axis
// and target line, key figures as name and value, a long serial cut with the whole on
// hover, and the page refreshing itself at its own URL.
func TestLeadPage(t *testing.T) {
	base := leadStation(t)
	_, page := get(t, base+"/")
	for _, want := range []string{
		`<h1>Line 3 &middot; linerate station</h1>`, `<meta http-equiv="refresh" content="60">`,
		"<div class=\"l\">first-pass yield today</div><div class=\"v\">50.0\u00a0%</div><div class=\"s\">4 of 8 boards</div>",
		`<div class="tile low"><div class="l">tests an hour</div>`, `target 50`,
		`<div class="l">boards in test</div><div class="v">1</div>`,
		`<div class="tile red"><div class="l">open alarms</div><div class="v">1</div>`,
		`<b>1 board(s) with a duplicate MAC today</b>: F`, `<b>1 board(s) at the retest limit without a pass: for repair</b>: G`,
		`<td class="serial" title="SERIAL-WITH-A-VERY-LONG-NAME-0123456789">`,
		"<span class=\"k\">tcp-up</span><span class=\"v\">900\u00a0Mbit/s</span>",
		`stroke-dasharray="4 3"><title>target 50 an hour</title>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// The yield per fixture, worst first, in the page and in full at /api/tables.
	if i, j := strings.Index(page, "<tr><td>fx-a</td><td class=\"n\">4</td><td class=\"n\">1</td>"), strings.Index(page, "<tr><td>fx-b</td>"); i < 0 || j < 0 || i > j {
		t.Errorf("the yield per fixture is not fx-a (1 of 4) before fx-b")
	}
	var fy []FixtureYield
	_, body := get(t, base+"/api/tables/fixture-yield")
	if json.Unmarshal([]byte(body), &fy); len(fy) != 3 || fy[0].Fixture != "fx-a" || fy[0].Tested != 4 || fy[0].Passed != 1 {
		t.Errorf("/api/tables/fixture-yield: %s", body)
	}
	if !strings.Contains(page, `(<a href="/?duplicate=1&amp;from=`) {
		t.Errorf("the banner does not link to the reports")
	}
}

// TestChartBreaksAtGaps: a line's points more than an hour apart are not joined.
func TestChartBreaksAtGaps(t *testing.T) {
	t0 := time.Now().Add(-24 * time.Hour)
	var rows []*row
	for _, at := range []time.Duration{0, 10 * time.Minute, 20 * time.Minute, 10 * time.Hour, 10*time.Hour + 5*time.Minute} {
		rows = append(rows, &row{Board: "zc702", Verdict: "PASS", Received: t0.Add(at), TCPUp: 930, TCPDown: 940})
	}
	svg := string(chart(rows))
	if n := strings.Count(svg, "<polyline"); n != 4 {
		t.Errorf("%d lines for two series with a night between their points, want 4", n)
	}
}

// TestLeadPageInChromium: at 1920x1080 a line lead sees, without scrolling, the tiles,
// the alarm tile, the fixture's alarm and both banners, and the headers of the boards in
// test, the yield per fixture and the yield: each found by its own colour in the
// screenshot of the viewport (out/station-lead-1920x1080.png), and in Chromium's DOM.
func TestLeadPageInChromium(t *testing.T) {
	needChromium(t)
	base := leadStation(t)
	shot := filepath.Join("..", "out", "station-lead-1920x1080.png")
	img := chromiumShot(t, base+"/", "1920,1080", shot)
	if img.Bounds().Dy() != 1080 {
		t.Fatalf("screenshot %v, want the 1080-pixel viewport", img.Bounds())
	}
	colours := map[string][3]uint32{"tiles": {0xe8, 0xea, 0xf6}, "alarms (tile, fixture, banners)": {0xc6, 0x28, 0x28}, "tile below target": {0xef, 0x6c, 0x00},
		"boards in test": {0xe0, 0xf7, 0xfa}, "yield per fixture": {0xff, 0xf3, 0xe0}, "yield": {0xf1, 0xf8, 0xe9}}
	found := map[string]int{}
	for y := 0; y < img.Bounds().Dy(); y += 2 {
		for x := 0; x < img.Bounds().Dx(); x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			for name, c := range colours {
				if r>>8 == c[0] && g>>8 == c[1] && b>>8 == c[2] {
					found[name]++
				}
			}
		}
	}
	for name := range colours {
		if found[name] < 20 {
			t.Errorf("%s: %d pixels of its colour above the fold", name, found[name])
		}
	}
	if found["alarms (tile, fixture, banners)"] < 3000 {
		t.Errorf("%d red pixels: the alarm tile, the fixture's alarm and two banners should all be above the fold", found["alarms (tile, fixture, banners)"])
	}
	dom, err := exec.Command("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--dump-dom", base+"/").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"first-pass yield today", "Yield per fixture", "fixture fx-a suspect", "for repair"} {
		if !strings.Contains(string(dom), want) {
			t.Errorf("Chromium's DOM lacks %q", want)
		}
	}
	t.Logf("%s: %v", shot, found)
}

// TestLeadFlags: --line and --target are read, and bad values refused naming the flag.
func TestLeadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--line", "Line 3", "--target", "42.5"}, ""},
		{[]string{"--target", "-1"}, "--target -1"},
		{[]string{"--target", "NaN"}, "--target NaN"},
		{[]string{"--line", "a\nb"}, "--line"},
	} {
		fs := flag.NewFlagSet("station", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var o Options
		check := PolicyFlags(fs, &o)
		err := fs.Parse(c.args)
		if err == nil {
			err = check()
		}
		switch {
		case c.want == "" && (err != nil || o.Line != "Line 3" || o.Target != 42.5):
			t.Errorf("%v: %v %+v", c.args, err, o)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
