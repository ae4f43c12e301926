package station

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/plan"
)

// eachStore runs fn against a station with opts over bbolt and over a PostgreSQL the
// test starts.
func eachStore(t *testing.T, opts Options, fn func(t *testing.T, base string)) {
	t.Run("bbolt", func(t *testing.T) {
		st, err := OpenBolt(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		fn(t, serveStore(t, st, opts))
	})
	t.Run("postgres", func(t *testing.T) {
		st, _, err := OpenStore(t.Context(), "", startPostgres(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		fn(t, serveStore(t, st, opts))
	})
}

func serveStore(t *testing.T, st Store, opts Options) string {
	t.Helper()
	srv, err := NewServer(st, log.New(io.Discard, "", 0), opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs.URL
}

// traced is a report of serial with what produced it: the plan's text (and hash), an
// image build, a kernel, an operator.
func traced(t *testing.T, id, serial, operator, build, planText string) []byte {
	t.Helper()
	var r plan.Report
	if err := json.Unmarshal(report(id, "zc702", "PASS", 941), &r); err != nil {
		t.Fatal(err)
	}
	r.Serial, r.Operator, r.Kernel, r.UBoot = serial, operator, "6.1.192", "2023.01"
	r.Build = &plan.Build{ID: build, Linerate: "v1.0", Board: "zc702"}
	sum := sha256.Sum256([]byte(planText))
	r.PlanSHA256, r.Plan.Text, r.Plan.SHA256 = hex.EncodeToString(sum[:]), planText, hex.EncodeToString(sum[:])
	b, _ := json.Marshal(r)
	return b
}

// TestTraceability on both stores: the station stores and serves what produced each
// report with its own version, filters the list by each, and refuses a report whose plan
// text is not what its hash says; given the line's plans, it flags a report of another
// plan, or refuses it under reject.
func TestTraceability(t *testing.T) {
	const line, bench = "name: line\nsteps: []\n", "name: bench\nsteps: []\n"
	sum := sha256.Sum256([]byte(line))
	plans := Plans{hex.EncodeToString(sum[:]): "line.yaml"}
	eachStore(t, Options{Version: "v7.7", Plans: plans}, func(t *testing.T, base string) {
		for _, r := range [][]byte{traced(t, "t1", "S1", "ann", "b1", line), traced(t, "t2", "S2", "bob", "b1", line), traced(t, "t3", "S3", "ann", "b2", bench)} {
			if code, msg := post(t, base, r); code != 201 {
				t.Fatalf("%d %s", code, msg)
			}
		}
		var served struct {
			Station  string       `json:"station_version"`
			Operator string       `json:"operator"`
			Build    plan.Build   `json:"build"`
			Flags    []ReportFlag `json:"flags"`
		}
		_, body := get(t, base+"/api/reports/t3")
		if err := json.Unmarshal([]byte(body), &served); err != nil || served.Station != "v7.7" || served.Operator != "ann" || served.Build.ID != "b2" ||
			len(served.Flags) != 1 || served.Flags[0].Kind != FlagUnknownPlan || !strings.Contains(served.Flags[0].Text, "is not one of the station's plans (line.yaml)") {
			t.Errorf("served: %+v %v", served, err)
		}
		for q, want := range map[string]string{"operator=ann": "t1 t3", "operator=bob": "t2", "build=b1": "t1 t2", "plan=" + hex.EncodeToString(sum[:])[:10]: "t1 t2",
			"kernel=6.1.192&uboot=2023.01": "t1 t2 t3", "station_version=v7.7": "t1 t2 t3", "station_version=v1": "", "plan=abc": ""} {
			var list []Summary
			_, body := get(t, base+"/api/reports?"+q)
			json.Unmarshal([]byte(body), &list)
			var ids []string
			for _, s := range list {
				ids = append(ids, s.ID)
			}
			if strings.Join(ids, " ") != want {
				t.Errorf("?%s: %v, want %s", q, ids, want)
			}
		}
		if _, page := get(t, base+"/?operator=bob"); !strings.Contains(page, ">S2<") || strings.Contains(page, ">S1<") {
			t.Errorf("the page's operator filter")
		}
		var lied plan.Report
		json.Unmarshal(traced(t, "t4", "S4", "ann", "b1", line), &lied)
		lied.Plan.Text = bench
		b, _ := json.Marshal(lied)
		if code, msg := post(t, base, b); code != 422 || !strings.Contains(msg, "the plan's text hashes to") {
			t.Errorf("a plan that is not its hash: %d %s", code, msg)
		}
	})
	eachStore(t, Options{Plans: plans, PlanPolicy: Reject}, func(t *testing.T, base string) {
		if code, msg := post(t, base, traced(t, "r1", "S1", "ann", "b1", bench)); code != 409 || !strings.Contains(msg, "is not one of the station's plans (line.yaml)") {
			t.Errorf("reject: %d %s", code, msg)
		}
		if code, _ := get(t, base+"/api/reports/r1"); code != 404 {
			t.Errorf("a refused report was stored")
		}
		if code, msg := post(t, base, traced(t, "r2", "S1", "ann", "b1", line)); code != 201 {
			t.Errorf("the line's plan: %d %s", code, msg)
		}
	})
}

// board is a report of a board: its serial, fixture, verdict and its ports' MACs (the
// first the report's own).
func board(t *testing.T, id, serial, fixture, verdict string, macs ...string) []byte {
	t.Helper()
	var r plan.Report
	json.Unmarshal(report(id, "zc702", "PASS", 941), &r)
	r.Serial, r.Fixture, r.MAC = serial, fixture, macs[0]
	if len(macs) > 1 {
		for i, m := range macs {
			r.Ports = append(r.Ports, plan.PortReport{Interface: fmt.Sprintf("eth%d", i), MAC: m, Verdict: "PASS", Failed: []string{}})
		}
	}
	if verdict == "FAIL" {
		r.Steps[1].Pass = false
	}
	r.Judge()
	b, _ := json.Marshal(r)
	return b
}

// TestEveryPortsMAC on both stores: MACs compared as one form whatever their writing,
// every port's MAC checked against other boards', an empty MAC refused, and a serial
// seen again on a board with another MAC a reused serial, not a retest.
func TestEveryPortsMAC(t *testing.T) {
	eachStore(t, Options{MACPolicy: MACReject}, func(t *testing.T, base string) {
		if code, msg := post(t, base, board(t, "n1", "N1", "", "PASS", "00:0a:35:aa:bb:01")); code != 201 {
			t.Fatal(code, msg)
		}
		for i, m := range []string{"00-0A-35-AA-BB-01", "000a35aabb01", "000a.35aa.bb01", "0:a:35:aa:bb:1"} {
			if code, msg := post(t, base, board(t, fmt.Sprint("n2", i), fmt.Sprint("N2", i), "", "PASS", m)); code != 409 || !strings.Contains(msg, "duplicate MAC 00:0a:35:aa:bb:01: already reported by zc702 N1") {
				t.Errorf("%s: %d %s", m, code, msg)
			}
		}
		if code, msg := post(t, base, board(t, "n3", "N3", "", "PASS", "")); code != 422 || !strings.Contains(msg, "mac: no MAC") {
			t.Errorf("no MAC: %d %s", code, msg)
		}
		// A second board whose second port has the first board's second port's MAC.
		if code, msg := post(t, base, board(t, "p1", "P1", "", "PASS", "00:0a:35:00:10:00", "00:0a:35:00:10:01")); code != 201 {
			t.Fatal(code, msg)
		}
		if code, msg := post(t, base, board(t, "p2", "P2", "", "PASS", "00:0a:35:00:20:00", "00:0A:35:00:10:01")); code != 409 || !strings.Contains(msg, "duplicate MAC 00:0a:35:00:10:01: already reported by zc702 P1") {
			t.Errorf("port 2's MAC: %d %s", code, msg)
		}
	})
	eachStore(t, Options{}, func(t *testing.T, base string) {
		post(t, base, board(t, "p1", "P1", "", "PASS", "00:0a:35:00:10:00", "00:0a:35:00:10:01"))
		post(t, base, board(t, "p2", "P2", "", "PASS", "00:0a:35:00:20:00", "00:0a:35:00:10:01"))
		var s struct {
			Dup []MACUse `json:"duplicate_mac"`
		}
		_, body := get(t, base+"/api/reports/p2")
		if json.Unmarshal([]byte(body), &s); len(s.Dup) != 1 || s.Dup[0].Serial != "P1" || s.Dup[0].MAC != "00:0a:35:00:10:01" {
			t.Errorf("flagged: %+v", s.Dup)
		}
		// Serial R on one board, then on another: a reused serial, attempt 1.
		post(t, base, board(t, "r1", "R", "", "FAIL", "00:0a:35:00:30:00"))
		post(t, base, board(t, "r2", "R", "", "PASS", "00:0a:35:00:40:00"))
		var r struct {
			Attempt int          `json:"attempt"`
			Flags   []ReportFlag `json:"flags"`
		}
		_, body = get(t, base+"/api/reports/r2")
		if json.Unmarshal([]byte(body), &r); r.Attempt != 1 || len(r.Flags) != 1 || r.Flags[0].Kind != FlagReusedSerial || !strings.Contains(r.Flags[0].Text, "reported before with MAC 00:0a:35:00:30:00") {
			t.Errorf("a reused serial: %+v", r)
		}
	})
}

// TestRetestRules on both stores: with --max-attempts 3 a board's fourth attempt after
// three failures is refused (flagged for repair under flag); with --retest-elsewhere a
// retest after a failure on the same fixture is refused, on another taken.
func TestRetestRules(t *testing.T) {
	eachStore(t, Options{MaxAttempts: 3, RetestElsewhere: true, RetestPolicy: Reject}, func(t *testing.T, base string) {
		mac := "00:0a:35:00:50:00"
		for i, f := range []string{"f1", "f2", "f1"} {
			if code, msg := post(t, base, board(t, fmt.Sprint("a", i), "A", f, "FAIL", mac)); code != 201 {
				t.Fatalf("attempt %d: %d %s", i+1, code, msg)
			}
		}
		if code, msg := post(t, base, board(t, "a3", "A", "f2", "PASS", mac)); code != 409 || !strings.Contains(msg, "serial A failed 3 times (--max-attempts 3): for repair") {
			t.Errorf("a fourth attempt: %d %s", code, msg)
		}
		post(t, base, board(t, "b0", "B", "f1", "FAIL", "00:0a:35:00:60:00"))
		if code, msg := post(t, base, board(t, "b1", "B", "f1", "PASS", "00:0a:35:00:60:00")); code != 409 || !strings.Contains(msg, "serial B failed on fixture f1 last time: a retest must come from another fixture") {
			t.Errorf("a retest on the same fixture: %d %s", code, msg)
		}
		if code, msg := post(t, base, board(t, "b2", "B", "f2", "PASS", "00:0a:35:00:60:00")); code != 201 || !strings.Contains(msg, "attempt 2") {
			t.Errorf("a retest elsewhere: %d %s", code, msg)
		}
	})
	eachStore(t, Options{MaxAttempts: 1}, func(t *testing.T, base string) {
		post(t, base, board(t, "c0", "C", "f1", "FAIL", "00:0a:35:00:70:00"))
		post(t, base, board(t, "c1", "C", "f1", "FAIL", "00:0a:35:00:70:00"))
		var r struct {
			Flags []ReportFlag `json:"flags"`
		}
		_, body := get(t, base+"/api/reports/c1")
		if json.Unmarshal([]byte(body), &r); len(r.Flags) != 1 || r.Flags[0].Kind != FlagRepair {
			t.Errorf("flagged for repair: %+v", r)
		}
		if _, page := get(t, base+"/"); !strings.Contains(page, "repair") {
			t.Errorf("the page does not show the board for repair")
		}
	})
}

// faulted is a report of serial on fixture whose step of type typ failed (identity: the
// board's own fault).
func faulted(t *testing.T, id, serial, fixture, typ string) []byte {
	t.Helper()
	var r plan.Report
	json.Unmarshal(report(id, "zc702", "PASS", 941), &r)
	r.Serial, r.Fixture, r.MAC = serial, fixture, fmt.Sprintf("00:0a:35:01:00:%02x", len(id)+int(id[len(id)-1]))
	r.Steps[0] = plan.StepResult{ID: typ, Type: typ, Summary: "MAC is a placeholder", Reason: "placeholder"}
	r.Judge()
	b, _ := json.Marshal(r)
	return b
}

func alarmsOf(t *testing.T, base string) []Alarm {
	t.Helper()
	var list []Alarm
	_, body := get(t, base+"/api/alarms")
	json.Unmarshal([]byte(body), &list)
	return list
}

// TestGoldenUnits on both stores: a fixture is unverified (its reports flagged, or
// refused under reject) until a golden board passes on it, and again after N boards or H
// hours; a golden board failing raises the fixture's alarm at once; golden runs stay out
// of the yield; three boards failing their identity (their own fault) raise no fixture
// alarm.
func TestGoldenUnits(t *testing.T) {
	golden := Golden{{"zc702", "GOLD-1"}: true}
	eachStore(t, Options{Golden: golden, GoldenEvery: 2, GoldenPolicy: Reject}, func(t *testing.T, base string) {
		mac := func(i int) string { return fmt.Sprintf("00:0a:35:02:00:%02x", i) }
		if code, msg := post(t, base, board(t, "u1", "B1", "f1", "PASS", mac(1))); code != 409 || !strings.Contains(msg, "fixture f1 is not verified: no golden board has passed on it") {
			t.Errorf("before the golden board: %d %s", code, msg)
		}
		if code, msg := post(t, base, board(t, "g1", "GOLD-1", "f1", "PASS", mac(9))); code != 201 {
			t.Fatalf("the golden board: %d %s", code, msg)
		}
		for i := 2; i <= 3; i++ {
			if code, msg := post(t, base, board(t, fmt.Sprint("u", i), fmt.Sprint("B", i), "f1", "PASS", mac(i))); code != 201 {
				t.Errorf("board %d after the golden one: %d %s", i, code, msg)
			}
		}
		if code, msg := post(t, base, board(t, "u4", "B4", "f1", "PASS", mac(4))); code != 409 || !strings.Contains(msg, "fixture f1 is due a golden board: 2 boards since GOLD-1 passed on it (every 2)") {
			t.Errorf("after N boards: %d %s", code, msg)
		}
		var fx []fixtureState
		_, body := get(t, base+"/api/fixtures")
		if json.Unmarshal([]byte(body), &fx); len(fx) != 1 || fx[0].Verified || fx[0].Since != 2 || fx[0].GoldenSerial != "GOLD-1" {
			t.Errorf("fixtures: %+v", fx)
		}
		// The golden board fails: the fixture's alarm at once.
		if code, msg := post(t, base, board(t, "g2", "GOLD-1", "f1", "FAIL", mac(9))); code != 201 {
			t.Fatalf("%d %s", code, msg)
		}
		al := alarmsOf(t, base)
		if len(al) != 1 || al[0].Kind != "golden-failed" || !strings.Contains(al[0].Text, "fixture f1 failed its golden board GOLD-1 (tcp-up)") {
			t.Errorf("alarms %+v", al)
		}
		// The golden runs are not in the yield: two boards tested, both passed.
		if _, page := get(t, base+"/"); !strings.Contains(page, `<td>zc702</td><td class="n">2</td><td class="n">2</td><td class="n">100.0`) {
			t.Errorf("the yield counts golden runs")
		}
	})
	eachStore(t, Options{Golden: golden, GoldenHours: 1.0 / 3600}, func(t *testing.T, base string) {
		post(t, base, board(t, "g1", "GOLD-1", "f1", "PASS", "00:0a:35:03:00:09"))
		time.Sleep(1100 * time.Millisecond)
		var r struct {
			Flags []ReportFlag `json:"flags"`
		}
		post(t, base, board(t, "h1", "H1", "f1", "PASS", "00:0a:35:03:00:01"))
		_, body := get(t, base+"/api/reports/h1")
		if json.Unmarshal([]byte(body), &r); len(r.Flags) != 1 || r.Flags[0].Kind != FlagUnverified || !strings.Contains(r.Flags[0].Text, "fixture f1 is due a golden board: GOLD-1 passed on it") {
			t.Errorf("after H hours: %+v", r)
		}
		// Three boards failing their identity on one fixture: their faults, no alarm.
		for i := 0; i < 3; i++ {
			if code, msg := post(t, base, faulted(t, fmt.Sprint("i", i), fmt.Sprint("I", i), "f2", "identity")); code != 201 {
				t.Fatalf("%d %s", code, msg)
			}
		}
		if al := alarmsOf(t, base); len(al) != 0 {
			t.Errorf("identity failures raised %+v", al)
		}
	})
}

// limited is a passing report of serial whose TCP step measured mbps against a limit of
// 900 with a marginal band to 910.
func limited(t *testing.T, id, serial string, mbps float64) []byte {
	t.Helper()
	var r plan.Report
	json.Unmarshal(report(id, "zc702", "PASS", mbps), &r)
	r.Serial, r.MAC = serial, fmt.Sprintf("00:0a:35:%02x:%02x:%02x", len(serial), serial[len(serial)-2], serial[len(serial)-1])
	low, band := 900.0, 910.0
	r.Steps[1].Limits = plan.JudgeLimits([]plan.Limit{{Measurement: "mbps", Unit: "Mbit/s", Low: &low, MarginalLow: &band}}, r.Steps[1].Measured)
	r.Judge()
	b, _ := json.Marshal(r)
	return b
}

// normal is the i-th of n values spread as a normal distribution of median m and sigma
// s (the quantiles (i+0.5)/n): a population whose statistics are known.
func normal(i, n int, m, s float64) float64 {
	return m + s*math.Sqrt2*math.Erfinv(2*(float64(i)+0.5)/float64(n)-1)
}

// TestPopulation on both stores: after 200 passing boards of TCP about 940 Mbit/s
// (sigma 3), one at 915 passes its plan's limit (900, not in its band to 910) but is an
// outlier: stored as marginal with the reason, or failed under --outlier-policy fail;
// /api/capability and the page give the population's statistics and Cpk.
func TestPopulation(t *testing.T) {
	for _, pol := range []Policy{Flag, Reject} {
		eachStore(t, Options{OutlierPolicy: pol}, func(t *testing.T, base string) {
			for i := 0; i < 200; i++ {
				if code, msg := post(t, base, limited(t, fmt.Sprint("p", i), fmt.Sprintf("P%03d", i), normal(i, 200, 940, 3))); code != 201 {
					t.Fatalf("%d: %d %s", i, code, msg)
				}
			}
			code, msg := post(t, base, limited(t, "far", "F01", 915))
			if pol == Reject {
				if code != 409 || !strings.Contains(msg, "an outlier: tcp-up_mbps 915 is outside the population's limits 922..958") {
					t.Errorf("fail: %d %s", code, msg)
				}
				return
			}
			var r struct {
				Marginal []string  `json:"marginal"`
				Outliers []Outlier `json:"outliers"`
			}
			_, body := get(t, base+"/api/reports/far")
			if json.Unmarshal([]byte(body), &r); code != 201 || len(r.Outliers) != 1 || r.Outliers[0].N != 200 || !strings.Contains(r.Outliers[0].Text, "(median 940, robust sigma 3, 6 sigma, 200 boards)") || len(r.Marginal) != 0 {
				t.Errorf("flagged: %d %s %+v", code, msg, r)
			}
			var list []Summary
			_, body = get(t, base+"/api/reports?q=F01")
			if json.Unmarshal([]byte(body), &list); len(list) != 1 || strings.Join(list[0].Marginal, ",") != "tcp-up_mbps" {
				t.Errorf("the list's marginal: %+v", list)
			}
			var caps []Capability
			_, body = get(t, base+"/api/capability?type=zc702")
			if json.Unmarshal([]byte(body), &caps); len(caps) != 1 || caps[0].N != 200 || math.Abs(caps[0].Median-940) > 0.1 || math.Abs(caps[0].RobustSigma-3) > 0.1 ||
				caps[0].Cpk == nil || math.Abs(*caps[0].Cpk-40.0/9) > 0.1 {
				t.Errorf("capability %+v", caps)
			}
			_, page := get(t, base+"/")
			if !strings.Contains(page, `id="capability"`) || !strings.Contains(page, "<td>tcp-up_mbps</td><td class=\"n\">200</td>") {
				t.Errorf("the page has no capability table")
			}
			// The day's yield counts the marginal board: 201 tested, all passed, 1 marginal.
			if !strings.Contains(page, `<td>zc702</td><td class="n">201</td><td class="n">201</td><td class="n">100.0`+"\u00a0"+`%</td><td class="n">1</td>`) {
				t.Errorf("the yield does not count the marginal board")
			}
		})
	}
}

// TestLimitsProposal: station limits reads a store's population and proposes the plan's
// limit from it: median 940, sigma 5 give 910.. with the band to 920 at 6 sigma.
func TestLimitsProposal(t *testing.T) {
	dir := t.TempDir()
	st, err := OpenBolt(dir)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	for i := 0; i < 500; i++ {
		b := limited(t, fmt.Sprint("q", i), fmt.Sprintf("Q%03d", i), normal(i, 500, 940, 5))
		if _, err := st.Put(decoded(t, b), b, t0.Add(time.Duration(i)*time.Minute), Meta{}, Rules{}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	caps, err := Limits(t.Context(), dir, "", "zc702", DefaultPopulation, DefaultSigmas)
	if err != nil || len(caps) != 1 {
		t.Fatalf("%+v %v", caps, err)
	}
	c := caps[0]
	if p := c.Proposed; p == nil || math.Abs(*p.Low-910) > 1 || math.Abs(*p.MarginalLow-920) > 1 || p.High != nil || c.N != 500 || !c.From.Equal(t0) {
		t.Errorf("proposed %+v for %+v", c.Proposed, c)
	}
	var b strings.Builder
	WriteLimits(&b, caps, DefaultSigmas)
	for _, want := range []string{"zc702 tcp-up_mbps (Mbit/s): 500 passing boards, 2026-12-01 08:00 .. 2026-12-01 16:19", "median 940, robust sigma 5",
		"the plan's limit 900..: Cpk 2.6", "proposed for step tcp-up: - {measurement: mbps, low: 910, marginal_low: 920, unit: Mbit/s}"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}
