package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zynqnet/linerate/internal/nstest"
	"github.com/zynqnet/linerate/station"
	"github.com/zynqnet/linerate/validate"
)

// TestValidateInNamespaces runs validate in a "board" namespace against linerate
// station in a "station" namespace over a veth (both as processes, as on a line): a
// passing plan, a plan with an unreachable threshold, and a station that is down when
// the board reports and up a few seconds later.
func TestValidateInNamespaces(t *testing.T) {
	nstest.Require(t)
	board, st := nstest.New(t), nstest.New(t)
	noIPv6(t, board, st)
	board.Veth(t, "eth0", "st0", st, 1)
	board.Exec(t, "ip", "addr", "add", "198.18.41.2/24", "dev", "eth0")
	st.Exec(t, "ip", "addr", "add", "198.18.41.1/24", "dev", "st0")
	dir := t.TempDir()
	data := filepath.Join(dir, "station")
	plan := func(name, steps string) string {
		p := filepath.Join(dir, name+".yaml")
		os.WriteFile(p, []byte(`name: `+name+`
board: zc702
interface: eth0
budget: 2m
station:
  address: 198.18.41.1
  report_url: http://198.18.41.1:8080/api/reports
steps:
`+steps), 0o644)
		return p
	}
	measure := `  - {id: link, type: link, carrier_within: 5s, speed_mbps: 10000, duplex: full}
  - {id: doctor, type: doctor, fail_on: [LINK_DOWN, RX_ERRORS_RISING]}
  - {id: tcp-up, type: iperf3, protocol: tcp, direction: up, duration: 2s, min_mbps: MIN}
  - {id: tcp-down, type: iperf3, protocol: tcp, direction: down, duration: 2s, min_mbps: 100}
  - {id: frames, type: frames, size: 256, rate: 2000pps, duration: 2s, max_loss_pct: 0, max_p99_us: 100000, cpus: all, hw_timestamps: true}
  - {id: counters, type: counters}
`
	good := plan("good", strings.Replace(measure, "MIN", "100", 1))
	unreachable := plan("unreachable", strings.Replace(measure, "MIN", "1000000", 1))
	reportOnly := plan("report-only", "  - {id: link, type: link, carrier_within: 5s}\n  - {id: counters, type: counters}\n")

	startStation := func() *exec.Cmd {
		cmd, _, _ := linerateIn(t, st, "station", "--listen", "198.18.41.1:8080", "--data", data, "--iperf3", "198.18.41.1:5201", "--reflect", "st0", "--duration", "120s")
		waitListen(st, "8080")
		waitListen(st, "5201")
		return cmd
	}
	stop := func(cmd *exec.Cmd) {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	validate := func(planFile string, extra ...string) (string, int) {
		cmd, out, errOut := linerateIn(t, board, append([]string{"validate", planFile, "--report-dir", filepath.Join(dir, "reports"), "--serial", "NS-0042"}, extra...)...)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Minute):
			cmd.Process.Kill()
			<-done
			t.Fatalf("validate did not end by itself:\n%s\n%s", out, errOut)
		}
		return out.String() + errOut.String(), cmd.ProcessState.ExitCode()
	}
	verdict := regexp.MustCompile(`(?m)^LINERATE (PASS|FAIL) board=zc702 serial=NS-0042 mac=\S+ .* failed=(\S+) elapsed=\S+ windows=\S+ overhead=\S+$`)

	s := startStation()
	out, code := validate(good)
	m := verdict.FindStringSubmatch(out)
	if code != 0 || m == nil || m[1] != "PASS" || m[2] != "-" || !strings.Contains(out, "delivered to http://198.18.41.1:8080/api/reports") {
		t.Fatalf("good plan: exit %d\n%s", code, out)
	}
	if fm := regexp.MustCompile(`frames\s+frames\s+PASS\s+256-byte frames at 2000pps through the reflector: (\d+) of (\d+) back.*hardware timestamps: eth0 has no hardware timestamping`).FindStringSubmatch(out); fm == nil || fm[1] != fm[2] || len(fm[1]) != 4 {
		t.Errorf("frames step (about 4000 of 4000 back):\n%s", out)
	}
	// The doctor judged its rates over the time since the link step passed (at least
	// 0.5 s), not over 2 s of idle link of its own.
	js, _ := filepath.Glob(filepath.Join(dir, "reports", "NS-0042-*.json"))
	var rep struct {
		Doctor struct {
			IntervalS float64 `json:"interval_s"`
		}
	}
	if len(js) == 1 {
		b, _ := os.ReadFile(js[0])
		json.Unmarshal(b, &rep)
	}
	if rep.Doctor.IntervalS < 0.5 || rep.Doctor.IntervalS >= 2 {
		t.Errorf("the doctor's interval from the link step: %v %+v", js, rep)
	}
	out, code = validate(unreachable)
	if m := verdict.FindStringSubmatch(out); code != 1 || m == nil || m[1] != "FAIL" || m[2] != "tcp-up" || !strings.Contains(out, "is below 1e+06") {
		t.Errorf("unreachable threshold: exit %d\n%s", code, out)
	}
	stop(s)

	// The station is down when the board reports: spooled, printed, re-sent; up 3 s later.
	later := make(chan *exec.Cmd, 1)
	go func() {
		time.Sleep(3 * time.Second)
		later <- startStation()
	}()
	out, code = validate(reportOnly, "--upload-window", "40s")
	s = <-later
	if code != 0 || !strings.Contains(out, "==== LINERATE REPORT BEGIN NS-0042-") || !regexp.MustCompile(`delivered to \S+ \(attempt [2-9]\)`).MatchString(out) {
		t.Errorf("station down at first: exit %d\n%s", code, out)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "reports", "spool")); len(ents) != 0 {
		t.Errorf("reports left in the spool: %v", ents)
	}
	stop(s)

	store, err := station.OpenBolt(data)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	list, _ := store.List()
	var verdicts []string
	for _, r := range list {
		verdicts = append(verdicts, r.Verdict)
	}
	if strings.Join(verdicts, " ") != "PASS FAIL PASS" {
		t.Errorf("the station stored %v", verdicts)
	}
	// Every report is on the board too: JSON and JUnit.
	js, _ = filepath.Glob(filepath.Join(dir, "reports", "NS-0042-*.json"))
	xs, _ := filepath.Glob(filepath.Join(dir, "reports", "NS-0042-*.xml"))
	if len(js) != 3 || len(xs) != 3 {
		t.Errorf("report files: %v %v", js, xs)
	}
}

func TestValidateBadPlan(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.yaml")
	os.WriteFile(p, []byte("interface: eth0\nsteps:\n  - id: x\n    type: iperf3\n    duration: 10\n"), 0o644)
	_, stderr, code := runCLI(t, "validate", p)
	if code != 2 || !strings.Contains(stderr, "bad.yaml:5: duration: \"10\": want a duration with its unit") {
		t.Errorf("bad plan: %d %s", code, stderr)
	}
	_, stderr, code = runCLI(t, "validate", filepath.Join(dir, "none.yaml"))
	if code != 2 || !strings.Contains(stderr, "not a built-in plan (qemu-zc702") {
		t.Errorf("missing plan: %d %s", code, stderr)
	}
	// Numbers that are not finite, or out of their range, are refused before any step
	// runs, with their line: exit 2, not a FAIL of the board.
	for _, tc := range []struct{ plan, want string }{
		{"station:\n  address: 198.18.0.9\nsteps:\n  - id: t\n    type: iperf3\n    min_mbps: .nan\n", "bad.yaml:4: step \"t\": min_mbps NaN"},
		{"station:\n  address: 198.18.0.9\n  port: 70000\nsteps:\n  - id: l\n    type: link\n", "station.port 70000"},
		{"station:\n  address: 198.18.0.9\nsteps:\n  - id: f\n    type: frames\n    rate: 0pps\n    max_loss_pct: 1\n", `rate "0pps"`},
		{"station:\n  address: 198.18.0.9\nsteps:\n  - id: f\n    type: frames\n    rate: 1%\n    size: 100000000\n    max_loss_pct: 1\n", "size 100000000"},
	} {
		os.WriteFile(p, []byte(tc.plan), 0o644)
		wantBadInput(t, []string{"validate", p, "--report-dir", filepath.Join(dir, "r")}, tc.want)
	}
	if _, err := os.Stat(filepath.Join(dir, "r")); err == nil {
		t.Error("a refused plan wrote a report")
	}
}

// TestValidateListPrint: --list names every built-in plan with its board, ports and
// steps; --print NAME gives its YAML as shipped, which loads as a plan of one's own; an
// unknown name is exit 2 listing the names.
func TestValidateListPrint(t *testing.T) {
	out, errOut, code := runCLI(t, "validate", "--list")
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "PLAN ") {
		t.Fatalf("--list: exit %d\n%s%s", code, out, errOut)
	}
	for _, name := range validate.BuiltinNames() {
		p, err := validate.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` +` + regexp.QuoteMeta(p.Board) + ` +eth0\S* +` + regexp.QuoteMeta(p.Steps[0].ID) + ` `).MatchString(out) {
			t.Errorf("--list has no line for %s (board %s, first step %s):\n%s", name, p.Board, p.Steps[0].ID, out)
		}
	}
	out, _, code = runCLI(t, "validate", "--print", "zcu102")
	want, _ := validate.BuiltinText("zcu102")
	if code != 0 || out != string(want) {
		t.Errorf("--print zcu102: exit %d, not the plan as shipped:\n%s", code, out)
	}
	file := filepath.Join(t.TempDir(), "mine.yaml")
	os.WriteFile(file, []byte(out), 0o644)
	if p, err := validate.Load(file); err != nil || p.Name != "zcu102" {
		t.Errorf("the printed plan does not load: %v", err)
	}
	_, errOut, code = runCLI(t, "validate", "--print", "zc7020")
	if code != 2 || !strings.Contains(errOut, `no built-in plan "zc7020" (`) || !strings.Contains(errOut, "qemu-zc702-2port") {
		t.Errorf("--print of an unknown plan: exit %d, %q", code, errOut)
	}
}
