package station

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zynqnet/linerate/curve"
	"github.com/zynqnet/linerate/plan"
)

func report(id, board, verdict string, mbps float64) []byte {
	r := plan.Report{Schema: plan.SchemaVersion, ID: id, Verdict: verdict, Board: board, Serial: "SN-" + id, MAC: "00:0a:35:00:01:22",
		Interface: "eth0", Started: time.Now().UTC(), Seconds: 12.5, Failed: []string{},
		Figures: map[string]float64{"tcp-up_mbps": mbps, "speed_mbps": 1000},
		Plan: &plan.Plan{Name: "qemu-zc702", Budget: plan.Duration(4 * time.Minute), Steps: []plan.Step{{ID: "link", Type: "link", Timeout: plan.Duration(15 * time.Second)},
			{ID: "tcp-up", Type: "iperf3", Raw: json.RawMessage(`{"id":"tcp-up","type":"iperf3","protocol":"tcp","direction":"up"}`)}}},
		Steps: []plan.StepResult{{ID: "link", Type: "link", Pass: true, Summary: "1000 full"},
			{ID: "tcp-up", Type: "iperf3", Pass: verdict == "PASS", Summary: fmt.Sprintf("TCP up %.1f Mbit/s", mbps), Measured: map[string]float64{"mbps": mbps}}}}
	if verdict == "FAIL" {
		r.Failed = []string{"tcp-up"}
	}
	b, _ := json.Marshal(r)
	return b
}

// asPosted says a served report is the posted body with the station's fields after it
// (attempt, received, ...), the board's own fields as they were.
func asPosted(served string, posted []byte) bool {
	p := strings.TrimSuffix(string(posted), "}")
	if !strings.HasPrefix(served, p+",") {
		return false
	}
	var v map[string]any
	return json.Unmarshal([]byte(served), &v) == nil && v["attempt"] != nil && v["received"] != nil
}

func newServer(t testing.TB, dir string) (*BoltStore, *httptest.Server) {
	t.Helper()
	st, err := OpenBolt(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(st, log.New(io.Discard, "", 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	return st, hs
}

func post(t *testing.T, url string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post(url+"/api/reports", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestStation(t *testing.T) {
	dir := t.TempDir()
	st, hs := newServer(t, dir)
	a1 := report("a1", "zc702", "PASS", 941.5)
	for _, r := range [][]byte{a1, report("a2", "zc702", "FAIL", 612), report("b1", "zcu102", "PASS", 938)} {
		if code, msg := post(t, hs.URL, r); code != http.StatusCreated {
			t.Fatalf("POST: %d %s", code, msg)
		}
	}
	// A re-sent report (its answer was lost) is taken again without a second copy; another
	// report under the same id is refused and the first kept.
	if code, _ := post(t, hs.URL, a1); code != http.StatusOK {
		t.Errorf("re-sent report: %d", code)
	}
	if code, msg := post(t, hs.URL, report("a1", "zc702", "PASS", 100)); code != http.StatusConflict || !strings.Contains(msg, "nothing was overwritten") {
		t.Errorf("another report under a stored id: %d %s", code, msg)
	}
	if _, body := get(t, hs.URL+"/api/reports/a1"); !asPosted(body, a1) {
		t.Errorf("the stored report changed: %s", body)
	}
	for _, tc := range []struct {
		body []byte
		code int
		want string
	}{
		{[]byte("{"), 400, "not a report"},
		{[]byte(`{"schema_version": 9, "id": "x"}`), 422, "schema_version 9"},
		{[]byte(`{"schema_version": 1, "id": "../x", "verdict": "PASS", "board": "zc702"}`), 422, "id"},
		{append(report("c1", "zc702", "PASS", 1), []byte(" {}")...), 400, "data after"},
		{[]byte(strings.Repeat(" ", MaxReportBytes+10)), 413, "larger than"},
	} {
		if code, msg := post(t, hs.URL, tc.body); code != tc.code || !strings.Contains(msg, tc.want) {
			t.Errorf("bad body %.40q: %d %s, want %d %q", tc.body, code, msg, tc.code, tc.want)
		}
	}
	_, list := get(t, hs.URL+"/api/reports?board=zc702")
	var sums []Summary
	json.Unmarshal([]byte(list), &sums)
	if len(sums) != 2 || sums[0].ID != "a1" || sums[1].Verdict != "FAIL" {
		t.Errorf("list: %s", list)
	}
	if code, body := get(t, hs.URL+"/api/reports/b1"); code != 200 || !strings.Contains(body, `"board":"zcu102"`) {
		t.Errorf("report: %d %s", code, body)
	}
	code, x := get(t, hs.URL+"/api/reports/a2/junit.xml")
	var ju struct {
		Suites []struct {
			Failures int `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(x), &ju); code != 200 || err != nil || ju.Suites[0].Failures != 1 {
		t.Errorf("junit: %d %v %s", code, err, x)
	}
	if code, _ := get(t, hs.URL+"/api/reports/nope"); code != 404 {
		t.Errorf("missing report: %d", code)
	}
	_, page := get(t, hs.URL+"/")
	for _, want := range []string{"3</span> of 3 reports shown (3 stored)", "2 PASS, 1 FAIL", "SN-a1", "SN-b1", `<span class="FAIL">FAIL</span>`, "<svg", "zcu102 TCP up (1 report)", "zc702 TCP up (2 reports)", "FAIL report", "<span class=\"k\">tcp-up</span><span class=\"v\">941.5\u00a0Mbit/s</span>",
		"first-pass yield", "<td>zc702</td><td class=\"n\">2</td><td class=\"n\">1</td><td class=\"n\">50.0\u00a0%</td><td class=\"n\">0</td><td class=\"n\">50.0\u00a0%</td>", `<td>tcp-up</td><td class="n">1</td>`, `href="/reports/a1"`, "CSV of these reports"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if _, page := get(t, hs.URL+"/?verdict=FAIL"); !strings.Contains(page, "1</span> of 1 reports shown (3 stored)") || strings.Contains(page, "SN-b1") {
		t.Errorf("filtered page:\n%s", page)
	}
	_, metrics := get(t, hs.URL+"/metrics")
	for _, want := range []string{`linerate_boards_tested_total{board="zc702",verdict="PASS"} 1`, `linerate_boards_tested_total{board="zc702",verdict="FAIL"} 1`,
		`linerate_step_results_total{board="zc702",result="fail",step="tcp-up"} 1`, `linerate_throughput_bytes_per_second_count{board="zcu102",step="tcp-up"} 1`, `linerate_reports_total{board="zc702",verdict="PASS"} 1`, "linerate_reports_stored 3"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// Durable: a new station on the same store has every report and the same metrics.
	hs.Close()
	st.Close()
	st2, hs2 := newServer(t, dir)
	defer st2.Close()
	defer hs2.Close()
	if _, page := get(t, hs2.URL+"/"); !strings.Contains(page, "3</span> of 3 reports shown") {
		t.Error("reports lost across a restart")
	}
	if _, m := get(t, hs2.URL+"/metrics"); !strings.Contains(m, `linerate_boards_tested_total{board="zc702",verdict="PASS"} 1`) {
		t.Error("metrics not rebuilt from the store")
	}
	// A second station on the same store is refused with a clear error.
	if _, err := OpenBolt(dir); err == nil || !strings.Contains(err.Error(), "another station") {
		t.Errorf("second open: %v", err)
	}
}

func FuzzDecodeReport(f *testing.F) {
	f.Add(report("a", "zc702", "PASS", 900))
	f.Add([]byte(`{"schema_version":1}`))
	f.Add(mutate("d", func(r *plan.Report) { r.Steps[0].Detail = json.RawMessage(`{"a":{"b":["c\n"]}}`) }))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeReport(b)
		if err != nil {
			return
		}
		if r.Check() != nil || r.ID == "" {
			t.Fatal("DecodeReport returned an unchecked report")
		}
		// What it takes is valid UTF-8, and no step's text can drive a terminal or forge
		// a log line.
		if !utf8.Valid(b) {
			t.Fatal("invalid UTF-8 taken")
		}
		for _, s := range r.Steps {
			if !plain(s.Summary + s.Reason + s.Type + s.Port) {
				t.Fatalf("a control character taken in step %s", s.ID)
			}
		}
		if _, err := r.JUnit(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestConcurrentPosts: boards report at once; every report is stored once and counted.
func TestConcurrentPosts(t *testing.T) {
	st, hs := newServer(t, t.TempDir())
	defer st.Close()
	defer hs.Close()
	done := make(chan int, 16)
	for i := 0; i < 16; i++ {
		go func(i int) {
			resp, err := http.Post(hs.URL+"/api/reports", "application/json", strings.NewReader(string(report(fmt.Sprintf("c%d", i), "zc702", "PASS", 900))))
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}(i)
	}
	for i := 0; i < 16; i++ {
		if c := <-done; c != http.StatusCreated {
			t.Errorf("POST: %d", c)
		}
	}
	if _, m := get(t, hs.URL+"/metrics"); !strings.Contains(m, "linerate_reports_stored 16") {
		t.Error("not every report counted")
	}
}

// TestSweepChart: a report with a sweep step gets a chart (the one linerate sweep --svg
// draws) and a link to it on the page; other steps and unknown ones answer 404.
func TestSweepChart(t *testing.T) {
	_, hs := newServer(t, t.TempDir())
	defer hs.Close()
	var r plan.Report
	json.Unmarshal(report("sw-1", "zc702", "PASS", 60), &r)
	res := curve.Result{Iface: "eth0", Knob: "rings.rx", Restored: true, Columns: []curve.Column{{Key: "tcp_mbps", Unit: "Mbit/s"}},
		Points: []curve.Point{{Value: "64", Applied: "64", Median: map[string]float64{"tcp_mbps": 40}}, {Value: "128", Applied: "128", Median: map[string]float64{"tcp_mbps": 60}}}}
	d, _ := json.Marshal(res)
	r.Steps = append(r.Steps, plan.StepResult{ID: "rings", Type: "sweep", Pass: true, Summary: "rings.rx over 2 values: 2 measured", Detail: d})
	r.Plan.Steps = append(r.Plan.Steps, plan.Step{ID: "rings", Type: "sweep"})
	b, _ := json.Marshal(r)
	if code, body := post(t, hs.URL, b); code != 201 {
		t.Fatalf("post: %d %s", code, body)
	}
	code, svg := get(t, hs.URL+"/api/reports/sw-1/sweep/rings.svg")
	if code != 200 || !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, "sweep of rings.rx on eth0") || !strings.Contains(svg, "tcp_mbps (Mbit/s)") {
		t.Errorf("chart: %d %s", code, svg)
	}
	for _, p := range []string{"/api/reports/sw-1/sweep/link.svg", "/api/reports/sw-1/sweep/nope.svg", "/api/reports/nope/sweep/rings.svg"} {
		if code, _ := get(t, hs.URL+p); code != 404 {
			t.Errorf("%s: %d, want 404", p, code)
		}
	}
	if _, page := get(t, hs.URL+"/"); !strings.Contains(page, `<a href="/api/reports/sw-1/sweep/rings.svg">rings chart</a>`) {
		t.Errorf("the page does not link the chart")
	}
}
