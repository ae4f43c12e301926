package station

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// boardReport is a report of one board: its serial, MAC, fixture, verdict and the step
// that failed.
func boardReport(id, serial, mac, fixture, verdict, failed string) []byte {
	var r plan.Report
	json.Unmarshal(report(id, "zc702", "PASS", 900), &r)
	r.Serial, r.MAC, r.Fixture = serial, mac, fixture
	if verdict == "FAIL" {
		for i := range r.Steps {
			if r.Steps[i].ID == failed {
				r.Steps[i].Pass = false
			}
		}
		r.Verdict, r.Failed = "FAIL", []string{failed}
	}
	b, _ := json.Marshal(r)
	return b
}

// TestLineHistory holds both stores to the line's rules: a serial's attempts, a MAC
// reported by a second serial flagged (with the first's serial and time), refused under
// MACReject and not stored, a re-sent report neither a retest nor a duplicate, and all
// of it as found again after a reopen; on PostgreSQL, across two stations.
func TestLineHistory(t *testing.T) {
	t.Run("bbolt", func(t *testing.T) {
		dir := t.TempDir()
		lineContract(t, func(t *testing.T) Store {
			st, err := OpenBolt(dir)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}, nil)
	})
	t.Run("postgres", func(t *testing.T) {
		conn := startPostgres(t)
		open := func(t *testing.T) Store {
			st, _, err := OpenStore(t.Context(), "", conn)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		lineContract(t, open, open)
	})
}

func lineContract(t *testing.T, open, other func(t *testing.T) Store) {
	st := open(t)
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	put := func(st Store, body []byte, at time.Duration, policy MACPolicy) (Stored, error) {
		return st.Put(decoded(t, body), body, t0.Add(at), Meta{}, Rules{MAC: policy})
	}
	a1 := boardReport("h-a1", "A", "00:0a:35:00:00:01", "f1", "FAIL", "tcp-up")
	if got, err := put(st, a1, 0, MACFlag); err != nil || got.Attempt != 1 || len(got.DuplicateMAC) != 0 {
		t.Fatalf("first report: %+v %v", got, err)
	}
	if got, err := put(st, a1, time.Minute, MACReject); !errors.Is(err, ErrExists) || got.Attempt != 0 {
		t.Errorf("the same report again: %+v %v, want ErrExists and no history", got, err)
	}
	a2 := boardReport("h-a2", "A", "00:0A:35:00:00:01", "f1", "PASS", "")
	if got, err := put(st, a2, time.Hour, MACReject); err != nil || got.Attempt != 2 || len(got.DuplicateMAC) != 0 {
		t.Errorf("A's retest (its own MAC, in capitals): %+v %v", got, err)
	}
	b1 := boardReport("h-b1", "B", "00:0a:35:00:00:01", "f1", "PASS", "")
	var dup *DuplicateMACError
	if _, err := put(st, b1, 2*time.Hour, MACReject); !errors.As(err, &dup) || len(dup.Uses) != 1 || dup.Uses[0].Serial != "A" || !dup.Uses[0].FirstSeen.Equal(t0) || dup.Uses[0].Report != "h-a1" ||
		!strings.Contains(err.Error(), "duplicate MAC 00:0a:35:00:00:01: already reported by zc702 A (first seen 2026-12-01T08:00:00Z, report h-a1)") {
		t.Fatalf("B with A's MAC under reject: %v", err)
	}
	if _, err := st.Get("h-b1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a refused report was stored: %v", err)
	}
	if got, err := put(st, b1, 3*time.Hour, MACFlag); err != nil || got.Attempt != 1 || len(got.DuplicateMAC) != 1 || got.DuplicateMAC[0].Serial != "A" {
		t.Errorf("B with A's MAC, flagged: %+v %v", got, err)
	}
	check := func(st Store, when string) {
		t.Helper()
		recs, err := st.summaries([]string{"h-b1", "h-a2", "nope", "h-a1"})
		if err != nil || len(recs) != 3 || recs[0].ID != "h-b1" || recs[1].ID != "h-a2" || recs[2].ID != "h-a1" {
			t.Fatalf("%s: summaries %+v %v", when, recs, err)
		}
		if recs[0].Attempt != 1 || len(recs[0].DuplicateMAC) != 1 || recs[1].Attempt != 2 || recs[2].Attempt != 1 || recs[0].Fixture != "f1" {
			t.Errorf("%s: stored history %+v", when, recs)
		}
		all, cur, err := st.recordsAfter("")
		if err != nil || len(all) != 3 || all[0].ID != "h-a1" || all[2].ID != "h-b1" {
			t.Fatalf("%s: recordsAfter: %+v %v", when, all, err)
		}
		if more, _, err := st.recordsAfter(cur); err != nil || (len(more) != 0 && other == nil) {
			t.Errorf("%s: after the cursor: %+v %v", when, more, err)
		}
	}
	check(st, "open")
	if err := st.Ack(Ack{Alarm: "fixture-f1-tcp-up-h-a1", By: "lead", At: t0}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st = open(t)
	defer st.Close()
	check(st, "reopened")
	if acks, err := st.Acks(); err != nil || len(acks) != 1 || acks[0].By != "lead" || !acks[0].At.Equal(t0) {
		t.Errorf("acks: %+v %v", acks, err)
	}
	if other == nil {
		return
	}
	// A second station on the same database sees B's MAC, and A's attempts.
	st2 := other(t)
	defer st2.Close()
	c1 := boardReport("h-c1", "C", "00:0a:35:00:00:01", "f2", "PASS", "")
	if got, err := put(st2, c1, 4*time.Hour, MACFlag); err != nil || len(got.DuplicateMAC) != 2 || got.DuplicateMAC[0].Serial != "A" || got.DuplicateMAC[1].Serial != "B" {
		t.Errorf("a second station: %+v %v", got, err)
	}
	a3 := boardReport("h-a3", "A", "00:0a:35:00:00:01", "f2", "PASS", "")
	if got, err := put(st2, a3, 5*time.Hour, MACFlag); err != nil || got.Attempt != 3 {
		t.Errorf("A's third test on the other station: %+v %v", got, err)
	}
}

func TestFixtureAlarm(t *testing.T) {
	a := newAlarms(3, nil)
	t0 := time.Now()
	n := 0
	feed := func(serial, fixture, verdict string, failed ...string) *Alarm {
		n++
		return a.feed(&row{ID: fmt.Sprintf("r%d", n), Serial: serial, Fixture: fixture, Verdict: verdict, Failed: failed, FixtureFailed: failed, Received: t0.Add(time.Duration(n) * time.Minute)})
	}
	// One bad board failing again and again raises nothing.
	for i := 0; i < 5; i++ {
		if al := feed("A", "f1", "FAIL", "frames"); al != nil {
			t.Fatalf("one board's retests raised %+v", al)
		}
	}
	// Two more boards failing frames on f1: three in a row.
	if feed("B", "f1", "FAIL", "frames") != nil {
		t.Fatal("raised at two boards")
	}
	// Another fixture's failure does not break f1's row, nor add to it.
	if feed("X", "f2", "FAIL", "frames") != nil {
		t.Fatal("f2 raised")
	}
	al := feed("C", "f1", "FAIL", "frames", "tcp-up")
	if al == nil || al.Fixture != "f1" || al.Step != "frames" || strings.Join(al.Serials, ",") != "A,B,C" || al.ID != "fixture-f1-frames-r1" ||
		!strings.Contains(al.Text, "fixture f1 suspect: step frames failed on 3 different boards in a row (A, B, C)") {
		t.Fatalf("alarm %+v", al)
	}
	if len(a.list()) != 1 {
		t.Fatalf("alarms %+v", a.list())
	}
	// A PASS on f1 clears it; the row starts over.
	feed("D", "f1", "PASS")
	if len(a.list()) != 0 {
		t.Fatalf("a PASS did not clear: %+v", a.list())
	}
	// A failure of another step breaks the row of frames.
	feed("E", "f1", "FAIL", "frames")
	feed("F", "f1", "FAIL", "tcp-up")
	if feed("G", "f1", "FAIL", "frames") != nil {
		t.Fatal("raised across a report that did not fail frames")
	}
	feed("H", "f1", "FAIL", "frames")
	al = feed("I", "f1", "FAIL", "frames")
	if al == nil {
		t.Fatal("G, H, I failing frames in a row raised nothing")
	}
	// An acknowledgement clears it, and replaying the same reports with the ack raises
	// nothing again.
	if !a.ack(Ack{Alarm: al.ID, By: "lead", At: t0}) || len(a.list()) != 0 {
		t.Fatalf("ack: %+v", a.list())
	}
	if a.ack(Ack{Alarm: "nope"}) {
		t.Error("an unknown alarm acknowledged")
	}
}

// TestStationLine: over HTTP, a duplicate MAC flagged on the report, the list (field
// and filter), the page and the metrics; attempts served; a fixture alarm raised,
// listed, shown, acknowledged with a token and cleared for good; boards in test listed
// and lost after their budget; the station port's counters over a test in the report.
func TestStationLine(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenBolt(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sys := t.TempDir()
	counter := func(name string, v int) {
		p := filepath.Join(sys, "class/net/st0/statistics", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("%d\n", v)), 0o644)
	}
	counter("rx_errors", 5)
	counter("rx_crc_errors", 5)
	counter("tx_dropped", 0)
	srv, err := NewServer(st, log.New(io.Discard, "", 0), Options{Sys: sys})
	if err != nil {
		t.Fatal(err)
	}
	srv.ports.byIP = map[string]string{"127.0.0.1": "st0"} // the test's listener is on loopback: call it st0
	write, err := ParseTokens([]byte("0123456789abcdef0123 line-lead\n"), "tokens")
	if err != nil {
		t.Fatal(err)
	}
	srv.RequireTokens(write, nil)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	send := func(method, path string, body []byte) (int, string) {
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer 0123456789abcdef0123")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	live := func(id, serial string, budget float64, step int) {
		e := plan.LiveEvent{ID: id, Board: "zc702", Serial: serial, MAC: "00:0a:35:00:00:09", Plan: "zc702", Budget: budget, Event: "step", Step: "frames", Index: step, Steps: 9}
		b, _ := json.Marshal(e)
		if code, msg := send("POST", "/api/live", b); code != http.StatusNoContent {
			t.Fatalf("live: %d %s", code, msg)
		}
	}
	// A board in test: listed with its step, and its port's counters from its start.
	live("s-a1", "A", 600, 3)
	counter("rx_errors", 9)
	counter("rx_crc_errors", 7)
	var boards []Live
	_, l := get(t, hs.URL+"/api/live")
	if json.Unmarshal([]byte(l), &boards); len(boards) != 1 || boards[0].State != "testing" || boards[0].Step != "frames" || boards[0].Fixture != "st0" || boards[0].Serial != "A" {
		t.Fatalf("live: %s", l)
	}
	for _, r := range []struct {
		id, serial, mac, verdict string
	}{{"s-a1", "A", "00:0a:35:00:00:09", "FAIL"}, {"s-b1", "B", "00:0a:35:00:00:09", "FAIL"}, {"s-c1", "C", "00:0a:35:00:00:0c", "FAIL"}, {"s-a2", "A", "00:0a:35:00:00:09", "FAIL"}} {
		if code, msg := send("POST", "/api/reports", boardReport(r.id, r.serial, r.mac, "", r.verdict, "tcp-up")); code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", r.id, code, msg)
		}
	}
	_, l = get(t, hs.URL+"/api/live")
	if strings.TrimSpace(l) != "[]" {
		t.Errorf("a board whose report came is still in test: %s", l)
	}
	var served struct {
		Attempt      int
		DuplicateMAC []MACUse `json:"duplicate_mac"`
		Fixture      string
		StationPort  *PortCounters `json:"station_port"`
	}
	_, body := get(t, hs.URL+"/api/reports/s-a1")
	if json.Unmarshal([]byte(body), &served); served.Attempt != 1 || served.Fixture != "st0" || served.StationPort == nil || served.StationPort.Rose["rx_errors"] != 4 || served.StationPort.Rose["rx_crc_errors"] != 2 || len(served.StationPort.Rose) != 2 {
		t.Errorf("s-a1 as served: %+v %+v", served, served.StationPort)
	}
	_, body = get(t, hs.URL+"/api/reports/s-b1")
	if json.Unmarshal([]byte(body), &served); len(served.DuplicateMAC) != 1 || served.DuplicateMAC[0].Serial != "A" {
		t.Errorf("s-b1 not flagged: %s", body[len(body)-300:])
	}
	_, body = get(t, hs.URL+"/api/reports/s-a2")
	if json.Unmarshal([]byte(body), &served); served.Attempt != 2 || len(served.DuplicateMAC) != 1 || served.DuplicateMAC[0].Serial != "B" {
		t.Errorf("s-a2: attempt %d dup %+v", served.Attempt, served.DuplicateMAC)
	}
	var list []Summary
	_, body = get(t, hs.URL+"/api/reports?duplicate=1")
	if json.Unmarshal([]byte(body), &list); len(list) != 2 || list[0].ID != "s-b1" || list[1].ID != "s-a2" {
		t.Errorf("?duplicate=1: %s", body)
	}
	// A, B, C failed tcp-up on st0: the fixture is suspect.
	var alarms []Alarm
	_, body = get(t, hs.URL+"/api/alarms")
	if json.Unmarshal([]byte(body), &alarms); len(alarms) != 1 || alarms[0].Fixture != "st0" || alarms[0].Step != "tcp-up" || strings.Join(alarms[0].Serials, ",") != "A,B,C" {
		t.Fatalf("alarms: %s", body)
	}
	_, page := get(t, hs.URL+"/")
	for _, want := range []string{`<div class="alarm" id="alarm-` + alarms[0].ID, "fixture st0 suspect", `<tr class="dup"`, "(duplicate)", `<option value="st0">`, "Bearer TOKEN"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	_, m := get(t, hs.URL+"/metrics")
	for _, want := range []string{"linerate_alarms 1", `linerate_duplicate_mac_reports_total{board="zc702"} 2`, `linerate_boards_in_test{state="testing"} 0`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// Acknowledged only with a token; then gone, also for a new station on the store.
	if resp, err := http.Post(hs.URL+"/api/alarms/"+alarms[0].ID+"/ack", "text/plain", nil); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an acknowledgement without a token: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	if code, msg := send("POST", "/api/alarms/"+alarms[0].ID+"/ack", nil); code != 200 || !strings.Contains(msg, `"by": "line-lead`) {
		t.Fatalf("ack: %d %s", code, msg)
	}
	if code, _ := send("POST", "/api/alarms/nope/ack", nil); code != 404 {
		t.Errorf("ack of no alarm: %d", code)
	}
	if _, body := get(t, hs.URL+"/api/alarms"); strings.TrimSpace(body) != "[]" {
		t.Errorf("after the ack: %s", body)
	}
	srv2, err := NewServer(st, log.New(io.Discard, "", 0), Options{Sys: sys})
	if err != nil {
		t.Fatal(err)
	}
	if l := srv2.idx.alarms.list(); len(l) != 0 {
		t.Errorf("a restarted station raised the acknowledged alarm again: %+v", l)
	}
	// A board that started and never reported is lost once its budget has passed.
	old := lostGrace
	lostGrace = 0
	defer func() { lostGrace = old }()
	live("s-d1", "D", 0.2, 5)
	time.Sleep(300 * time.Millisecond)
	_, l = get(t, hs.URL+"/api/live")
	if json.Unmarshal([]byte(l), &boards); len(boards) != 1 || boards[0].State != "lost" || boards[0].Serial != "D" {
		t.Errorf("a board past its budget: %s", l)
	}
	if _, m := get(t, hs.URL+"/metrics"); !strings.Contains(m, `linerate_boards_in_test{state="lost"} 1`) {
		t.Error("metrics do not count the lost board")
	}
	// The door of /api/live.
	for _, bad := range []string{`{"id":"../x","event":"start"}`, `{"id":"x","event":"dance"}`, `{"id":"x","event":"start","serial":"a\nb"}`, `{"id":"x","event":"start","budget_s":1e9}`, `{"id":"x","event":"start","extra":1}`, `[`,
		`{"id":"x","event":"start","id":"y"}`, "{\"id\":\"x\",\"event\":\"start\",\"board\":\"zc\xff\"}"} {
		if code, _ := send("POST", "/api/live", []byte(bad)); code/100 != 4 {
			t.Errorf("live %s: %d", bad, code)
		}
	}
}

// A multi-port report: its ports' verdicts on the list, the page (per-port yield) and
// its own page (a port column); the door holds the ports to their steps.
func TestMultiPortReport(t *testing.T) {
	_, hs := newServer(t, t.TempDir())
	defer hs.Close()
	mk := func(id, serial string, eth1 bool) []byte {
		var r plan.Report
		json.Unmarshal(report(id, "zcu102", "PASS", 900), &r)
		r.Serial = serial
		r.Steps = []plan.StepResult{{ID: "tcp-up.eth0", Type: "iperf3", Pass: true, Summary: "ok", Port: "eth0"}, {ID: "tcp-up.eth1", Type: "iperf3", Pass: eth1, Summary: "slow", Port: "eth1"}}
		r.Ports = []plan.PortReport{{Interface: "eth0", MAC: r.MAC, Verdict: "PASS", Failed: []string{}}, {Interface: "eth1", MAC: "00:0a:35:00:02:" + fmt.Sprintf("%02x", serial[0]), Verdict: "PASS", Failed: []string{}}}
		if !eth1 {
			r.Verdict, r.Failed = "FAIL", []string{"tcp-up.eth1"}
			r.Ports[1].Verdict, r.Ports[1].Failed = "FAIL", []string{"tcp-up"}
		}
		b, _ := json.Marshal(r)
		return b
	}
	for i, b := range [][]byte{mk("mp1", "A", false), mk("mp2", "B", true)} {
		if code, msg := post(t, hs.URL, b); code != 201 {
			t.Fatalf("%d: %d %s", i, code, msg)
		}
	}
	_, page := get(t, hs.URL+"/")
	for _, want := range []string{"Per-port yield", "<td>zcu102</td><td>eth1</td><td class=\"n\">2</td><td class=\"n\">1</td><td class=\"n\">50.0\u00a0%</td>", "eth1&nbsp;<span class=\"FAIL\">FAIL</span>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	_, rp := get(t, hs.URL+"/reports/mp1")
	if !strings.Contains(rp, "<td>tcp-up.eth1</td><td>iperf3</td><td>eth1</td>") || !strings.Contains(rp, `eth1 <span class="FAIL">FAIL</span> (tcp-up)`) {
		t.Errorf("report page:\n%s", rp)
	}
	var r plan.Report
	json.Unmarshal(mk("mp3", "C", false), &r)
	r.Ports[1].Verdict = "PASS"
	b, _ := json.Marshal(r)
	if code, msg := post(t, hs.URL, b); code != 422 || !strings.Contains(msg, "port eth1: verdict PASS failed tcp-up, but its steps say FAIL failed tcp-up") {
		t.Errorf("inconsistent port: %d %s", code, msg)
	}
	// A port's failed list is what its steps say, not what the board says of it.
	json.Unmarshal(mk("mp4", "D", false), &r)
	r.Ports[1].Failed = []string{"link"}
	b, _ = json.Marshal(r)
	if code, msg := post(t, hs.URL, b); code != 422 || !strings.Contains(msg, "port eth1: verdict FAIL failed link, but its steps say FAIL failed tcp-up") {
		t.Errorf("a port's failed list unlike its steps: %d %s", code, msg)
	}
}

// TestChartPerPort: a multi-port report's TCP steps (tcp-up.eth0, tcp-up.eth1) reach the
// throughput chart, a line per port (the chart looked up tcp-up only and drew nothing).
func TestChartPerPort(t *testing.T) {
	_, hs := newServer(t, t.TempDir())
	defer hs.Close()
	for i, serial := range []string{"A", "B"} {
		var r plan.Report
		json.Unmarshal(report(fmt.Sprintf("cp%d", i), "zcu102", "PASS", 900), &r)
		r.Serial = serial
		r.Steps = []plan.StepResult{{ID: "tcp-up.eth0", Type: "iperf3", Pass: true, Summary: "ok", Port: "eth0", Measured: map[string]float64{"mbps": 910}},
			{ID: "tcp-up.eth1", Type: "iperf3", Pass: true, Summary: "ok", Port: "eth1", Measured: map[string]float64{"mbps": 870}}}
		r.Ports = []plan.PortReport{{Interface: "eth0", MAC: r.MAC, Verdict: "PASS", Failed: []string{}}, {Interface: "eth1", MAC: "00:0a:35:00:02:" + fmt.Sprintf("%02x", serial[0]), Verdict: "PASS", Failed: []string{}}}
		b, _ := json.Marshal(r)
		if code, msg := post(t, hs.URL, b); code != 201 {
			t.Fatalf("%d: %d %s", i, code, msg)
		}
	}
	_, page := get(t, hs.URL+"/")
	for _, want := range []string{"zcu102 eth0 TCP up (2 reports)", "zcu102 eth1 TCP up (2 reports)", "<title>zcu102 eth1 TCP up 870 Mbit/s</title>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
	if strings.Contains(page, "No TCP throughput yet") {
		t.Error("the multi-port reports did not reach the chart")
	}
}

// TestChartSeriesBounded: 40 board types draw 12 lines, those of the most reports, and
// say how many more there are.
func TestChartSeriesBounded(t *testing.T) {
	var rows []*row
	t0 := time.Now().Add(-time.Hour)
	for b := range 40 {
		for i := 0; i <= b; i++ {
			rows = append(rows, &row{Board: fmt.Sprintf("b%02d", b), Verdict: "PASS", Received: t0.Add(time.Duration(b*40+i) * time.Second), TCPUp: 900, TCPDown: math.NaN()})
		}
	}
	svg := string(chart(rows))
	if n := strings.Count(svg, "<polyline"); n != maxSeries {
		t.Errorf("%d lines drawn, want %d", n, maxSeries)
	}
	if !strings.Contains(svg, "b39 TCP up (40 reports)") || strings.Contains(svg, "b00 TCP up") || !strings.Contains(svg, "28 more series with fewer reports not drawn") {
		t.Errorf("the lines kept are not those of the most reports, or the rest is not said")
	}
}

// TestLateAttemptOrderedByStart: a board's spooled FAIL arrives after the retest's PASS
// (the spool's order inverted by an outage): the station orders the two by the time the
// board started them, so the FAIL is attempt 1 and the PASS attempt 2, first-pass yield
// 0 of 1 and final 1 of 1, in the API and after a restart.
func TestLateAttemptOrderedByStart(t *testing.T) {
	dir := t.TempDir()
	mk := func(id, verdict string, started time.Time) []byte {
		var r plan.Report
		json.Unmarshal(report(id, "zc702", verdict, 900), &r)
		r.Serial, r.Started = "LATE-1", started.UTC()
		b, _ := json.Marshal(r)
		return b
	}
	t0 := time.Now().Add(-time.Hour)
	check := func(when string, srv *Server, url string) {
		for id, want := range map[string]float64{"first-fail": 1, "retest-pass": 2} {
			var got map[string]any
			_, body := get(t, url+"/api/reports/"+id)
			if json.Unmarshal([]byte(body), &got); got["attempt"] != want {
				t.Errorf("%s: %s is attempt %v, want %v", when, id, got["attempt"], want)
			}
		}
		var list []Summary
		_, body := get(t, url+"/api/reports")
		json.Unmarshal([]byte(body), &list)
		for _, x := range list {
			if (x.ID == "first-fail") != (x.Attempt == 1) {
				t.Errorf("%s: the list says %s is attempt %d", when, x.ID, x.Attempt)
			}
		}
		srv.idx.mu.RLock()
		y := yields(filterRows(srv.idx.rows, map[string]string{}))
		srv.idx.mu.RUnlock()
		if len(y) != 1 || y[0].Tested != 1 || y[0].Passed != 0 || y[0].FinalPassed != 1 {
			t.Errorf("%s: yields %+v, want first pass 0 of 1, final 1 of 1", when, y)
		}
	}
	for round, when := range []string{"as posted", "after a restart"} {
		st, hs := newServer(t, dir)
		srv := hs.Config.Handler.(*Server)
		if round == 0 {
			for _, b := range [][]byte{mk("retest-pass", "PASS", t0.Add(10*time.Minute)), mk("first-fail", "FAIL", t0)} {
				if code, msg := post(t, hs.URL, b); code != 201 {
					t.Fatalf("post: %d %s", code, msg)
				}
			}
		}
		check(when, srv, hs.URL)
		hs.Close()
		st.Close()
	}
}
