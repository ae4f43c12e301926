package plan

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// SchemaVersion of the JSON report; the station refuses newer ones.
const SchemaVersion = 1

// StepResult is one step's outcome.
type StepResult struct {
	ID       string             `json:"id"`
	Type     string             `json:"type"`
	Pass     bool               `json:"pass"`
	Skipped  bool               `json:"skipped,omitempty"` // could not apply here (a pass): Summary says why
	Summary  string             `json:"summary"`           // measured against threshold, one line
	Reason   string             `json:"reason,omitempty"`
	Measured map[string]float64 `json:"measured,omitempty"`
	Seconds  float64            `json:"seconds"`
	Detail   json.RawMessage    `json:"detail,omitempty"`
	// Attempts are the earlier attempts of a step the plan retries (retry: N), oldest
	// first; the step's own fields are its last attempt's.
	Attempts []StepResult `json:"attempts,omitempty"`
	// Port is the interface the step ran on in a multi-port plan (its id then ends in
	// ".IFACE"); a step of the whole board names its ports joined by "+", or none for
	// every port.
	Port string `json:"port,omitempty"`
	// Limits are the step's measurements judged against its limits (a failed one fails
	// the step; one in its marginal band makes the board marginal).
	Limits []LimitResult `json:"limits,omitempty"`
	// WindowS is how long the step measured: its traffic's windows (an iperf3 test,
	// the frames' trials, a stability window, a sweep's points). SetupS is the rest of
	// its time: connections, settling, reads and tear-down.
	WindowS float64 `json:"window_s"`
	SetupS  float64 `json:"setup_s"`
	// LinkEvents are the events of the step's ports that the run's link watch saw
	// while it ran, each with its time: carrier, speed, duplex and error counters, and
	// those linerate caused itself (said so).
	LinkEvents []string `json:"link_events,omitempty"`
	// Flap is the first flap of the link during the step that linerate did not
	// cause (its time and what happened): a stability fault, which fails the step.
	Flap string `json:"flap,omitempty"`
}

// PortReport is one port's verdict in a multi-port report, and what its steps found
// of it: its MAC and where that came from, its doctor's findings and its figures.
type PortReport struct {
	Interface string   `json:"interface"`
	MAC       string   `json:"mac"`
	Verdict   string   `json:"verdict"`
	Failed    []string `json:"failed"` // the plan's step ids that failed on it (the board's steps included)
	// Marginal are the measurements of its steps in their marginal bands (FigureName).
	Marginal []string `json:"marginal,omitempty"`
	// MACSource says where the port's MAC came from, as its identity step found it.
	MACSource string `json:"mac_source,omitempty"`
	// Figures are the key figures of the port's own steps.
	Figures map[string]float64 `json:"figures,omitempty"`
	// Doctor is the doctor's report of the port (linerate doctor --json).
	Doctor json.RawMessage `json:"doctor,omitempty"`
}

// Concerns says whether the step's result bears on port iface.
func (s *StepResult) Concerns(iface string) bool {
	if s.Port == "" || s.Port == iface {
		return true
	}
	for _, p := range strings.Split(s.Port, "+") {
		if p == iface {
			return true
		}
	}
	return false
}

// Report is what a run produces.
type Report struct {
	Schema  int    `json:"schema_version"`
	ID      string `json:"id"`
	Verdict string `json:"verdict"` // PASS or FAIL
	Board   string `json:"board"`
	Model   string `json:"model,omitempty"`
	Serial  string `json:"serial"`
	// SerialSource says where the serial came from: operator, kernel command line,
	// device tree, eeprom, soc or mac.
	SerialSource string `json:"serial_source,omitempty"`
	MAC          string `json:"mac"`
	// MACSource says where the port's MAC came from, as the identity step found it.
	MACSource string `json:"mac_source,omitempty"`
	Interface string `json:"interface"`
	// Fixture is the test fixture the board ran on, as the board knows it (the plan's,
	// validate --fixture, linerate.fixture=); the station names its own port otherwise.
	Fixture  string `json:"fixture,omitempty"`
	Linerate string `json:"linerate_version"`
	// PlanSHA256 is the hash of the plan's text (Plan.SHA256): which limits judged it.
	PlanSHA256 string `json:"plan_sha256,omitempty"`
	// Build is the tester image the board booted, as the image says of itself.
	Build *Build `json:"build,omitempty"`
	// Kernel is the running kernel's release; UBoot the version of the U-Boot that
	// loaded it (the device tree's /chosen/u-boot,version), "" when none did.
	Kernel string `json:"kernel,omitempty"`
	UBoot  string `json:"uboot,omitempty"`
	// FPGA is the programmable logic's state where an FPGA manager tells it.
	FPGA *FPGA `json:"fpga,omitempty"`
	// Operator is who tested the board: the console prompt's, linerate.operator=,
	// validate --operator, or the plan's operator:.
	Operator string    `json:"operator,omitempty"`
	Started  time.Time `json:"started"`
	Seconds  float64   `json:"seconds"`
	// WindowS is the part of Seconds the steps measured in (a step on every port at
	// once counts its longest window once); the rest is overhead.
	WindowS float64  `json:"window_s"`
	Failed  []string `json:"failed"`
	// Marginal are the measurements in their marginal bands (FigureName), of the steps
	// that passed: a board that passes with one is marginal.
	Marginal []string           `json:"marginal,omitempty"`
	Figures  map[string]float64 `json:"figures"`
	Plan     *Plan              `json:"plan"`
	Steps    []StepResult       `json:"steps"`
	// Ports are the verdicts port by port of a multi-port plan (none for one port).
	Ports  []PortReport    `json:"ports,omitempty"`
	Doctor json.RawMessage `json:"doctor,omitempty"`
	Show   json.RawMessage `json:"show,omitempty"`
}

// Build is what a tester image says of itself (etc/linerate/build.json, written into it
// by make image): its id, the linerate it carries, its board, the hash of the image
// (without this file), and the kernel it was built for with its configuration's hash.
type Build struct {
	ID                 string `json:"id"`
	Linerate           string `json:"linerate,omitempty"`
	Board              string `json:"board,omitempty"`
	ImageSHA256        string `json:"image_sha256,omitempty"`
	Kernel             string `json:"kernel,omitempty"`
	KernelConfigSHA256 string `json:"kernel_config_sha256,omitempty"`
}

// FPGA is an FPGA manager's word on the programmable logic: its name, its state
// (operating, unknown, ...) and the bitstream the device tree loads into it.
type FPGA struct {
	Manager  string `json:"manager"`
	State    string `json:"state"`
	Firmware string `json:"firmware,omitempty"`
}

// Texts are the report's traceability texts by their JSON names, for checks that hold
// each to a line of text.
func (r *Report) Texts() map[string]string {
	t := map[string]string{"plan_sha256": r.PlanSHA256, "kernel": r.Kernel, "uboot": r.UBoot, "operator": r.Operator}
	if b := r.Build; b != nil {
		for k, v := range map[string]string{"id": b.ID, "linerate": b.Linerate, "board": b.Board, "image_sha256": b.ImageSHA256, "kernel": b.Kernel, "kernel_config_sha256": b.KernelConfigSHA256} {
			t["build."+k] = v
		}
	}
	if f := r.FPGA; f != nil {
		t["fpga.manager"], t["fpga.state"], t["fpga.firmware"] = f.Manager, f.State, f.Firmware
	}
	return t
}

// LiveEvent is what a board posts to the station (POST /api/live) as its run starts
// and as each step starts, so the line sees the boards in test, and one that hangs,
// reboots or is unplugged mid-run.
type LiveEvent struct {
	ID      string  `json:"id"` // the run's report id
	Board   string  `json:"board"`
	Serial  string  `json:"serial"`
	MAC     string  `json:"mac"`
	Fixture string  `json:"fixture,omitempty"`
	Plan    string  `json:"plan"`
	Budget  float64 `json:"budget_s"` // past it without a report, the board is lost
	Event   string  `json:"event"`    // start or step
	Step    string  `json:"step,omitempty"`
	Index   int     `json:"step_index,omitempty"` // 1-based
	Steps   int     `json:"steps"`
	// Ports are a multi-port board's ports, each with its MAC and the station address it
	// measures against: the station samples its own port of each at the start.
	Ports []LivePort `json:"ports,omitempty"`
}

// LivePort is one port of a board in test.
type LivePort struct {
	Interface string `json:"interface"`
	MAC       string `json:"mac,omitempty"`
	Station   string `json:"station,omitempty"`
}

// Check is what the station verifies of a report before storing it.
func (r *Report) Check() error {
	switch {
	case r.Schema < 1 || r.Schema > SchemaVersion:
		return fmt.Errorf("schema_version %d: this station reads 1..%d", r.Schema, SchemaVersion)
	case r.ID == "" || len(r.ID) > 200 || strings.ContainsAny(r.ID, "/\\\x00"):
		return fmt.Errorf("id %q: want a non-empty name without slashes", r.ID)
	case r.Verdict != "PASS" && r.Verdict != "FAIL":
		return fmt.Errorf("verdict %q: want PASS or FAIL", r.Verdict)
	case r.Board == "":
		return fmt.Errorf("no board")
	case len(r.Steps) == 0:
		return fmt.Errorf("no steps")
	case r.Started.IsZero():
		return fmt.Errorf("no start time")
	}
	for _, s := range r.Steps {
		if s.ID == "" {
			return fmt.Errorf("a step without an id")
		}
	}
	return nil
}

// VerdictLine is the one line the serial console and the line read.
func (r *Report) VerdictLine() string {
	var b strings.Builder
	fmt.Fprintf(&b, "LINERATE %s", r.Verdict)
	if len(r.Marginal) > 0 {
		fmt.Fprintf(&b, " marginal=%s", strings.Join(r.Marginal, ","))
	}
	fmt.Fprintf(&b, " board=%s serial=%s mac=%s", r.Board, OrDash(r.Serial), OrDash(r.MAC))
	for _, p := range r.Ports {
		fmt.Fprintf(&b, " %s=%s", p.Interface, p.Verdict)
		if len(p.Failed) > 0 {
			fmt.Fprintf(&b, "(%s)", strings.Join(p.Failed, ","))
		}
	}
	keys := make([]string, 0, len(r.Figures))
	for k := range r.Figures {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%s", k, trimFloat(r.Figures[k]))
	}
	var flaps []string
	for _, s := range r.Steps {
		if s.Flap != "" {
			at, _, _ := strings.Cut(s.Flap, " ")
			flaps = append(flaps, s.ID+"@"+at)
		}
	}
	if len(flaps) > 0 {
		fmt.Fprintf(&b, " flaps=%s", strings.Join(flaps, ","))
	}
	failed := "-"
	if len(r.Failed) > 0 {
		failed = strings.Join(r.Failed, ",")
	}
	fmt.Fprintf(&b, " failed=%s elapsed=%.1fs windows=%.1fs overhead=%.1fs", failed, r.Seconds, r.WindowS, max(r.Seconds-r.WindowS, 0))
	return b.String()
}

// OrDash is s for a one-word field of a line: "-" when empty, blanks as '_'.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(s, " ", "_")
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}

// The JUnit document (the schema Jenkins and GitLab read).
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Skipped   int         `xml:"skipped,attr,omitempty"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Hostname  string      `xml:"hostname,attr"`
	Props     []junitProp `xml:"properties>property"`
	Cases     []junitCase `xml:"testcase"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Props     []junitProp   `xml:"properties>property,omitempty"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnit renders the report as JUnit XML: one testsuite, one testcase per step, the
// board's serial in the suite's and every case's name and the run's id in the suite's,
// so the reports of several boards, and of one board tested again, in one CI job do not
// collide.
func (r *Report) JUnit() ([]byte, error) {
	s := junitSuite{Name: "linerate validate " + r.Board + " " + r.Serial + " " + r.ID, Tests: len(r.Steps), Time: fmt.Sprintf("%.3f", r.Seconds),
		Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05"), Hostname: r.Serial,
		Props: []junitProp{{"board", r.Board}, {"serial", r.Serial}, {"mac", r.MAC}, {"interface", r.Interface}, {"verdict", r.Verdict}, {"linerate", r.Linerate}, {"id", r.ID}, {"fixture", r.Fixture},
			{"marginal", strings.Join(r.Marginal, ",")}}}
	for _, st := range r.Steps {
		c := junitCase{Name: st.ID + " [" + r.Serial + "]", Classname: "linerate." + r.Board + "." + st.Type, Time: fmt.Sprintf("%.3f", st.Seconds), SystemOut: st.Summary,
			Props: measurementProps(st)}
		if st.Skipped {
			s.Skipped++
			c.Skipped = &junitSkipped{Message: st.Summary}
		}
		if !st.Pass {
			s.Failures++
			msg := st.Summary
			if st.Reason != "" {
				msg = st.Reason
			}
			c.Failure = &junitFailure{Message: msg, Type: st.Type, Text: st.Summary}
		}
		s.Cases = append(s.Cases, c)
	}
	b, err := xml.MarshalIndent(junitSuites{Suites: []junitSuite{s}}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// measurementProps are a step's measurements as JUnit properties, one each: named as the
// verdict line names figures (FigureName), the value with its unit, and its limit and
// status where it has one ("941.2 Mbit/s, limit 930.. Mbit/s (marginal below 940):
// pass").
func measurementProps(st StepResult) []junitProp {
	limits := map[string]LimitResult{}
	for _, l := range st.Limits {
		limits[l.Measurement] = l
	}
	keys := make([]string, 0, len(st.Measured))
	for k := range st.Measured {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []junitProp
	for _, k := range keys {
		v := strconv.FormatFloat(st.Measured[k], 'g', -1, 64)
		l, limited := limits[k]
		unit := l.Unit
		if !limited {
			_, _, unit = MeasureRange(k)
		}
		if unit != "" {
			v += " " + unit
		}
		if limited {
			v += ", limit " + l.Limit.String() + ": " + l.Status
		}
		out = append(out, junitProp{FigureName(st.ID, k), v})
	}
	return out
}

// MaxLongText bounds a step's summary and reason, and a string in its detail: what a
// station stores and shows in one line of a page.
const MaxLongText = 4096

// OneLine is s as a report's one-line text holds it: control characters (a newline of
// a tool's error, an escape sequence read off a device) as blanks, invalid UTF-8 as
// U+FFFD, at most MaxLongText bytes cut at a character boundary. The station refuses
// text that is not so.
func OneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) > MaxLongText {
		cut := MaxLongText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// IsControl is a character a report's text does not hold: C0 and C1 controls, DEL and
// the Unicode line and paragraph separators (each would forge a line of a log).
func IsControl(r rune) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0x2028 || r == 0x2029
}

// Tidy makes every step's text (summary, reason, type, port, its attempts') one line
// the station takes (OneLine).
func (r *Report) Tidy() {
	var tidy func(s *StepResult)
	tidy = func(s *StepResult) {
		s.Summary, s.Reason, s.Type, s.Port = OneLine(s.Summary), OneLine(s.Reason), OneLine(s.Type), OneLine(s.Port)
		for i := range s.Attempts {
			tidy(&s.Attempts[i])
		}
	}
	for i := range r.Steps {
		tidy(&r.Steps[i])
	}
}
