package validate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zynqnet/linerate/plan"
)

func TestBuiltinPlansParse(t *testing.T) {
	for _, name := range BuiltinNames() {
		p, err := Load(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(p.Steps) == 0 || len(p.Ports) == 0 || p.Ports[0].Interface != p.Interface {
			t.Errorf("%s: %+v", name, p)
		}
		for _, port := range p.Ports {
			if port.Station.Address == "" {
				t.Errorf("%s: port %s has no station", name, port.Interface)
			}
		}
	}
	if len(BuiltinNames()) < 3 {
		t.Errorf("built-in plans: %v", BuiltinNames())
	}
}

const goodPlan = `name: t
board: zc702
interface: eth0
budget: 2m
station:
  address: 198.18.5.1
  report_url: http://198.18.5.1:8080/api/reports
steps:
  - id: link
    type: link
    carrier_within: 5s
  - id: tcp
    type: iperf3
    min_mbps: 900
  - id: f
    type: frames
    rate: 10%
    max_loss_pct: 0
`

func TestParsePlan(t *testing.T) {
	p, err := Parse([]byte(goodPlan), "good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Budget.D() != 2*time.Minute || p.Steps[0].Params.(*Link).CarrierWithin.D() != 5*time.Second || p.Steps[0].Timeout.D() != 10*time.Second {
		t.Errorf("durations: %+v %+v", p.Budget, p.Steps[0])
	}
	if s := p.Steps[1].Params.(*Iperf3); s.Protocol != "tcp" || s.Direction != "up" || s.Duration.D() != 5*time.Second || s.Streams != 1 || *s.MinMbps != 900 {
		t.Errorf("iperf3 defaults: %+v", s)
	}
	if p.Station.Port != 5201 || p.Station.ReflectorMAC != "auto" || p.Steps[2].Params.(*Frames).Size != 512 {
		t.Errorf("defaults: %+v %+v", p.Station, p.Steps[2])
	}
}

func TestParsePlanBad(t *testing.T) {
	for _, tc := range []struct {
		name, edit, want string
	}{
		{"unknown step", "  - id: x\n    type: ping\n", `:19: step "x": unknown type "ping"`},
		{"missing threshold", "  - id: x\n    type: iperf3\n", `:19: step "x": iperf3 step needs a threshold: min_mbps`},
		{"udp without loss", "  - id: x\n    type: iperf3\n    protocol: udp\n    bandwidth: 10M\n    min_mbps: 5\n", "needs a threshold: max_loss_pct"},
		{"wrong unit", "  - id: x\n    type: iperf3\n    duration: 10\n    min_mbps: 5\n", `:21: duration: "10": want a duration with its unit`},
		{"text for number", "  - id: x\n    type: iperf3\n    min_mbps: fast\n", "want a number, not the text"},
		{"unknown key", "  - id: x\n    type: link\n    speeed_mbps: 1000\n", "speeed_mbps is not a key"},
		{"duplicate id", "  - id: link\n    type: link\n", `step id "link" is used twice`},
		{"bad duplex", "  - id: x\n    type: link\n    duplex: quarter\n", `duplex "quarter"`},
		{"frames without threshold", "  - id: x\n    type: frames\n    rate: 5%\n", "max_loss_pct and/or max_p99_us"},
		{"percent out of range", "  - id: x\n    type: frames\n    rate: 5%\n    max_loss_pct: 150\n", "max_loss_pct 150: out of range"},
		{"nan threshold", "  - id: x\n    type: iperf3\n    min_mbps: .nan\n", ":19: step \"x\": min_mbps NaN: out of range"},
		{"inf threshold", "  - id: x\n    type: frames\n    rate: 5%\n    max_p99_us: .inf\n", "max_p99_us +Inf: out of range"},
		{"negative inf", "  - id: x\n    type: iperf3\n    min_mbps: -.inf\n", "min_mbps -Inf: out of range"},
		{"nan loss", "  - id: x\n    type: frames\n    rate: 5%\n    max_loss_pct: .NaN\n", "max_loss_pct NaN"},
		{"zero rate", "  - id: x\n    type: frames\n    rate: 0pps\n    max_loss_pct: 1\n", `rate "0pps"`},
		{"nan rate", "  - id: x\n    type: frames\n    rate: NaN%\n    max_loss_pct: 1\n", `rate "NaN%"`},
		{"huge frame", "  - id: x\n    type: frames\n    rate: 5%\n    size: 100000000\n    max_loss_pct: 1\n", "size 100000000: want a frame size of 64..9018"},
		{"tiny frame", "  - id: x\n    type: frames\n    rate: 5%\n    size: 10\n    max_loss_pct: 1\n", "size 10"},
		{"bad cpus", "  - id: x\n    type: frames\n    rate: 5%\n    max_loss_pct: 1\n    cpus: zero\n", `cpus "zero": want a count of CPUs (1, 2, ...) or all`},
		{"id with a space", "  - id: my link\n    type: link\n", `id "my link": use letters`},
		{"sweep no knob", "  - id: x\n    type: sweep\n    values: 64..512\n", "sweep step needs knob and values"},
		{"sweep bad knob", "  - id: x\n    type: sweep\n    knob: ring.rx\n    values: 64\n", `unknown knob "ring.rx"`},
		{"sweep bad value", "  - id: x\n    type: sweep\n    knob: rings.rx\n    values: 64,lots\n", `rings.rx: want a positive number or max, have "lots"`},
		{"sweep bad range", "  - id: x\n    type: sweep\n    knob: rings.rx\n    values: 512..64\n", "values: \"512..64\": a range is A..B"},
		{"sweep bad measure", "  - id: x\n    type: sweep\n    knob: rings.rx\n    values: 64\n    measure: [udp]\n", `measure "udp": want tcp and/or frames`},
		{"sweep bad repeat", "  - id: x\n    type: sweep\n    knob: rings.rx\n    values: 64\n    repeat: 1000\n", "repeat 1000: want 1..100"},
		{"sweep short", "  - id: x\n    type: sweep\n    knob: rings.rx\n    values: 64\n    duration: 100ms\n", "at least 1s"},
		{"sweep frame size", "  - id: x\n    type: sweep\n    knob: rings.rx\n    values: 64\n    measure: [frames]\n    size: 10\n", "size 10"},
		{"zero bandwidth", "  - id: x\n    type: iperf3\n    protocol: udp\n    bandwidth: 0\n    min_mbps: 1\n    max_loss_pct: 1\n", `bandwidth "0"`},
		{"bad bandwidth", "  - id: x\n    type: iperf3\n    protocol: udp\n    bandwidth: lots\n    min_mbps: 1\n    max_loss_pct: 1\n", `bandwidth "lots"`},
		{"speed", "  - id: x\n    type: link\n    speed_mbps: 999999999\n", "speed_mbps 999999999"},
		{"long duration", "  - id: x\n    type: iperf3\n    duration: 100h\n    min_mbps: 1\n", "duration 100h0m0s: want at most 1h0m0s"},
		{"no id", "  - type: link\n", "no id"},
		{"speed matrix", "  - id: x\n    type: link\n    speeds: [100, 123]\n", "speeds: 123 is not a BASE-T speed"},
		{"identity OUI", "  - id: x\n    type: identity\n    expect_oui: [00:0a]\n", `expect_oui: "00:0a" is not an OUI`},
		{"identity placeholder", "  - id: x\n    type: identity\n    placeholder_macs: [nope]\n", `placeholder_macs: "nope" is not a MAC`},
		{"identity pattern", "  - id: x\n    type: identity\n    serial_pattern: \"ZC-[0-9\"\n", `serial_pattern "ZC-[0-9"`},
		{"identity local as text", "  - id: x\n    type: identity\n    allow_local_mac: sometimes\n", "allow_local_mac"},
		{"phy id", "  - id: x\n    type: phy\n    expect_phy_id: marvell\n", `expect_phy_id "marvell": want registers 2 and 3 as hex`},
		{"phy frames", "  - id: x\n    type: phy\n    loopback: true\n    frames: 5000000\n", "frames 5000000: want 1..1000000"},
		{"stability traffic", "  - id: x\n    type: stability\n    traffic: udp\n", `traffic "udp": want frames, tcp or none`},
		{"stability short", "  - id: x\n    type: stability\n    duration: 10ms\n", "at least 1s"},
		{"stability counter", "  - id: x\n    type: stability\n    ignore: [rx_bogus]\n", "rx_bogus"},
		{"stability size", "  - id: x\n    type: stability\n    size: 20\n", "size 20"},
		{"stability window short", "  - id: x\n    type: stability\n    window: 10ms\n", "at least 1s"},
		{"stability window negative", "  - id: x\n    type: stability\n    window: -1s\n", "want a duration of 0s or more"},
		{"stability window and duration", "  - id: x\n    type: stability\n    window: 5s\n    duration: 10s\n", "give the window only (duration is its former name)"},
	} {
		_, err := Parse([]byte(goodPlan+tc.edit), "plan.yaml")
		var pe *plan.Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"", "want a mapping"},
		{"steps: []\n", "at least one step"},
		{"colour: red\nsteps: []\n", `unknown key "colour"`},
		{"budget: forever\nsteps:\n  - id: a\n    type: link\n", "budget"},
		{"station:\n  report_url: ftp://x/\nsteps:\n  - id: a\n    type: link\n", "report_url"},
		{"steps:\n  - id: a\n    type: iperf3\n    min_mbps: 1\n", "give station.address"},
		{"station:\n  port: 70000\nsteps:\n  - id: a\n    type: link\n", "station.port 70000: want 1..65535"},
		{"station:\n  port: -1\nsteps:\n  - id: a\n    type: link\n", "station.port -1"},
		{"station:\n  reflector_mac: 02:00\nsteps:\n  - id: a\n    type: link\n", "station.reflector_mac"},
		{"steps: [a: [", "plan.yaml"},
		{"steps:\n  - id: a\n    type: stability\n", "give station.address"},
	} {
		_, err := Parse([]byte(tc.in), "plan.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
	if _, err := Load("/nonexistent/plan.yaml"); err == nil || !strings.Contains(err.Error(), "not a built-in plan") {
		t.Errorf("missing plan: %v", err)
	}
}

func FuzzParsePlan(f *testing.F) {
	f.Add([]byte(goodPlan))
	for _, n := range BuiltinNames() {
		b, _ := builtin.ReadFile("plans/" + n + ".yaml")
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b, "fuzz.yaml")
		if err != nil {
			var pe *plan.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		for _, s := range p.Steps {
			if s.Timeout <= 0 || s.ID == "" {
				t.Fatalf("a parsed step without timeout or id: %+v", s)
			}
		}
	})
}

func testPlan(t *testing.T, budget time.Duration, steps ...plan.Step) *plan.Plan {
	for i := range steps {
		if steps[i].Timeout == 0 {
			steps[i].Timeout = plan.Duration(time.Second)
		}
	}
	return &plan.Plan{Name: "t", Budget: plan.Duration(budget), Steps: steps}
}

// fakeStep is a fake step for the runner.
type fakeStep func(ctx context.Context, s *plan.Step) (Outcome, error)

// byType runs each step with the function of its type: fake steps for the runner.
func byType(fns map[string]fakeStep) StepFunc {
	return func(ctx context.Context, s *plan.Step, _ int) (Outcome, error) { return fns[s.Type](ctx, s) }
}

func TestRunner(t *testing.T) {
	var console strings.Builder
	p := testPlan(t, time.Minute,
		plan.Step{ID: "ok", Type: "link"},
		plan.Step{ID: "bad", Type: "doctor"},
		plan.Step{ID: "slow", Type: "tune", Timeout: plan.Duration(100 * time.Millisecond)},
		plan.Step{ID: "hung", Type: "iperf3", Timeout: plan.Duration(100 * time.Millisecond)},
		plan.Step{ID: "gone", Type: "frames"},
		plan.Step{ID: "panic", Type: "counters"},
	)
	r := &Runner{Plan: p, Console: &console, Grace: 200 * time.Millisecond, Do: byType(map[string]fakeStep{
		"link": func(context.Context, *plan.Step) (Outcome, error) {
			return Outcome{Pass: true, Summary: "1000 Mbit/s", Figures: map[string]float64{"speed_mbps": 1000}}, nil
		},
		"doctor": func(context.Context, *plan.Step) (Outcome, error) {
			return Outcome{Pass: false, Summary: "1 failing", Reason: "LINK_HALF_DUPLEX"}, nil
		},
		"tune": func(ctx context.Context, _ *plan.Step) (Outcome, error) { // honours its deadline
			<-ctx.Done()
			return Outcome{}, nil
		},
		"iperf3": func(context.Context, *plan.Step) (Outcome, error) { // ignores it
			time.Sleep(2 * time.Second)
			return Outcome{Pass: true}, nil
		},
		"frames": func(context.Context, *plan.Step) (Outcome, error) {
			return Outcome{}, errors.New("the station 198.18.5.1 does not answer ARP")
		},
		"counters": func(context.Context, *plan.Step) (Outcome, error) { panic("boom") },
	})}
	start := time.Now()
	d := r.Run(context.Background())
	res, failed, figures := d.Steps, d.Failed, d.Figures
	if time.Since(start) > 1500*time.Millisecond {
		t.Errorf("a hung step held the plan for %v", time.Since(start))
	}
	if strings.Join(failed, ",") != "bad,slow,hung,gone,panic" || figures["speed_mbps"] != 1000 || !res[0].Pass {
		t.Errorf("failed %v figures %v", failed, figures)
	}
	for i, want := range []string{"", "LINK_HALF_DUPLEX", "timed out after 100ms", "did not stop; left behind", "does not answer ARP", "step crashed: boom"} {
		if !strings.Contains(res[i].Reason, want) {
			t.Errorf("step %s: reason %q, want %q", res[i].ID, res[i].Reason, want)
		}
	}
	if !strings.Contains(console.String(), "step 2/6 bad        doctor   running (up to ") {
		t.Errorf("no line while the step runs:\n%s", console.String())
	}
	// Each running line says the most the plan can still take: never more than the
	// budget, and less at every step.
	left := regexp.MustCompile(`the plan at most (\S+) more\)`).FindAllStringSubmatch(console.String(), -1)
	if len(left) != 6 {
		t.Errorf("%d lines say the time left, want 6:\n%s", len(left), console.String())
	}
	prev := p.Budget.D() + time.Second
	for _, m := range left {
		d, err := time.ParseDuration(m[1])
		if err != nil || d > prev || d > p.Budget.D() {
			t.Errorf("time left %q after %v (budget %v)", m[1], prev, p.Budget.D())
		}
		prev = d
	}
	if !strings.Contains(console.String(), "step 2/6 bad        doctor   FAIL  1 failing: LINK_HALF_DUPLEX") {
		t.Errorf("console:\n%s", console.String())
	}

	// The budget: steps after it ran out fail without running.
	ran := 0
	p = testPlan(t, 150*time.Millisecond, plan.Step{ID: "a", Type: "tune", Timeout: plan.Duration(time.Second)}, plan.Step{ID: "b", Type: "link"})
	r = &Runner{Plan: p, Grace: 100 * time.Millisecond, Do: byType(map[string]fakeStep{
		"tune": func(ctx context.Context, _ *plan.Step) (Outcome, error) { <-ctx.Done(); return Outcome{}, nil },
		"link": func(context.Context, *plan.Step) (Outcome, error) { ran++; return Outcome{Pass: true}, nil },
	})}
	d = r.Run(context.Background())
	res, failed = d.Steps, d.Failed
	if ran != 0 || len(failed) != 2 || !strings.Contains(res[1].Reason, "budget") {
		t.Errorf("budget: ran %d, failed %v, %+v", ran, failed, res)
	}
}

// TestUploaderSpool: a station that is down at first gets the report once it is up; the
// report is printed between markers meanwhile; a refused report is final and moved aside.
func TestUploaderSpool(t *testing.T) {
	var got atomic.Value
	var up atomic.Bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), "refuse-me") {
			http.Error(w, "bad report: verdict", http.StatusBadRequest)
			return
		}
		got.Store(string(b))
		w.WriteHeader(http.StatusCreated)
	}))
	// Reserve the address, start serving on it only later: the station is down first.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	var console strings.Builder
	u := &Uploader{URL: "http://" + addr + "/api/reports", SpoolDir: filepath.Join(dir, "spool"), Window: 20 * time.Second, Console: &console}
	go func() {
		time.Sleep(1500 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return
		}
		srv.Listener = l
		srv.Start()
		up.Store(true)
	}()
	defer func() {
		if up.Load() {
			srv.Close()
		}
	}()
	body := []byte(`{"id":"SN123-x","verdict":"PASS"}`)
	if err := u.Deliver(context.Background(), "SN123-x", body); err != nil {
		t.Fatalf("Deliver: %v\n%s", err, console.String())
	}
	if got.Load() != string(body) {
		t.Error("the station did not get the report")
	}
	if !strings.Contains(console.String(), ReportBegin+" SN123-x ====\n{") || !strings.Contains(console.String(), ReportEnd+" SN123-x ====") {
		t.Errorf("the report was not printed between markers:\n%s", console.String())
	}
	if ents, _ := os.ReadDir(u.SpoolDir); len(ents) != 0 {
		t.Errorf("delivered report left in the spool: %v", ents)
	}
	// Refused for good: no retry loop; moved to the spool's refused/ folder, the
	// station's reason beside it, so it holds back no later report.
	start := time.Now()
	if err := u.Deliver(context.Background(), "bad", []byte(`{"refuse-me":1}`)); err == nil || !strings.Contains(err.Error(), "refused report bad for good") ||
		!strings.Contains(err.Error(), "moved to "+filepath.Join(u.SpoolDir, "refused", "bad.json")) || time.Since(start) > 5*time.Second {
		t.Errorf("refused report: %v after %v", err, time.Since(start))
	}
	if _, err := os.Stat(filepath.Join(u.SpoolDir, "refused", "bad.json")); err != nil {
		t.Error("a refused report was not kept in refused/")
	}
	if b, err := os.ReadFile(filepath.Join(u.SpoolDir, "refused", "bad.reason")); err != nil || !strings.Contains(string(b), "station answered 4") {
		t.Errorf("the station's reason: %q %v", b, err)
	}
	// Spooled earlier and refused for good, ahead of one the station takes: the flush
	// delivers the second and moves the first aside (before, the first blocked every
	// later report for good).
	old := filepath.Join(u.SpoolDir, "older.json")
	os.WriteFile(old, []byte(`{"refuse-me":2}`), 0o644)
	os.Chtimes(old, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour))
	// Unreachable for the whole window: kept; Flush sends it when the station is back.
	u2 := &Uploader{URL: "http://127.0.0.1:1/api/reports", SpoolDir: u.SpoolDir, Window: 1500 * time.Millisecond}
	if err := u2.Deliver(context.Background(), "later", body); err == nil || !strings.Contains(err.Error(), "kept in") {
		t.Errorf("unreachable: %v", err)
	}
	got.Store("")
	if n, refused, err := u.Flush(context.Background(), ""); n != 1 || err != nil || got.Load() != string(body) || len(refused) != 1 || refused[0] != "older" {
		t.Errorf("Flush: %d %v %v", n, refused, err)
	}
	if ents, _ := os.ReadDir(u.SpoolDir); len(ents) != 1 || ents[0].Name() != "refused" {
		t.Errorf("the spool after the flush: %v", ents)
	}
	if _, err := os.Stat(filepath.Join(u.SpoolDir, "refused", "older.reason")); err != nil {
		t.Errorf("the older report's reason: %v", err)
	}
}

// TestReportIDBounded: a serial of any length makes a report id the station takes (at
// most 128 of its alphabet) and a file name; two long serials that share their first 64
// characters still make two ids.
func TestReportIDBounded(t *testing.T) {
	a, b := strings.Repeat("S", 300)+"1", strings.Repeat("S", 300)+"2"
	for _, s := range []string{"ZC702-0042", "", strings.Repeat("x", 64), strings.Repeat("é/", 120), a} {
		id := serialID(s) + "-20261201T103000.000Z-0123abcd"
		if len(id) > 128 || sanitizeID(id) != id {
			t.Errorf("serial %.20q: id %q (%d)", s, id, len(id))
		}
	}
	if serialID("ZC702-0042") != "ZC702-0042" || serialID(strings.Repeat("x", 64)) != strings.Repeat("x", 64) {
		t.Error("a short serial changed")
	}
	if serialID(a) == serialID(b) || len(serialID(a)) != 64 {
		t.Errorf("long serials: %q %q", serialID(a), serialID(b))
	}
}

func TestSweepStepDefaults(t *testing.T) {
	p, err := Parse([]byte("station:\n  address: 198.18.5.1\nsteps:\n  - id: rings\n    type: sweep\n    knob: rings.rx\n    values: 64..8192\n    measure: [tcp, frames]\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := p.Steps[0].Params.(*Sweep)
	if len(s.values) != 8 || s.Direction != "up" || s.Duration.D() != 3*time.Second || s.Repeat != 1 || s.Size != 512 || s.Rate != "1000pps" {
		t.Errorf("defaults: %+v", s)
	}
	// 8 points of two 3 s measurements, each with time for a link bounce and settling.
	if to := p.Steps[0].Timeout.D(); to < 8*2*3*time.Second || to > 10*time.Minute {
		t.Errorf("timeout %v", to)
	}
	if _, err := Parse([]byte("steps:\n  - id: rings\n    type: sweep\n    knob: rings.rx\n    values: 64\n"), "t.yaml"); err == nil || !strings.Contains(err.Error(), "give station.address") {
		t.Errorf("a sweep without a station: %v", err)
	}
}

// TestStationToken: the token comes from a file or the environment, and every POST
// carries it as a bearer token; a station that refuses it (401) keeps the report spooled.
func TestStationToken(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "token")
	os.WriteFile(f, []byte("0123456789abcdef0123456789abcdef\n"), 0o600)
	t.Setenv("LR_TEST_TOKEN", " fedcba9876543210 ")
	t.Setenv("LR_TEST_BAD", "tok\x1b[2Jen")
	write := func(name, content string, perm os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), perm); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, perm) // beside the umask
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ spec, want, err string }{
		{f, "0123456789abcdef0123456789abcdef", ""},
		{write("b64", "YWJj+/de-_.~==\r\n", 0o400), "YWJj+/de-_.~==", ""},
		{"@LR_TEST_TOKEN", "fedcba9876543210", ""},
		{"@LR_TEST_UNSET", "", "LR_TEST_UNSET is empty or unset"},
		{"@LR_TEST_BAD", "", "is not of a token"},
		{filepath.Join(dir, "none"), "", "no such file"},
		// /etc/shadow's first line, or any file others may read, is never sent.
		{write("shadow", "root:$y$j9T$abc:19000:0:99999:7:::\n", 0o640), "", "chmod 600"},
		{write("world", "0123456789abcdef\n", 0o644), "", "mode 0644"},
		{write("lines", "0123456789abcdef\n# a comment\n", 0o600), "", "more than one line"},
		{write("blank", "two words\n", 0o600), "", "no blanks"},
		{write("empty", "\n", 0o600), "", "1..512"},
		{write("long", strings.Repeat("a", 600), 0o600), "", "longer than a token"},
		{write("equals", "==", 0o600), "", "want a token"},
		{fifo, "", "not a regular file"},
		{dir, "", "not a regular file"},
	} {
		got, err := ReadToken(c.spec)
		if got != c.want || (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %q %v, want %q %q", c.spec, got, err, c.want, c.err)
		}
	}
	// The token goes only over https unless the operator says otherwise.
	for _, c := range []struct {
		tok, url string
		insecure bool
		err      string
	}{
		{"tok", "https://station:8443/api/reports", false, ""},
		{"tok", "http://station:8080/api/reports", false, "--insecure-token"},
		{"tok", "HTTP://station:8080/api/reports", false, "--insecure-token"},
		{"tok", "http://station:8080/api/reports", true, ""},
		{"", "http://station:8080/api/reports", false, ""},
		{"tok", "", false, ""},
	} {
		if err := CheckTokenTransport(c.tok, c.url, c.insecure); (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q over %s (insecure %v): %v, want %q", c.tok, c.url, c.insecure, err, c.err)
		}
	}
	p, err := Parse([]byte("station:\n  report_url: http://198.18.5.1:8080/api/reports\nsteps:\n  - id: link\n    type: link\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Validation{Plan: p, StationToken: "tok", ReportDir: dir}).Run(context.Background()); err == nil || !strings.Contains(err.Error(), "only over https") {
		t.Errorf("a token to an http station: %v", err)
	}
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != "Bearer good-token-0123456" {
			w.WriteHeader(401)
			return
		}
		w.WriteHeader(201)
	}))
	defer srv.Close()
	for _, c := range []struct {
		tok  string
		ok   bool
		left int
	}{{"bad-token-0123456789", false, 1}, {"good-token-0123456", true, 0}} {
		spool := t.TempDir()
		u := &Uploader{URL: srv.URL, SpoolDir: spool, Window: time.Second, Token: c.tok}
		err := u.Deliver(context.Background(), "r1", []byte("{}"))
		ents, _ := os.ReadDir(spool)
		if (err == nil) != c.ok || len(ents) != c.left {
			t.Errorf("token %s: %v, %d spooled", c.tok, err, len(ents))
		}
	}
	if len(auth) != 2 || auth[0] != "Bearer bad-token-0123456789" {
		t.Errorf("Authorization headers sent: %q", auth)
	}
}

// A step with retry runs again while it fails, up to retry times; the report keeps the
// failed attempts, and a step that passes at last passes.
func TestRunnerRetry(t *testing.T) {
	tries := map[string]int{}
	var console strings.Builder
	var started []string
	p := testPlan(t, time.Minute, plan.Step{ID: "flaky", Type: "link", Retry: 2}, plan.Step{ID: "broken", Type: "doctor", Retry: 1}, plan.Step{ID: "once", Type: "tune"})
	r := &Runner{Plan: p, Console: &console, Started: func(i int, s *plan.Step) { started = append(started, fmt.Sprint(i, s.ID)) }, Do: func(ctx context.Context, s *plan.Step, _ int) (Outcome, error) {
		tries[s.ID]++
		if s.ID == "flaky" && tries[s.ID] == 3 {
			return Outcome{Pass: true, Summary: "third time"}, nil
		}
		return Outcome{Summary: fmt.Sprintf("try %d", tries[s.ID]), Reason: "no"}, nil
	}}
	d := r.Run(context.Background())
	res, failed := d.Steps, d.Failed
	if tries["flaky"] != 3 || tries["broken"] != 2 || tries["once"] != 1 || strings.Join(failed, ",") != "broken,once" {
		t.Fatalf("tries %v failed %v", tries, failed)
	}
	if !res[0].Pass || len(res[0].Attempts) != 2 || res[0].Attempts[1].Summary != "try 2" || res[0].Attempts[0].Pass || len(res[0].Attempts[0].Attempts) != 0 {
		t.Errorf("flaky: %+v", res[0])
	}
	if res[1].Pass || len(res[1].Attempts) != 1 || res[1].Summary != "try 2" || len(res[2].Attempts) != 0 {
		t.Errorf("broken %+v once %+v", res[1], res[2])
	}
	if !strings.Contains(console.String(), "step 1/3 flaky      again (retry 2 of 2)") || strings.Join(started, " ") != "0flaky 1broken 2once" {
		t.Errorf("console:\n%s\nstarted %v", console.String(), started)
	}
	if _, err := Parse([]byte(goodPlan+"  - id: x\n    type: link\n    retry: 11\n"), "p.yaml"); err == nil || !strings.Contains(err.Error(), "retry: \"11\": want how many times a failed step runs again, 0..10") {
		t.Errorf("retry 11: %v", err)
	}
}

// TestDeliverOldestFirst: a board whose station was away sends its spooled reports,
// oldest first, before the new one, also when the station's first answer is a failure
// (before, the new report went first and a retest's PASS was stored as attempt 1).
func TestDeliverOldestFirst(t *testing.T) {
	var mu sync.Mutex
	var got []string
	calls := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if calls++; calls == 1 {
			http.Error(w, "restarting", http.StatusServiceUnavailable)
			return
		}
		var rep struct{ ID string }
		json.Unmarshal(b, &rep)
		got = append(got, rep.ID)
		w.WriteHeader(http.StatusCreated)
	}))
	defer hs.Close()
	u := &Uploader{URL: hs.URL, SpoolDir: t.TempDir(), Window: 20 * time.Second}
	for i, id := range []string{"run1", "run2"} {
		p := filepath.Join(u.SpoolDir, id+".json")
		os.WriteFile(p, []byte(`{"id":"`+id+`"}`), 0o644)
		at := time.Now().Add(time.Duration(i-10) * time.Minute)
		os.Chtimes(p, at, at)
	}
	if err := u.Deliver(context.Background(), "run3", []byte(`{"id":"run3"}`)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, " ") != "run1 run2 run3" {
		t.Errorf("the station got %v, want run1 run2 run3", got)
	}
	if ents, _ := os.ReadDir(u.SpoolDir); len(ents) != 0 {
		t.Errorf("left in the spool: %v", ents)
	}
}
