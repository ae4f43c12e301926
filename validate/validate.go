// Package validate is linerate's factory validation: it runs a board's plan (package
// plan) step by step, each under its timeout and all within the plan's budget, prints a
// line per step and one verdict line, writes the JSON and JUnit reports and delivers
// them to the station with a spool that loses nothing.
//
// Each step kind is one file here (link.go, identity.go, phy.go, doctor.go, tune.go,
// iperf3.go, frames.go, loop.go, stability.go, counters.go, sweep.go): its plan fields,
// checks and defaults, timeout, how it measures through nic, doctor, tune and netperf,
// and its judgement, a pure function of the step and what it measured. kinds.go lists
// them. A step is given an Env (its port, its station, the plan's settings) and returns
// an Outcome; the run assembles the report from the outcomes, port by port, and the
// verdict is plan's rule (plan.Report.Judge). This file runs a plan; identify.go says
// who the board is, clock.go what time it is, deliver.go where the report goes.
// Nothing here goes through the CLI.
package validate

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"cmp"
	"crypto/tls"
	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/internal/badinput"
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
	// Operator is who tests the board (default: linerate.operator=, the plan's); with
	// AskOperator the console asks for it first.
	Operator    string
	AskOperator bool
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

// run is one run's state: what the header read before the first step. Steps see it
// only through the Env each is given.
type run struct {
	*Validation
	board    *board.Board
	counters map[string]map[string]uint64 // each port's error counters at the start
	serial   string
	// serialSource says where the serial came from.
	serialSource string
	console      io.Writer // the Validation's Console, a line at a time
	in           *bufio.Scanner
	link         *linkWatch     // the ports' links from the first step to the last (nil: not watched)
	behind       sync.WaitGroup // what steps left to finish behind them (Env.behind)
	// clock brings the station's time of day where the board has none (nil: it has);
	// stamp waits for it once and gives the report its id.
	clock     chan time.Time
	stampOnce sync.Once
	clockNote string // the console's line on the clock, said at the run's end
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
	for flag, name := range map[string]string{"--fixture": v.Fixture, "--operator": v.Operator} {
		if err := plan.CheckName(name); name != "" && err != nil {
			return nil, badinput.Errorf("%s %q: %v", flag, name, err)
		}
	}
	if err := CheckTokenTransport(v.StationToken, cmp.Or(v.StationURL, v.Plan.Station.ReportURL), v.InsecureToken); err != nil {
		return nil, badinput.Errorf("%v", err)
	}
	r := &run{Validation: v, console: &lineWriter{w: v.Console}}
	if err := r.checkInterfaces(); err != nil {
		return nil, err
	}
	var ifaces []string
	for _, p := range r.ports() {
		ifaces = append(ifaces, p.Interface)
	}
	if v.Root == "/" {
		revertDeadTunes(v.StateDir, v.API, ifaces, r.console)
	}
	start := time.Now()
	// The watch starts with the run, and reads its ports while the header reads who the
	// board is; after the header where that asks the operator, so that no link event
	// comes between a prompt and its answer.
	early := !v.AskSerial && !v.AskOperator
	if v.Root == "/" && early {
		r.link = watchLinks(ctx, ifaces, v.API, r.console)
		defer r.link.close()
	}
	rep, err := r.header(ctx, start)
	if err != nil {
		return nil, err
	}
	up := r.uploader()
	up.LiveID = func() string { return r.stamp(rep) }
	r.flushSpool(ctx, up)
	live := plan.LiveEvent{Board: rep.Board, Serial: rep.Serial, MAC: rep.MAC, Fixture: rep.Fixture, Plan: v.Plan.Name,
		Budget: v.Plan.Budget.D().Seconds(), Event: "start", Steps: len(v.Plan.Steps)}
	if v.Plan.Multi() {
		for _, p := range v.Plan.Ports {
			mac, _ := nic.ReadFile(v.Root, filepath.Join("sys/class/net", p.Interface, "address"))
			live.Ports = append(live.Ports, plan.LivePort{Interface: p.Interface, MAC: mac, Station: p.Station.Address})
		}
	}
	up.Live(live)
	if v.Root == "/" && !early {
		r.link = watchLinks(ctx, ifaces, v.API, r.console)
		defer r.link.close()
	}
	r.link.waitReady()
	r.baseline()
	runner := &Runner{Plan: v.Plan, Console: r.console, Do: r.do, Link: r.link, UndoLater: true, Started: func(i int, s *plan.Step) {
		live.Event, live.Step, live.Index = "step", s.ID, i+1
		up.Live(live)
	}}
	// What the steps changed (a tune) is given back once the verdict line is out (finish),
	// so the verdict does not wait on it; here however the run ends.
	defer runner.Undo()
	defer r.behind.Wait()
	d := r.runSteps(ctx, runner)
	r.link.close()
	r.stamp(rep)
	fmt.Fprint(r.console, r.clockNote)
	r.assemble(rep, d)
	rep.WindowS = d.WindowS
	rep.Show = r.show() // the port as the steps measured it: its tune is given back after
	settle(rep)
	rep.Seconds = time.Since(start).Seconds()
	return r.finish(ctx, rep, up, runner.Undo)
}

// baseline keeps each port's error counters before the first step, the counters
// step's baseline: as the link watch first read them, or read here where no watch runs.
func (r *run) baseline() {
	r.counters = map[string]map[string]uint64{}
	for _, p := range r.ports() {
		if c, ok := r.link.Counters(p.Interface); ok {
			r.counters[p.Interface] = c
			continue
		}
		r.counters[p.Interface], _ = errorCounters(r.Root, r.API, p.Interface)
	}
}

// runSteps runs the plan's steps (what they changed is given back after the verdict).
// Whatever goes wrong in between, the run goes on to its verdict and report: a crash
// outside a step fails the run with the crash as the reason.
func (r *run) runSteps(ctx context.Context, runner *Runner) (d Done) {
	defer func() {
		if p := recover(); p != nil {
			d = runner.done
			d.Steps = append(d.Steps, plan.StepResult{ID: "internal", Type: "internal", Summary: fmt.Sprintf("linerate failed: %v", p), Reason: fmt.Sprintf("internal error: %v", p)})
		}
	}()
	return runner.Run(ctx)
}

// checkInterfaces refuses a plan naming an interface this machine lacks, before any
// step: every step would fail on it, and the upload be retried, for nothing. Bad input
// (exit 2), naming what is missing and what there is.
func (r *run) checkInterfaces() error {
	var missing []string
	for _, p := range r.ports() {
		if _, err := os.Lstat(filepath.Join(r.Root, "sys/class/net", p.Interface)); err != nil && !slices.Contains(missing, p.Interface) {
			missing = append(missing, p.Interface)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var have []string
	ents, _ := os.ReadDir(filepath.Join(r.Root, "sys/class/net"))
	for _, e := range ents {
		if e.Name() != "lo" {
			have = append(have, e.Name())
		}
	}
	return badinput.Errorf("plan %s: no interface %s on this machine (it has %s): name the board's port in the plan's interface: or ports:",
		cmp.Or(r.Plan.Name, "(unnamed)"), strings.Join(missing, ", "), cmp.Or(strings.Join(have, ", "), "none but lo"))
}

// ports are the plan's ports (one for a plan of one interface).
func (r *run) ports() []plan.Port { return portsOf(r.Plan) }

// portsOf are a plan's ports: its ports:, or its one interface with its station.
func portsOf(p *plan.Plan) []plan.Port {
	if len(p.Ports) == 0 {
		return []plan.Port{{Interface: p.Interface, Station: p.Station}}
	}
	return p.Ports
}

// do runs one step of the plan with its kind, on one port (its index) or, for a step of
// the whole board, on all of them (port -1).
func (r *run) do(ctx context.Context, s *plan.Step, port int) (Outcome, error) {
	k, ok := s.Params.(Kind)
	if !ok {
		return Outcome{}, fmt.Errorf("step %s: type %s was not parsed with linerate's step kinds", s.ID, s.Type)
	}
	return k.Run(ctx, r.env(s, port))
}

// env is what step s is given on port (-1: the board).
func (r *run) env(s *plan.Step, port int) Env {
	ports := r.ports()
	e := Env{ID: s.ID, Iface: ports[0].Interface, Station: ports[0].Station, Ports: ports, Multi: r.Plan.Multi(), First: true,
		Board: r.board, Serial: r.serial, SerialSource: r.serialSource, Root: r.Root, API: r.API, StateDir: r.StateDir, Version: r.Version,
		Console: r.console, link: r.link, behind: &r.behind}
	if port >= 0 {
		e.Iface, e.Station, e.Ports, e.First = ports[port].Interface, ports[port].Station, ports[port:port+1], port == 0
		if e.Multi {
			e.ID = s.ID + "." + e.Iface
		}
	}
	e.Counters = maps.Clone(r.counters[e.Iface])
	for _, p := range ports {
		e.BoardPorts = append(e.BoardPorts, p.Interface)
	}
	return e
}

// assemble makes the report of what the steps gave: their results and figures, and
// what each found of its port (MAC and its source, doctor findings, figures), each port's
// in its own place in a multi-port report.
func (r *run) assemble(rep *plan.Report, d Done) {
	rep.Steps, rep.Figures = d.Steps, d.Figures
	if rep.Figures == nil {
		rep.Figures = map[string]float64{}
	}
	ports := r.ports()
	found := make([]plan.PortReport, len(ports))
	for i, p := range ports {
		found[i].Interface = p.Interface
		found[i].MAC, _ = nic.ReadFile(r.Root, filepath.Join("sys/class/net", p.Interface, "address"))
	}
	for _, f := range d.Found {
		if f.Port < 0 || f.Port >= len(found) {
			continue
		}
		p := &found[f.Port]
		p.MAC, p.MACSource = cmp.Or(f.MAC, p.MAC), cmp.Or(f.MACSource, p.MACSource)
		if f.Doctor != nil {
			p.Doctor = f.Doctor
		}
		for k, v := range f.Figures {
			if p.Figures == nil {
				p.Figures = map[string]float64{}
			}
			p.Figures[k] = v
		}
	}
	rep.MACSource = found[0].MACSource
	if !r.Plan.Multi() {
		rep.Doctor = found[0].Doctor
		return
	}
	rep.Ports = found
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

// liveOrRoot is nic.Open's root: "" for the live system.
func liveOrRoot(root string) string {
	if root == "/" {
		return ""
	}
	return root
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
	rep.Judge()
}

// lineWriter writes each Write whole: the console of steps on every port at once.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
