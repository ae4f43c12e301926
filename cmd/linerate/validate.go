package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zynqnet/linerate/board"
	"github.com/zynqnet/linerate/doctor"
	"github.com/zynqnet/linerate/internal/atomicfile"
	"github.com/zynqnet/linerate/netperf/frames"
	"github.com/zynqnet/linerate/netperf/iperf3"
	"github.com/zynqnet/linerate/netperf/rawsock"
	"github.com/zynqnet/linerate/netperf/rfc2544"
	"github.com/zynqnet/linerate/validate"
)

const validateUsage = `Usage: linerate validate PLAN [--report-dir DIR] [--station URL] [--serial S] [--json]

Runs a board's factory plan: its steps in order (link, doctor, tune, iperf3, frames,
counters), each with a timeout and the whole plan within its budget, and prints a line
per step with PASS or FAIL and the measured value against its threshold, then exactly
one verdict line:

  LINERATE PASS board=zc702 serial=... mac=... tcp-up_mbps=941.2 ... failed=- elapsed=41.3s

It writes a JSON report (the plan, every step's measurements, doctor's findings and show
of the port) and a JUnit XML report to the report directory, and POSTs the JSON to the
station. A report the station does not take stays in the spool (DIR/spool), is printed
on the console between "==== LINERATE REPORT BEGIN" and "END" lines, is re-sent with
backoff for --upload-window, and again by the next run. Exit 0 on pass, 1 on fail, 2 on
a bad plan.

PLAN is a file, or a built-in plan: %s.

Flags:
  --report-dir DIR    where reports go (default /var/lib/linerate/reports, or
                      /run/linerate/reports on a read-only root)
  --station URL       the station's report URL (default: the plan's station.report_url)
  --serial S          the board's serial number (default: the device tree's
                      serial-number, the SoC's, else one made from the MAC)
  --upload-window D   how long to keep re-sending a report (default 60s)
  --json              print the JSON report on stdout (progress goes to stderr)
`

func validateCommand() command {
	return command{
		name:    "validate",
		summary: "run a board's factory plan: one verdict, reports, upload to the station",
		usage:   fmt.Sprintf(validateUsage, strings.Join(validate.BuiltinNames(), ", ")),
		run: func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
			fs := flag.NewFlagSet("validate", flag.ContinueOnError)
			c := validateConfig{}
			fs.StringVar(&c.reportDir, "report-dir", "", "")
			fs.StringVar(&c.station, "station", "", "")
			fs.StringVar(&c.serial, "serial", "", "")
			fs.DurationVar(&c.window, "upload-window", 60*time.Second, "")
			fs.BoolVar(&c.json, "json", false, "")
			fs.StringVar(&c.root, "root", "/", "")
			pos, err := parseFlags(fs, args)
			if err != nil {
				return err
			}
			if len(pos) != 1 {
				return usageError("give one PLAN (a file or a built-in plan)")
			}
			p, err := validate.Load(pos[0])
			if err != nil {
				return err
			}
			return c.run(ctx, p, stdout, stderr)
		},
	}
}

type validateConfig struct {
	reportDir, station, serial, root string
	window                           time.Duration
	json                             bool
}

// validation is one run's state shared by its steps.
type validation struct {
	plan     *validate.Plan
	iface    string
	board    *board.Board
	console  io.Writer
	counters map[string]uint64 // error counters at the start
	doctor   json.RawMessage
	cleanup  []func()
	root     string
}

func (c *validateConfig) run(ctx context.Context, p *validate.Plan, stdout, stderr io.Writer) error {
	console := stdout
	if c.json {
		console = stderr
	}
	start := time.Now()
	v := &validation{plan: p, iface: p.Interface, console: console, root: c.root}
	rep := &validate.Report{Schema: validate.SchemaVersion, Interface: p.Interface, Linerate: version, Started: start.UTC(), Plan: p, Figures: map[string]float64{}, Failed: []string{}}
	compat := readDTStrings(filepath.Join(c.root, "proc/device-tree/compatible"))
	if p.Board == "auto" {
		v.board = board.Detect(compat)
	} else if b, err := board.Lookup(p.Board); err == nil {
		v.board = b
	} else {
		return &validate.PlanError{Source: p.Source, Msg: "board: " + err.Error()}
	}
	rep.Board = "unknown"
	if v.board != nil {
		rep.Board, rep.Model = v.board.Name, v.board.Model
	}
	if m := readDTString(filepath.Join(c.root, "proc/device-tree/model")); m != "" {
		rep.Model = m
	}
	if ifi, err := net.InterfaceByName(p.Interface); err == nil {
		rep.MAC = ifi.HardwareAddr.String()
	}
	rep.Serial = c.serial
	if rep.Serial == "" {
		rep.Serial = boardSerial(c.root, rep.MAC)
	}
	if t, ok := stationTime(ctx, p.Station.ReportURL, c.station); ok && start.Year() < 2020 {
		// A board without a real-time clock boots in 1970: take the time of day from the
		// station's HTTP Date header, for the report only (the system clock is left alone).
		rep.Started = t.UTC()
		fmt.Fprintf(console, "linerate validate: the board's clock says %s; the report uses the station's time, %s\n", start.UTC().Format(time.RFC3339), rep.Started.Format(time.RFC3339))
	}
	// The boot id keeps two runs of one board apart even when its clock starts at 1970.
	rep.ID = fmt.Sprintf("%s-%s-%s", sanitizeID(rep.Serial), rep.Started.Format("20060102T150405Z"), bootID(c.root))
	fmt.Fprintf(console, "linerate validate: plan %s (%s), board %s, serial %s, %s %s, %d steps, budget %v\n",
		p.Name, p.Source, rep.Board, rep.Serial, p.Interface, orDash(rep.MAC), len(p.Steps), p.Budget.D())
	v.counters = readErrorCounters(c.root, p.Interface)

	dir := c.reportDir
	if dir == "" {
		dir = defaultReportDir()
	}
	up := &validate.Uploader{URL: p.Station.ReportURL, SpoolDir: filepath.Join(dir, "spool"), Window: c.window, Console: console}
	if c.station != "" {
		up.URL = c.station
	}
	if up.URL != "" {
		// Reports an earlier run could not deliver go first.
		fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if n, err := up.Flush(fctx); n > 0 || err != nil {
			fmt.Fprintf(console, "linerate validate: spool: %d earlier report(s) delivered%s\n", n, errSuffix(err))
		}
		cancel()
	}

	r := &validate.Runner{Plan: p, Console: console, Steps: map[string]validate.StepFunc{
		"link": v.link, "doctor": v.doctorStep, "tune": v.tune, "iperf3": v.iperf3, "frames": v.frames, "counters": v.countersStep,
	}}
	rep.Steps, rep.Failed, rep.Figures = r.Run(ctx)
	for i := len(v.cleanup) - 1; i >= 0; i-- {
		v.cleanup[i]()
	}
	rep.Doctor = v.doctor
	var show bytes.Buffer
	if err := run(ctx, []string{"show", "--json", p.Interface}, nil, &show, io.Discard); err == nil {
		rep.Show = json.RawMessage(bytes.TrimSpace(show.Bytes()))
	}
	if rep.Failed == nil {
		rep.Failed = []string{}
	}
	rep.Verdict = "PASS"
	if len(rep.Failed) > 0 {
		rep.Verdict = "FAIL"
	}
	rep.Seconds = time.Since(start).Seconds()
	body, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	junit, err := rep.JUnit()
	if err != nil {
		return err
	}
	var werr error
	if err := os.MkdirAll(dir, 0o755); err != nil {
		werr = err
	} else {
		werr = errors.Join(atomicfile.Write(filepath.Join(dir, rep.ID+".json"), body, 0o644), atomicfile.Write(filepath.Join(dir, rep.ID+".xml"), junit, 0o644))
	}
	if werr != nil {
		fmt.Fprintf(console, "linerate validate: cannot write the reports to %s: %v\n", dir, werr)
	} else {
		fmt.Fprintf(console, "linerate validate: reports %s.json and %s.xml in %s\n", rep.ID, rep.ID, dir)
	}
	fmt.Fprintln(console, rep.VerdictLine())
	if c.json {
		stdout.Write(append(body, '\n'))
	}
	if up.URL != "" || werr != nil {
		if err := up.Deliver(ctx, rep.ID, body); err != nil {
			fmt.Fprintf(console, "linerate validate: %v\n", err)
		}
	}
	if rep.Verdict != "PASS" {
		return &exitError{code: 1, err: fmt.Errorf("FAIL: %s", strings.Join(rep.Failed, ", "))}
	}
	return nil
}

// stationTime reads the time of day from the station's HTTP Date header.
func stationTime(ctx context.Context, urls ...string) (time.Time, bool) {
	for _, u := range urls {
		if u == "" {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		req, err := http.NewRequestWithContext(rctx, http.MethodHead, u, nil)
		if err == nil {
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				if t, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
					cancel()
					return t, true
				}
			}
		}
		cancel()
	}
	return time.Time{}, false
}

// bootID is the first 8 characters of the kernel's boot id, else of a random number.
func bootID(root string) string {
	if b, err := os.ReadFile(filepath.Join(root, "proc/sys/kernel/random/boot_id")); err == nil && len(b) >= 8 {
		return string(b[:8])
	}
	return fmt.Sprintf("%08x", rand.Uint32())
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return "; the rest stay spooled: " + err.Error()
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

func readDTString(p string) string {
	b, _ := os.ReadFile(p)
	return strings.TrimRight(string(b), "\x00\n ")
}

func readDTStrings(p string) []string {
	s := readDTString(p)
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

// boardSerial: the device tree's serial-number (U-Boot sets it from the board's EEPROM
// or the SoC), the SoC's serial (ZynqMP's eFuse DNA through soc0), else one from the MAC.
func boardSerial(root, mac string) string {
	for _, p := range []string{"proc/device-tree/serial-number", "sys/devices/soc0/serial_number"} {
		if s := readDTString(filepath.Join(root, p)); s != "" {
			return s
		}
	}
	if mac != "" {
		return "mac-" + strings.ReplaceAll(mac, ":", "")
	}
	return "unknown"
}

func sanitizeID(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, s)
}

// errorCounters are the interface statistics no healthy run raises.
var errorCounters = []string{"rx_errors", "tx_errors", "rx_crc_errors", "rx_frame_errors", "rx_fifo_errors", "rx_missed_errors",
	"rx_over_errors", "rx_length_errors", "tx_aborted_errors", "tx_carrier_errors", "tx_fifo_errors", "tx_heartbeat_errors", "tx_window_errors", "collisions"}

func readErrorCounters(root, iface string) map[string]uint64 {
	m := map[string]uint64{}
	for _, c := range errorCounters {
		b, err := os.ReadFile(filepath.Join(root, "sys/class/net", iface, "statistics", c))
		if err != nil {
			continue
		}
		if v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
			m[c] = v
		}
	}
	return m
}

func (v *validation) sysfs(name string) string {
	b, _ := os.ReadFile(filepath.Join(v.root, "sys/class/net", v.iface, name))
	return strings.TrimSpace(string(b))
}

func (v *validation) link(ctx context.Context, s *validate.Step) (validate.Outcome, error) {
	start := time.Now()
	deadline := start.Add(s.CarrierWithin.D())
	for v.sysfs("carrier") != "1" {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return validate.Outcome{Summary: fmt.Sprintf("no carrier within %v (operstate %s)", s.CarrierWithin.D(), orDash(v.sysfs("operstate"))), Reason: "no link: check the cable and the switch port"}, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	after := time.Since(start)
	speed, _ := strconv.Atoi(v.sysfs("speed"))
	duplex := v.sysfs("duplex")
	o := validate.Outcome{Pass: true, Measured: map[string]float64{"carrier_s": after.Seconds(), "speed_mbps": float64(speed)}}
	o.Summary = fmt.Sprintf("carrier after %.1fs, %d Mbit/s %s", after.Seconds(), speed, orDash(duplex))
	var want []string
	if s.SpeedMbps > 0 {
		want = append(want, fmt.Sprintf("%d Mbit/s", s.SpeedMbps))
		if speed != s.SpeedMbps {
			o.Pass, o.Reason = false, fmt.Sprintf("link at %d Mbit/s, want %d (cable, PHY or autonegotiation)", speed, s.SpeedMbps)
		}
	}
	if s.Duplex != "" {
		want = append(want, s.Duplex)
		if duplex != s.Duplex {
			o.Pass, o.Reason = false, fmt.Sprintf("%s duplex, want %s", orDash(duplex), s.Duplex)
		}
	}
	if len(want) > 0 {
		o.Summary += " (want " + strings.Join(want, " ") + ")"
	}
	o.Figures = map[string]float64{"speed_mbps": float64(speed)}
	return o, nil
}

func (v *validation) doctorStep(ctx context.Context, s *validate.Step) (validate.Outcome, error) {
	before, after, err := sampleLive(ctx, "auto", 2*time.Second, []string{v.iface}, nil)
	if err != nil {
		return validate.Outcome{}, err
	}
	rep, err := doctor.Diagnose(doctor.Input{Before: before, After: after, Interval: 2 * time.Second, Board: v.board})
	if err != nil {
		return validate.Outcome{}, err
	}
	if b, err := json.Marshal(rep); err == nil {
		v.doctor = b
	}
	var failing, all []string
	for _, i := range rep.Interfaces {
		for _, f := range i.Findings {
			all = append(all, f.ID)
			if (len(s.FailOn) == 0 && f.Severity == doctor.Fail) || slices.Contains(s.FailOn, f.ID) {
				failing = append(failing, f.ID)
			}
		}
	}
	o := validate.Outcome{Pass: len(failing) == 0, Measured: map[string]float64{"findings": float64(len(all)), "failing": float64(len(failing))}}
	o.Summary = fmt.Sprintf("%d findings (%s), %d failing", len(all), orDash(strings.Join(all, " ")), len(failing))
	if !o.Pass {
		o.Reason = "doctor: " + strings.Join(failing, ", ") + " (linerate doctor " + v.iface + " says why and how to fix)"
	}
	return o, nil
}

func (v *validation) tune(ctx context.Context, s *validate.Step) (validate.Outcome, error) {
	var out, errb bytes.Buffer
	if err := run(ctx, []string{"tune", v.iface, "--profile", s.Profile}, nil, &out, &errb); err != nil {
		return validate.Outcome{Summary: "profile " + s.Profile + " not applied (every setting kept as it was)", Reason: strings.TrimSpace(errb.String())}, nil
	}
	if !s.Keep {
		v.cleanup = append(v.cleanup, func() {
			var e bytes.Buffer
			if err := run(context.Background(), []string{"revert", v.iface}, nil, io.Discard, &e); err != nil {
				fmt.Fprintf(v.console, "linerate validate: revert %s: %s\n", v.iface, strings.TrimSpace(e.String()))
			}
		})
	}
	lines := strings.Count(strings.TrimSpace(out.String()), "\n") + 1
	keep := "reverted at the end"
	if s.Keep {
		keep = "kept"
	}
	return validate.Outcome{Pass: true, Summary: fmt.Sprintf("profile %s applied (%s)", s.Profile, keep), Measured: map[string]float64{"output_lines": float64(lines)}}, nil
}

func (v *validation) iperf3(ctx context.Context, s *validate.Step) (validate.Outcome, error) {
	st := v.plan.Station
	args := []string{"iperf3", "-c", st.Address, "-p", strconv.Itoa(st.Port), "-t", strconv.FormatFloat(s.Duration.D().Seconds(), 'f', -1, 64),
		"-P", strconv.Itoa(s.Streams), "-J", "--connect-timeout", "5000"}
	if s.Direction == "down" {
		args = append(args, "-R")
	}
	if s.Protocol == "udp" {
		args = append(args, "-u", "-b", s.Bandwidth)
	}
	var out, errb bytes.Buffer
	var runErr error
	var r iperf3.Report
	// The server takes one test at a time and may still be closing the last one: a busy
	// answer is retried for a few seconds, as an operator would.
	for try := 0; ; try++ {
		out.Reset()
		errb.Reset()
		r = iperf3.Report{}
		runErr = run(ctx, args, nil, &out, &errb)
		json.Unmarshal(out.Bytes(), &r)
		busy := strings.Contains(r.Error+errb.String(), "busy")
		if !busy || try >= 20 || ctx.Err() != nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Error != "" || runErr != nil {
		msg := r.Error
		if msg == "" {
			msg = strings.TrimSpace(errb.String())
		}
		if msg == "" && runErr != nil {
			msg = runErr.Error()
		}
		return validate.Outcome{}, fmt.Errorf("iperf3 to the station %s:%d: %s", st.Address, st.Port, msg)
	}
	sum := r.End.SumReceived
	if sum.Bytes == 0 && r.End.Sum != nil {
		sum = *r.End.Sum
	}
	mbps := sum.BitsPerSecond / 1e6
	o := validate.Outcome{Pass: true, Measured: map[string]float64{"mbps": mbps}, Figures: map[string]float64{s.ID + "_mbps": mbps}}
	o.Summary = fmt.Sprintf("%s %s %.1f Mbit/s (want >= %g)", strings.ToUpper(s.Protocol), s.Direction, mbps, *s.MinMbps)
	if mbps < *s.MinMbps {
		o.Pass, o.Reason = false, fmt.Sprintf("%.1f Mbit/s is below %g", mbps, *s.MinMbps)
	}
	if s.Protocol == "tcp" && r.End.SumSent.Retransmits != nil {
		rt := *r.End.SumSent.Retransmits
		o.Measured["retransmits"] = float64(rt)
		if s.MaxRetransmits != nil {
			o.Summary += fmt.Sprintf(", %d retransmits (want <= %d)", rt, *s.MaxRetransmits)
			if rt > int64(*s.MaxRetransmits) {
				o.Pass, o.Reason = false, fmt.Sprintf("%d retransmits, above %d", rt, *s.MaxRetransmits)
			}
		}
	}
	if s.Protocol == "udp" {
		var loss float64
		for _, si := range []*iperf3.StreamInterval{r.End.Sum, &r.End.SumReceived} {
			if si != nil && si.LostPercent != nil {
				loss = *si.LostPercent
				break
			}
		}
		o.Measured["loss_pct"] = loss
		o.Figures[s.ID+"_loss_pct"] = loss
		o.Summary += fmt.Sprintf(", loss %.3f%% (want <= %g%%)", loss, *s.MaxLossPct)
		if loss > *s.MaxLossPct {
			o.Pass, o.Reason = false, fmt.Sprintf("UDP loss %.3f%% above %g%%", loss, *s.MaxLossPct)
		}
	}
	o.Detail = r.End
	return o, nil
}

// reflectorMAC is the plan's reflector MAC, or the station's from the neighbour table
// (a datagram to its discard port makes the kernel ARP for it).
func (v *validation) reflectorMAC(ctx context.Context) (net.HardwareAddr, error) {
	st := v.plan.Station
	if st.ReflectorMAC != "auto" {
		m, err := net.ParseMAC(st.ReflectorMAC)
		if err != nil || len(m) != 6 {
			return nil, fmt.Errorf("station.reflector_mac %q is not a MAC", st.ReflectorMAC)
		}
		return m, nil
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if c, err := net.Dial("udp4", net.JoinHostPort(st.Address, "9")); err == nil {
			c.Write([]byte{0})
			c.Close()
		}
		b, _ := os.ReadFile(filepath.Join(v.root, "proc/net/arp"))
		for _, l := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(l)
			if len(f) >= 6 && f[0] == st.Address && f[5] == v.iface && f[3] != "00:00:00:00:00:00" {
				return net.ParseMAC(f[3])
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil, fmt.Errorf("the station %s does not answer ARP on %s: no reflector to send frames to", st.Address, v.iface)
}

func (v *validation) frames(ctx context.Context, s *validate.Step) (validate.Outcome, error) {
	peer, err := v.reflectorMAC(ctx)
	if err != nil {
		return validate.Outcome{}, err
	}
	p, err := lookupPort(v.iface, 0)
	if err != nil {
		return validate.Outcome{}, err
	}
	if err := p.checkSizes([]int{s.Size}, false); err != nil {
		return validate.Outcome{}, err
	}
	tx, err := rawsock.OpenTX(p.Name, s.Size-frames.FCS, true)
	if err != nil {
		return validate.Outcome{}, err
	}
	defer tx.Close()
	rx, err := rawsock.OpenRX(p.Name)
	if err != nil {
		return validate.Outcome{}, err
	}
	defer rx.Close()
	e := &engineTrialer{tx: tx, rx: rx, src: p.MAC, dst: peer, kind: "round-trip", settle: 500 * time.Millisecond}
	if s.MinThroughputPct != nil {
		rs, err := rfc2544.Run(ctx, e, rfc2544.Config{Sizes: []int{s.Size}, Trial: s.Duration.D(), Res: 1, Tests: []string{"throughput"}, LinkMbps: p.LinkMbps})
		if err != nil {
			return validate.Outcome{}, err
		}
		pct := rs[0].Throughput.Percent
		o := validate.Outcome{Pass: pct >= *s.MinThroughputPct, Measured: map[string]float64{"throughput_pct": pct, "throughput_fps": rs[0].Throughput.FPS},
			Figures: map[string]float64{s.ID + "_throughput_pct": pct}, Detail: rs[0]}
		o.Summary = fmt.Sprintf("RFC 2544 throughput at %d bytes: %.2f%% of line rate, %.0f fps (want >= %g%%)", s.Size, pct, rs[0].Throughput.FPS, *s.MinThroughputPct)
		if !o.Pass {
			o.Reason = fmt.Sprintf("throughput %.2f%% below %g%%", pct, *s.MinThroughputPct)
		}
		return o, nil
	}
	rate, err := frames.ParseRate(s.Rate)
	if err != nil {
		return validate.Outcome{}, err
	}
	fps, err := rate.FPS(p.LinkMbps, float64(s.Size))
	if err != nil {
		return validate.Outcome{}, err
	}
	r, err := e.Trial(ctx, s.Size, fps, s.Duration.D(), 0)
	if err != nil {
		return validate.Outcome{}, err
	}
	o := validate.Outcome{Pass: true, Measured: map[string]float64{"sent": float64(r.Sent), "received": float64(r.Received), "loss_pct": r.LossPct, "pps": r.PPS},
		Figures: map[string]float64{s.ID + "_loss_pct": r.LossPct}, Detail: r}
	o.Summary = fmt.Sprintf("%d-byte frames at %s through the reflector: %d of %d back, loss %.3f%%", s.Size, s.Rate, r.Received, r.Sent, r.LossPct)
	if s.MaxLossPct != nil {
		o.Summary += fmt.Sprintf(" (want <= %g%%)", *s.MaxLossPct)
		if r.LossPct > *s.MaxLossPct {
			o.Pass, o.Reason = false, fmt.Sprintf("loss %.3f%% above %g%%", r.LossPct, *s.MaxLossPct)
		}
	}
	if s.MaxP99US != nil {
		if r.Latency == nil {
			o.Pass, o.Reason = false, "no frame came back: no latency"
		} else {
			p99 := float64(r.Latency.P99) / 1e3
			o.Measured["p99_us"] = p99
			o.Figures[s.ID+"_p99_us"] = p99
			o.Summary += fmt.Sprintf(", p99 %.0fus round trip (want <= %g)", p99, *s.MaxP99US)
			if p99 > *s.MaxP99US {
				o.Pass, o.Reason = false, fmt.Sprintf("p99 latency %.0fus above %gus", p99, *s.MaxP99US)
			}
		}
	}
	return o, nil
}

func (v *validation) countersStep(ctx context.Context, s *validate.Step) (validate.Outcome, error) {
	now := readErrorCounters(v.root, v.iface)
	if len(now) == 0 {
		return validate.Outcome{}, fmt.Errorf("no statistics for %s", v.iface)
	}
	var rose []string
	measured := map[string]float64{}
	for _, c := range errorCounters {
		d := now[c] - v.counters[c]
		if now[c] < v.counters[c] {
			d = 0
		}
		measured[c] = float64(d)
		if d > 0 && !slices.Contains(s.Ignore, c) {
			rose = append(rose, fmt.Sprintf("%s +%d", c, d))
		}
	}
	o := validate.Outcome{Pass: len(rose) == 0, Measured: measured}
	if o.Pass {
		o.Summary = fmt.Sprintf("no error counter rose during the run (%d watched)", len(now))
	} else {
		o.Summary = "error counters rose: " + strings.Join(rose, ", ")
		o.Reason = o.Summary
	}
	return o, nil
}
