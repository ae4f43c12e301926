// Package validate is linerate's factory validation: it runs a board's plan (package
// plan) step by step, each under its timeout and all within the plan's budget, prints a
// line per step and one verdict line, writes the JSON and JUnit reports and delivers
// them to the station with a spool that loses nothing.
//
// Each step kind is one file here (link.go, doctor.go, tune.go, iperf3.go, frames.go,
// counters.go, sweep.go): its plan fields, checks and defaults, timeout, how it measures
// through nic, doctor, tune and netperf, and its judgement, a pure function of the step
// and what it measured. kinds.go lists them. Nothing here goes through the CLI.
package validate

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/internal/badinput"
	"github.com/zynqnet/linerate/internal/readall"
	"github.com/zynqnet/linerate/nic"
	"github.com/zynqnet/linerate/plan"
)

// Validation is one run of a board's factory plan.
type Validation struct {
	Plan *plan.Plan
	// ReportDir is where the JSON and JUnit reports and the spool go ("" picks
	// /var/lib/linerate/reports, or /run/linerate/reports on a read-only root).
	ReportDir string
	// StationURL overrides the plan's station.report_url; StationToken is the bearer
	// token its POSTs carry ("": none).
	StationURL, StationToken string
	// InsecureToken lets the token go over plain http (by default only over https).
	InsecureToken bool
	// StationTLS checks an https station (nil: the system's roots).
	StationTLS *tls.Config
	// Serial overrides the board's serial (device tree, SoC, else from the MAC).
	Serial string
	// AskSerial asks the operator for the serial on Input (a barcode scanner types it
	// and Enter), again until it matches the plan's serial_pattern.
	AskSerial bool
	Input     io.Reader
	// Fixture names the test fixture (default: linerate.fixture=, the plan's fixture,
	// else the station names its port).
	Fixture string
	// Root is where /sys and /proc are read ("" or "/": this system).
	Root string
	// API is the ethtool API (nic.APIAuto, ...); StateDir holds tune's journals ("":
	// tune's default).
	API, StateDir string
	// Version is the linerate that runs, for the report.
	Version string
	// UploadWindow is how long a report is re-sent to a station that does not take it.
	UploadWindow time.Duration
	// Console gets a line per step, the verdict line and the delivery's progress.
	Console io.Writer
}

// Result is a finished run: the report, its JSON, and whether it could be written.
type Result struct {
	Report *plan.Report
	JSON   []byte
	// WriteErr is why the reports could not be written to ReportDir (they were then
	// delivered or spooled all the same).
	WriteErr error
}

// run is one run's state, shared by its steps.
type run struct {
	*Validation
	board    *board.Board
	counters map[string]map[string]uint64 // each port's error counters at the start
	doctor   json.RawMessage
	cleanup  []func()
	// serial and where it came from, as the header found them; the MAC's source as the
	// identity step found it.
	serial, serialSource, macSource string
}

// Env is what a step runs with: the run's shared state, the step's id (its figures are
// named after it: in a multi-port plan with the port's interface), and the port under
// test with its station; a step of the whole board (a tune across the ports, a loop)
// has Ports, the first of them as Iface.
type Env struct {
	*run
	ID      string
	Iface   string
	Station plan.Station
	Ports   []plan.Port
}

// do runs one step of the plan with its kind, on one port (its index) or, for a step of
// the whole board, on all of them (port -1).
func (r *run) do(ctx context.Context, s *plan.Step, port int) (Outcome, error) {
	k, ok := s.Params.(Kind)
	if !ok {
		return Outcome{}, fmt.Errorf("step %s: type %s was not parsed with linerate's step kinds", s.ID, s.Type)
	}
	ports := r.Plan.Ports
	if len(ports) == 0 {
		ports = []plan.Port{{Interface: r.Plan.Interface, Station: r.Plan.Station}}
	}
	e := Env{run: r, ID: s.ID, Iface: ports[0].Interface, Station: ports[0].Station, Ports: ports}
	if port >= 0 {
		e.Iface, e.Station, e.Ports = ports[port].Interface, ports[port].Station, ports[port:port+1]
		if r.Plan.Multi() {
			e.ID = s.ID + "." + e.Iface
		}
	}
	return k.Run(ctx, e)
}

// Run takes the plan's steps in order and returns the report, written to ReportDir and
// delivered to the station (or spooled). A bad plan (unknown board) is an error before
// any step runs; everything after that ends in a report.
func (v *Validation) Run(ctx context.Context) (*Result, error) {
	if v.Root == "" {
		v.Root = "/"
	}
	if v.Console == nil {
		v.Console = io.Discard
	}
	if v.Fixture != "" {
		if err := plan.CheckName(v.Fixture); err != nil {
			return nil, badinput.Errorf("--fixture %q: %v", v.Fixture, err)
		}
	}
	if err := CheckTokenTransport(v.StationToken, cmp.Or(v.StationURL, v.Plan.Station.ReportURL), v.InsecureToken); err != nil {
		return nil, badinput.Errorf("%v", err)
	}
	r := &run{Validation: v}
	start := time.Now()
	rep, err := r.header(ctx, start)
	if err != nil {
		return nil, err
	}
	up := r.uploader()
	r.flushSpool(ctx, up)
	live := plan.LiveEvent{ID: rep.ID, Board: rep.Board, Serial: rep.Serial, MAC: rep.MAC, Fixture: rep.Fixture, Plan: v.Plan.Name,
		Budget: v.Plan.Budget.D().Seconds(), Event: "start", Steps: len(v.Plan.Steps)}
	up.Live(live)
	runner := &Runner{Plan: v.Plan, Console: v.Console, Do: r.do, Started: func(i int, s *plan.Step) {
		live.Event, live.Step, live.Index = "step", s.ID, i+1
		up.Live(live)
	}}
	r.runSteps(ctx, runner, rep)
	rep.Doctor, rep.MACSource = r.doctor, r.macSource
	rep.Show = r.show()
	settle(rep)
	r.portVerdicts(rep)
	rep.Seconds = time.Since(start).Seconds()
	return r.finish(ctx, rep, up)
}

// runSteps runs the plan's steps and then the cleanups (the tune step's revert). Whatever
// goes wrong in between, the run goes on to its verdict and report: a crash outside a
// step fails the run with the crash as the reason.
func (r *run) runSteps(ctx context.Context, runner *Runner, rep *plan.Report) {
	defer func() {
		for i := len(r.cleanup) - 1; i >= 0; i-- {
			r.cleanup[i]()
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			rep.Steps = append(rep.Steps, plan.StepResult{ID: "internal", Type: "internal", Summary: fmt.Sprintf("linerate failed: %v", p), Reason: fmt.Sprintf("internal error: %v", p)})
		}
	}()
	rep.Steps, _, rep.Figures = runner.Run(ctx)
}

// portVerdicts gives a multi-port report its verdict per port: a port fails with the
// steps that failed on it and the board's steps that concern it.
func (r *run) portVerdicts(rep *plan.Report) {
	if !r.Plan.Multi() {
		return
	}
	rep.Ports = nil
	for _, port := range r.Plan.Ports {
		pr := plan.PortReport{Interface: port.Interface, Verdict: "PASS", Failed: []string{}}
		pr.MAC, _ = nic.ReadFile(r.Root, filepath.Join("sys/class/net", port.Interface, "address"))
		for _, st := range rep.Steps {
			if !st.Pass && st.Concerns(port.Interface) {
				pr.Failed = append(pr.Failed, strings.TrimSuffix(st.ID, "."+port.Interface))
			}
		}
		if len(pr.Failed) > 0 {
			pr.Verdict = "FAIL"
		}
		rep.Ports = append(rep.Ports, pr)
	}
}

// settle makes the report one that can be written and that the station takes: a
// measurement outside its unit's range (plan.CheckMeasure; NaN and infinities, which
// JSON has not, included) fails its step with an internal error as the reason, instead
// of leaving the run without a report or with one the station refuses; then the failed
// list and the verdict follow from the steps.
func settle(rep *plan.Report) {
	rep.Tidy()
	for i := range rep.Steps {
		st := &rep.Steps[i]
		for k, v := range st.Measured {
			if err := plan.CheckMeasure(k, v); err != nil {
				delete(st.Measured, k)
				st.Pass = false
				st.Reason = fmt.Sprintf("internal error: %v, not a number a report can hold", err)
			}
		}
	}
	for k, v := range rep.Figures {
		if plan.CheckMeasure(k, v) != nil {
			delete(rep.Figures, k)
		}
	}
	rep.Failed = []string{}
	for _, st := range rep.Steps {
		if !st.Pass {
			rep.Failed = append(rep.Failed, st.ID)
		}
	}
	rep.Verdict = "PASS"
	if len(rep.Failed) > 0 {
		rep.Verdict = "FAIL"
	}
}

// header identifies the board and starts the report.
func (r *run) header(ctx context.Context, start time.Time) (*plan.Report, error) {
	p := r.Plan
	id := board.ReadIdentity(r.Root)
	if p.Board == "auto" {
		r.board = board.Detect(id.Compatible)
	} else if b, err := board.Lookup(p.Board); err == nil {
		r.board = b
	} else {
		return nil, &plan.Error{Source: p.Source, Msg: "board: " + err.Error()}
	}
	rep := &plan.Report{Schema: plan.SchemaVersion, Interface: p.Interface, Linerate: r.Version, Started: start.UTC(), Plan: p,
		Figures: map[string]float64{}, Failed: []string{}, Board: "unknown"}
	if r.board != nil {
		rep.Board, rep.Model = r.board.Name, r.board.Model
	}
	if id.Model != "" {
		rep.Model = id.Model
	}
	rep.MAC, _ = nic.ReadFile(r.Root, filepath.Join("sys/class/net", p.Interface, "address"))
	rep.Serial, rep.SerialSource = r.pickSerial(id, rep.MAC)
	if r.AskSerial {
		s, err := r.askSerial()
		if err != nil {
			return nil, err
		}
		rep.Serial, rep.SerialSource = s, board.SerialOperator
	}
	r.serial, r.serialSource = rep.Serial, rep.SerialSource
	rep.Fixture = cmp.Or(r.Fixture, id.Fixture, p.Fixture)
	if t, ok := stationTime(ctx, r.StationTLS, p.Station.ReportURL, r.StationURL); ok && start.Year() < 2020 {
		// A board without a real-time clock boots in 1970: take the time of day from the
		// station's HTTP Date header, for the report only (the system clock is left alone).
		rep.Started = t.UTC()
		fmt.Fprintf(r.Console, "linerate validate: the board's clock says %s; the report uses the station's time, %s\n", start.UTC().Format(time.RFC3339), rep.Started.Format(time.RFC3339))
	}
	// The milliseconds keep two runs of one board in one second apart, the boot id two
	// boots whose clocks both start at 1970.
	rep.ID = fmt.Sprintf("%s-%s-%s", serialID(rep.Serial), rep.Started.Format("20060102T150405.000Z"), sanitizeID(bootID(r.Root)))
	fmt.Fprintf(r.Console, "linerate validate: plan %s (%s), board %s, serial %s, %s %s, %d steps, budget %v\n",
		p.Name, p.Source, rep.Board, rep.Serial, p.Interface, orDash(rep.MAC), len(p.Steps), p.Budget.D())
	r.counters = map[string]map[string]uint64{}
	for _, port := range p.Ports {
		r.counters[port.Interface], _ = errorCounters(r.Root, r.API, port.Interface)
	}
	if p.Multi() {
		var names []string
		for _, port := range p.Ports {
			names = append(names, port.Interface)
		}
		fmt.Fprintf(r.Console, "linerate validate: %d ports: %s\n", len(names), strings.Join(names, ", "))
	}
	return rep, nil
}

func (r *run) uploader() *Uploader {
	dir := r.ReportDir
	if dir == "" {
		dir = defaultReportDir()
		r.ReportDir = dir
	}
	up := &Uploader{URL: r.Plan.Station.ReportURL, SpoolDir: filepath.Join(dir, "spool"), Window: r.UploadWindow, Console: r.Console, Token: r.StationToken,
		Client: NewClient(r.StationTLS, 10*time.Second)}
	if r.StationURL != "" {
		up.URL = r.StationURL
	}
	return up
}

// flushSpool sends the reports an earlier run could not deliver first.
func (r *run) flushSpool(ctx context.Context, up *Uploader) {
	if up.URL == "" {
		return
	}
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if n, refused, err := up.Flush(fctx); n > 0 || len(refused) > 0 || err != nil {
		suffix := ""
		if len(refused) > 0 {
			suffix = fmt.Sprintf("; %d refused for good (%s), moved to %s", len(refused), strings.Join(refused, ", "), filepath.Join(up.SpoolDir, "refused"))
		}
		if err != nil {
			suffix += "; the rest stay spooled: " + err.Error()
		}
		fmt.Fprintf(r.Console, "linerate validate: spool: %d earlier report(s) delivered%s\n", n, suffix)
	}
}

// show reads the port as 'linerate show --json' does, for the report.
func (r *run) show() json.RawMessage {
	rd, closeFn, err := nic.Open(liveOrRoot(r.Root), r.API)
	if err != nil {
		return nil
	}
	defer closeFn()
	ifcs, err := rd.Read(r.Plan.Interface)
	if err != nil {
		return nil
	}
	b, err := json.Marshal(ifcs)
	if err != nil {
		return nil
	}
	return b
}

// finish offers the report to the station, writes the reports, prints the verdict line
// and delivers the JSON.
func (r *run) finish(ctx context.Context, rep *plan.Report, up *Uploader) (*Result, error) {
	body, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		// Nothing settle knows of; the verdict line and a report still go out.
		rep.Steps = append(rep.Steps, plan.StepResult{ID: "internal", Type: "internal", Summary: "the report could not be encoded", Reason: "internal error: " + err.Error()})
		rep.Doctor, rep.Show = nil, nil
		for i := range rep.Steps {
			rep.Steps[i].Detail = nil
		}
		settle(rep)
		if body, err = json.MarshalIndent(rep, "", "  "); err != nil {
			return nil, err
		}
	}
	delivered, refused, body := r.offer(ctx, rep, up, body)
	junit, err := rep.JUnit()
	if err != nil {
		junit = nil
		fmt.Fprintf(r.Console, "linerate validate: JUnit report: %v\n", err)
	}
	dir := r.ReportDir
	werr := os.MkdirAll(dir, 0o755)
	if werr == nil {
		werr = atomicfile.Write(filepath.Join(dir, rep.ID+".json"), body, 0o644)
		if junit != nil {
			werr = errors.Join(werr, atomicfile.Write(filepath.Join(dir, rep.ID+".xml"), junit, 0o644))
		}
	}
	if werr != nil {
		fmt.Fprintf(r.Console, "linerate validate: cannot write the reports to %s: %v\n", dir, werr)
	} else {
		fmt.Fprintf(r.Console, "linerate validate: reports %s.json and %s.xml in %s\n", rep.ID, rep.ID, dir)
	}
	fmt.Fprintln(r.Console, rep.VerdictLine())
	switch {
	case delivered:
		fmt.Fprintf(r.Console, "linerate validate: report %s delivered to %s (attempt 1)\n", rep.ID, up.URL)
	case refused:
	case up.URL != "" || werr != nil:
		if err := up.Deliver(ctx, rep.ID, body); err != nil {
			fmt.Fprintf(r.Console, "linerate validate: %v\n", err)
		}
	}
	return &Result{Report: rep, JSON: body, WriteErr: werr}, nil
}

// offer is the report's first delivery, before the verdict: a station that refuses it
// for a reason (a duplicate MAC under --mac-policy reject) fails the run, and the
// verdict line names why; a station it cannot reach leaves the verdict as it is, and the
// report is spooled and re-sent after it.
func (r *run) offer(ctx context.Context, rep *plan.Report, up *Uploader, body []byte) (delivered, refused bool, out []byte) {
	if up.URL == "" {
		return false, false, body
	}
	final, err := up.post(ctx, body)
	switch {
	case err == nil:
		return true, false, body
	case !final:
		return false, false, body
	}
	id := "station-refused"
	if strings.Contains(err.Error(), "duplicate MAC") {
		id = "duplicate-mac"
	}
	fmt.Fprintf(r.Console, "linerate validate: the station refused report %s: %v\n", rep.ID, err)
	rep.Steps = append(rep.Steps, plan.StepResult{ID: id, Type: "station", Summary: "the station refused the report", Reason: err.Error()})
	settle(rep)
	r.portVerdicts(rep)
	if b, jerr := json.MarshalIndent(rep, "", "  "); jerr == nil {
		body = b
	}
	return false, true, body
}

// stationTime reads the time of day from the station's HTTP Date header.
func stationTime(ctx context.Context, tc *tls.Config, urls ...string) (time.Time, bool) {
	c := NewClient(tc, 3*time.Second)
	for _, u := range urls {
		if u == "" {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, u, nil)
		if err != nil {
			continue
		}
		resp, err := c.Do(req)
		if err != nil {
			continue
		}
		resp.Body.Close()
		if t, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// serial is the board's serial and where it came from: the operator's (--serial, the
// console prompt), then the system's (kernel command line, device tree), the EEPROM's
// where the board has one, the SoC's, else one made of the MAC.
func (r *run) pickSerial(id board.Identity, mac string) (string, string) {
	switch {
	case r.Serial != "":
		return r.Serial, board.SerialOperator
	case id.Serial != "" && id.SerialSource != board.SerialSoC:
		return id.Serial, id.SerialSource
	}
	if r.board != nil && r.board.EEPROM != nil {
		if d, err := r.board.EEPROM.Read(r.Root); err == nil && d.Serial != "" {
			return d.Serial, board.SerialEEPROM
		}
	}
	switch {
	case id.Serial != "":
		return id.Serial, id.SerialSource
	case mac != "":
		return macSerial(mac), board.SerialMAC
	}
	return "unknown", ""
}

// askSerial asks the operator for the serial until one fits: the plan's identity step's
// serial_pattern when it has one, else a name a report can carry.
func (r *run) askSerial() (string, error) {
	if r.Input == nil {
		return "", errors.New("--ask-serial: no console to ask on")
	}
	var pattern *regexp.Regexp
	for _, s := range r.Plan.Steps {
		if id, ok := s.Params.(*Identity); ok && id.serial != nil {
			pattern = id.serial
		}
	}
	in := bufio.NewScanner(r.Input)
	in.Buffer(make([]byte, 256), 256)
	for {
		fmt.Fprint(r.Console, "linerate validate: scan or type the board's serial, then Enter: ")
		if !in.Scan() {
			if err := in.Err(); err != nil {
				return "", fmt.Errorf("reading the serial: %w (a line of at most 256 characters)", err)
			}
			return "", errors.New("reading the serial: the console closed")
		}
		s := strings.TrimSpace(strings.TrimPrefix(in.Text(), "\ufeff"))
		switch err := plan.CheckName(s); {
		case err != nil:
			fmt.Fprintf(r.Console, "linerate validate: %q is not a serial: %v; again\n", s, err)
		case pattern != nil && !pattern.MatchString(s):
			fmt.Fprintf(r.Console, "linerate validate: %q does not match the plan's serial_pattern; again\n", s)
		default:
			return s, nil
		}
	}
}

// bootID is the first 8 characters of the kernel's boot id, else of a random number.
func bootID(root string) string {
	if b, err := readall.File(filepath.Join(root, "proc/sys/kernel/random/boot_id"), readall.MaxSys); err == nil && len(b) >= 8 {
		return string(b[:8])
	}
	return fmt.Sprintf("%08x", rand.Uint32())
}

func defaultReportDir() string {
	for _, d := range []string{"/var/lib/linerate", "/run/linerate"} {
		if err := os.MkdirAll(filepath.Join(d, "reports"), 0o755); err == nil {
			probe := filepath.Join(d, "reports", ".probe")
			if f, err := os.Create(probe); err == nil {
				f.Close()
				os.Remove(probe)
				return filepath.Join(d, "reports")
			}
		}
	}
	return filepath.Join(os.TempDir(), "linerate-reports")
}

func macSerial(mac string) string {
	if mac == "" {
		return ""
	}
	return "mac-" + strings.ReplaceAll(mac, ":", "")
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// serialID is the serial as a report id begins with it: of the id's alphabet, and at
// most maxSerialID characters, a longer one cut and told apart by a hash of the whole,
// so every report id is at most 97 characters (the station takes 128) and a file name.
func serialID(serial string) string {
	s := sanitizeID(serial)
	if len(s) <= maxSerialID {
		return s
	}
	sum := sha256.Sum256([]byte(serial))
	return s[:maxSerialID-17] + "_" + hex.EncodeToString(sum[:8])
}

const maxSerialID = 64

func sanitizeID(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// liveOrRoot is nic.Open's root: "" for the live system.
func liveOrRoot(root string) string {
	if root == "/" {
		return ""
	}
	return root
}
